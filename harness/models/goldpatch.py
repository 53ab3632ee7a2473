"""Parse a unified diff (the gold patch) into hunks the simulator can recognise and write."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Hunk", "parse_patch", "patch_files"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


@dataclass(frozen=True)
class Hunk:
    path: str
    old_start: int
    old_lines: tuple[str, ...]
    """Pre-image: context and removed lines, in order."""
    new_lines: tuple[str, ...]
    """Post-image: context and added lines, in order."""
    new_file: bool = False

    @property
    def id(self) -> str:
        return f"{self.path}@{self.old_start}"

    @property
    def old_text(self) -> str:
        return "\n".join(self.old_lines)

    @property
    def new_text(self) -> str:
        return "\n".join(self.new_lines)


def parse_patch(text: str) -> list[Hunk]:
    hunks: list[Hunk] = []
    path = None
    new_file = False
    old: list[str] = []
    new: list[str] = []
    start = 0
    in_hunk = False

    def close() -> None:
        nonlocal in_hunk
        if in_hunk and path is not None:
            hunks.append(Hunk(path, start, *_trim(tuple(old), tuple(new)), new_file))
        in_hunk = False

    for line in text.split("\n"):
        if line.startswith("diff --git"):
            close()
            path, new_file = None, False
        elif line.startswith("new file mode"):
            new_file = True
        elif line.startswith("+++ "):
            close()
            target = line[4:].strip()
            path = target[2:] if target.startswith("b/") else target
        elif line.startswith("--- "):
            close()
        elif (m := _HUNK.match(line)):
            close()
            start, old, new, in_hunk = int(m.group(1)), [], [], True
        elif in_hunk:
            if line.startswith("\\"):
                continue
            tag, body = line[:1], line[1:]
            if tag == " " or line == "":
                old.append(body)
                new.append(body)
            elif tag == "-":
                old.append(body)
            elif tag == "+":
                new.append(body)
    close()
    return hunks


def _trim(old: tuple[str, ...], new: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Drop the trailing blank context that the patch text's final newline produces."""
    while old and new and old[-1] == "" and new[-1] == "" and len(old) > 1 and len(new) > 1:
        old, new = old[:-1], new[:-1]
    return old, new


def patch_files(text: str) -> list[str]:
    return sorted({h.path for h in parse_patch(text)})
