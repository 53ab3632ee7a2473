"""Terminal output: tables, truncation, colours and small text helpers."""

from __future__ import annotations

import shutil
import unicodedata
from dataclasses import dataclass

DEFAULT_WIDTH = 100
MIN_COLUMN = 4
ELLIPSIS = "…"

COLORS = {
    "red": "31", "green": "32", "yellow": "33", "blue": "34",
    "magenta": "35", "cyan": "36", "grey": "90", "bold": "1",
}


def terminal_width(configured: int = 0) -> int:
    """The configured width, or the terminal's, or :data:`DEFAULT_WIDTH`."""
    if configured and configured > 0:
        return configured
    return shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns


def display_width(text: str) -> int:
    """Width of ``text`` in terminal cells (wide East Asian characters count 2)."""
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def truncate(text: str, width: int) -> str:
    """Shorten ``text`` to ``width`` cells, ending with an ellipsis if cut."""
    if width <= 0:
        return ""
    if display_width(text) <= width:
        return text
    result = []
    used = 0
    for char in text:
        char_width = display_width(char)
        if used + char_width > width - 1:
            break
        result.append(char)
        used += char_width
    return "".join(result) + ELLIPSIS


def pad(text: str, width: int, align: str = "left") -> str:
    gap = max(0, width - display_width(text))
    if align == "right":
        return " " * gap + text
    if align == "center":
        left = gap // 2
        return " " * left + text + " " * (gap - left)
    return text + " " * gap


def colorize(text: str, color: str | None, enabled: bool) -> str:
    if not enabled or not color:
        return text
    return f"\x1b[{COLORS[color]}m{text}\x1b[0m"


@dataclass
class Column:
    """A table column.  ``flex`` columns shrink first when the table is too wide."""

    header: str
    align: str = "left"
    flex: bool = False


def _fit_widths(natural: list[int], columns: list[Column], available: int) -> list[int]:
    widths = list(natural)
    total = sum(widths) + 2 * (len(widths) - 1)
    excess = total - available
    if excess <= 0:
        return widths
    flexible = [i for i, column in enumerate(columns) if column.flex]
    if not flexible:
        flexible = [max(range(len(widths)), key=lambda i: widths[i])]
    for index in sorted(flexible, key=lambda i: -widths[i]):
        if excess <= 0:
            break
        room = widths[index] - max(MIN_COLUMN, display_width(columns[index].header))
        cut = min(room, excess)
        if cut > 0:
            widths[index] -= cut
            excess -= cut
    return widths


def render_table(columns: list[Column], rows: list[list[str]], width: int = 0,
                 header: bool = True) -> str:
    """Lay out ``rows`` under ``columns`` and return the text (no trailing newline).

    Cells must be strings.  When the table is wider than ``width`` (0 means
    the terminal), flexible columns are truncated.
    """
    if not columns:
        return ""
    for row in rows:
        if len(row) != len(columns):
            raise ValueError(f"row has {len(row)} cells, table has {len(columns)} columns")
    natural = [display_width(column.header) if header else 0 for column in columns]
    for row in rows:
        for index, cell in enumerate(row):
            natural[index] = max(natural[index], display_width(cell))
    widths = _fit_widths(natural, columns, terminal_width(width))
    lines = []
    if header:
        lines.append("  ".join(pad(c.header, w, c.align) for c, w in zip(columns, widths)).rstrip())
        lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        cells = [pad(truncate(cell, w), w, c.align) for cell, c, w in zip(row, columns, widths)]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def format_clock(seconds: int) -> str:
    """Hours and minutes as ``H:MM`` (``5400`` -> ``1:30``); used in reports."""
    hours, rest = divmod(seconds, 3600)
    return f"{hours:d}:{rest // 60:02d}"


def bar(value: float, maximum: float, width: int = 20, char: str = "#") -> str:
    """A proportional bar for charts in ``stats`` and ``report``."""
    if maximum <= 0 or value <= 0:
        return ""
    length = max(1, round(width * value / maximum))
    return char * min(length, width)


def format_tags(tags: list[str]) -> str:
    return " ".join(f"+{tag}" for tag in tags)


def plural(count: int, word: str, plural_form: str | None = None) -> str:
    """``plural(1, "task")`` -> ``"1 task"``; ``plural(3, "task")`` -> ``"3 tasks"``."""
    if count == 1:
        return f"{count} {word}"
    return f"{count} {plural_form or word + 's'}"


def indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line if line else line for line in text.splitlines())
