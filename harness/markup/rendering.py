"""How code is shown to a model: one format for file reads and injected snippets.

An excerpt is a header line followed by numbered lines::

    == calc/ops.py (lines 10-14 of 120) ==
       10| def divide(a, b):
       11|     return a / b

`parse_excerpts` recovers them from any message content, so the simulated model sees a file
read and an injected snippet alike. A long output cut in the middle (`[… N characters omitted …]`)
still shows its numbered lines on both sides of the marker: they come back as two excerpts of the
same file, with the lines that the cut may have broken (the last before the marker, the first after
it) left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ctxbench.harness.markup.placeholders import is_omission

__all__ = ["Excerpt", "render_excerpt", "excerpt_header", "numbered_line", "is_numbered_line", "header_path",
           "parse_excerpts"]

_HEADER = re.compile(r"^== (?P<path>\S.*?) \(lines (?P<start>\d+)-(?P<end>\d+) of (?P<total>\d+)\) ==$")
_LINE = re.compile(r"^ *(?P<n>\d+)\| ?(?P<text>.*)$")


@dataclass(frozen=True)
class Excerpt:
    """A run of consecutive lines of one file: a file read, an injected snippet, a chunk of a file.

    A chunk of a file cut into snippets (`ctxbench.strategies.chunking`) also names the definition
    it holds; the chunks of one definition longer than a snippet share a `group`.
    """

    path: str
    start: int
    """First line, 1-based."""
    lines: tuple[str, ...]
    total: int
    """Lines in the file."""
    name: str = ""
    """Qualified name of the definition (empty for module-level code, and for excerpts read back)."""
    group: str = ""
    """Id shared by the chunks of one definition longer than a snippet (empty otherwise)."""

    @property
    def end(self) -> int:
        return self.start + len(self.lines) - 1

    @property
    def id(self) -> str:
        return f"{self.path}:{self.start}-{self.end}"


def render_excerpt(path: str, lines: list[str] | tuple[str, ...], start: int, total: int) -> str:
    """Render `lines` (without newlines) of `path`, the first being line `start` (1-based)."""
    body = "\n".join(numbered_line(n, text) for n, text in enumerate(lines, start))
    return f"{excerpt_header(path, start, start + len(lines) - 1, total)}\n{body}"


def excerpt_header(path: str, start: int, end: int, total: int) -> str:
    """An excerpt's header line: `== path (lines start-end of total) ==`."""
    return f"== {path} (lines {start}-{end} of {total}) =="


def numbered_line(n: int, text: str) -> str:
    """Line `n` of an excerpt: its number right-aligned, a bar, the text."""
    return f"{n:>6}| {text}"


def is_numbered_line(line: str) -> bool:
    """`line` reads as a numbered line of an excerpt."""
    return _LINE.match(line) is not None


def header_path(line: str) -> str | None:
    """The path an excerpt's header line names, or None when `line` is no header."""
    header = _HEADER.match(line)
    return header["path"] if header else None


def parse_excerpts(content: str) -> list[Excerpt]:
    """Every excerpt in `content`, numbered lines kept only while they run consecutively.

    At an omission marker the excerpt so far ends without its last line and the excerpt goes on,
    after the marker, from the second numbered line on (both edge lines may be cut mid-line).
    """
    out: list[Excerpt] = []
    path = None
    start = total = 0
    lines: list[str] = []
    resume = 0
    """After an omission marker: 2 = skip the next line (cut), 1 = start again at any line number."""
    raws = content.split("\n")
    for k, raw in enumerate(raws):
        if raw == "" and k + 1 < len(raws) and is_omission(raws[k + 1]):
            continue  # the marker's own line break, after a head that ended at a line's end
        header = _HEADER.match(raw)
        if header:
            if path is not None and lines:
                out.append(Excerpt(path, start, tuple(lines), total))
            path, start, total, lines, resume = header["path"], int(header["start"]), int(header["total"]), [], 0
            continue
        if path is None:
            continue
        if is_omission(raw):
            if len(lines) > 1:
                out.append(Excerpt(path, start, tuple(lines[:-1]), total))
            lines, resume = [], 2
            continue
        if resume == 2:
            resume = 1
            continue
        m = _LINE.match(raw)
        if m and resume == 1:
            start, lines, resume = int(m["n"]), [m["text"]], 0
        elif m and int(m["n"]) == start + len(lines):
            lines.append(m["text"])
        elif lines:
            out.append(Excerpt(path, start, tuple(lines), total))
            path, lines = None, []
        elif resume == 1:
            path, resume = None, 0
    if path is not None and lines:
        out.append(Excerpt(path, start, tuple(lines), total))
    return out
