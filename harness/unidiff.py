"""The one parser of unified diffs (`git diff` output): which files a patch touches, and its hunks.

The workspace uses the paths (files a patch creates, the files a test patch resets), the SWE-bench
loader the test files a test patch changes, and the simulator the hunks of a gold patch.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["header_path", "patch_paths", "Hunk", "parse_patch"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def header_path(text: str, prefix: str) -> str | None:
    """The path of a `--- a/...` or `+++ b/...` line (after its 4 characters) without `prefix`;
    None for /dev/null. A quoted path (git quotes names with unusual bytes) is unquoted."""
    text = text.split("\t", 1)[0].rstrip()
    if text == "/dev/null":
        return None
    if text.startswith('"') and text.endswith('"'):
        text = text[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1").decode()
    return text[len(prefix):] if text.startswith(prefix) else text


def patch_paths(patch: str) -> list[tuple[str | None, str | None]]:
    """(old path, new path) of each file a `git diff` patch touches; None for /dev/null."""
    out = []
    old = new = None
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            if old or new:
                out.append((old, new))
            old = new = None
        elif line.startswith("--- ") and old is None:
            old = header_path(line[4:], "a/")
        elif line.startswith("+++ ") and new is None:
            new = header_path(line[4:], "b/")
        elif line.startswith(("rename from ", "copy from ")):
            old = line.split(" from ", 1)[1]
        elif line.startswith(("rename to ", "copy to ")):
            new = line.split(" to ", 1)[1]
    if old or new:
        out.append((old, new))
    return out


@dataclass(frozen=True)
class Hunk:
    """One hunk of a patch: where it applies, the lines it expects and the lines it writes."""

    path: str
    """The file the hunk changes (for a deleted file, the file it deletes)."""
    old_start: int
    """First line of the pre-image, 1-based."""
    old_lines: tuple[str, ...]
    """Pre-image: context and removed lines, in order."""
    new_lines: tuple[str, ...]
    """Post-image: context and added lines, in order."""
    new_file: bool = False
    """The patch creates the file."""

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
    """The hunks of a patch, in order."""
    hunks: list[Hunk] = []
    path = old_path = None
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
            path, old_path, new_file = None, None, False
        elif line.startswith("new file mode"):
            new_file = True
        elif line.startswith("+++ "):
            close()
            path = header_path(line[4:].lstrip(), "b/") or old_path
        elif line.startswith("--- "):
            close()
            old_path = header_path(line[4:].lstrip(), "a/")
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
