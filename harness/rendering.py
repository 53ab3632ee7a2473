"""How code is shown to a model: one format for file reads and injected snippets.

An excerpt is a header line followed by numbered lines::

    == calc/ops.py (lines 10-14 of 120) ==
       10| def divide(a, b):
       11|     return a / b

`parse_excerpts` recovers them from any message content, so the simulated model sees a file
read and an injected snippet alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Excerpt", "render_excerpt", "parse_excerpts"]

_HEADER = re.compile(r"^== (?P<path>\S.*?) \(lines (?P<start>\d+)-(?P<end>\d+) of (?P<total>\d+)\) ==$")
_LINE = re.compile(r"^ *(?P<n>\d+)\| ?(?P<text>.*)$")


@dataclass(frozen=True)
class Excerpt:
    path: str
    start: int
    lines: tuple[str, ...]
    total: int

    @property
    def end(self) -> int:
        return self.start + len(self.lines) - 1


def render_excerpt(path: str, lines: list[str] | tuple[str, ...], start: int, total: int) -> str:
    """Render `lines` (without newlines) of `path`, the first being line `start` (1-based)."""
    end = start + len(lines) - 1
    body = "\n".join(f"{n:>6}| {text}" for n, text in enumerate(lines, start))
    return f"== {path} (lines {start}-{end} of {total}) ==\n{body}"


def parse_excerpts(content: str) -> list[Excerpt]:
    """Every excerpt in `content`, numbered lines kept only while they run consecutively."""
    out: list[Excerpt] = []
    path = None
    start = total = 0
    lines: list[str] = []
    for raw in content.split("\n"):
        header = _HEADER.match(raw)
        if header:
            if path is not None and lines:
                out.append(Excerpt(path, start, tuple(lines), total))
            path, start, total, lines = header["path"], int(header["start"]), int(header["total"]), []
            continue
        if path is None:
            continue
        m = _LINE.match(raw)
        if m and int(m["n"]) == start + len(lines):
            lines.append(m["text"])
        elif lines:
            out.append(Excerpt(path, start, tuple(lines), total))
            path, lines = None, []
    if path is not None and lines:
        out.append(Excerpt(path, start, tuple(lines), total))
    return out
