"""Human-readable rendering of results (REPL output, ``Calculator.format``).

This is *not* the ``TEXT()`` formatter (see :mod:`exprcalc.formatting`): it
renders any value - lists, dates, quantities, errors - in a compact,
locale-aware way, without format codes.
"""

from __future__ import annotations

import datetime as dt
import math

from .errors import ExprError
from .units import Quantity


def _group_digits(int_digits: str, separator: str) -> str:
    """Insert ``separator`` every three digits of an unsigned digit string."""
    head = len(int_digits) % 3 or 3
    parts = [int_digits[:head]]
    parts += [int_digits[i:i + 3] for i in range(head, len(int_digits), 3)]
    return separator.join(parts)


def format_number(
    value: float,
    decimal_separator: str = ".",
    thousands: bool = False,
    precision: int = 10,
) -> str:
    """Render a number with up to ``precision`` significant digits.

    >>> format_number(1234567.891, thousands=True)
    '1,234,567.891'
    >>> format_number(0.1 + 0.2)
    '0.3'
    """
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return "#NUM!"
    if isinstance(value, int):
        text = str(abs(value))
    else:
        text = f"{abs(value):.{precision}g}"
        if "e" in text:
            mantissa, exp = text.split("e")
            sign = "-" if value < 0 else ""
            return f"{sign}{mantissa.replace('.', decimal_separator)}E{int(exp):+03d}"
    int_part, _, frac_part = text.partition(".")
    group_sep = "." if decimal_separator == "," else ","
    if thousands:
        int_part = _group_digits(int_part, group_sep)
    sign = "-" if value < 0 and (int_part.strip("0") or frac_part.strip("0")) else ""
    return sign + int_part + (decimal_separator + frac_part if frac_part else "")


def format_value(value: object, decimal_separator: str = ".", thousands: bool = False) -> str:
    """Render any exprcalc value for display."""
    if value is None:
        return ""
    if isinstance(value, ExprError):
        return value.code
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, (int, float)):
        return format_number(value, decimal_separator, thousands)
    if isinstance(value, str):
        return value
    if isinstance(value, dt.datetime):
        if value.hour == value.minute == value.second == 0:
            return value.date().isoformat()
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, Quantity):
        return f"{format_number(value.value, decimal_separator, thousands)} {value.unit.symbol}"
    if isinstance(value, list):
        sep = "; " if decimal_separator == "," else ", "
        inner = sep.join(_format_item(v, decimal_separator) for v in value)
        return "{" + inner + "}"
    return str(value)


def _format_item(value: object, decimal_separator: str) -> str:
    if isinstance(value, str):
        return '"' + value.replace('"', '""') + '"'
    return format_value(value, decimal_separator)


def format_table(rows: list[list[object]], decimal_separator: str = ".") -> str:
    """Render a 2-D list as an aligned text table (numbers right-aligned)."""
    if not rows:
        return ""
    cells = [[format_value(v, decimal_separator) for v in row] for row in rows]
    width = max(len(r) for r in cells)
    cells = [r + [""] * (width - len(r)) for r in cells]
    widths = [max(len(r[i]) for r in cells) for i in range(width)]
    lines = []
    for raw, row in zip(rows, cells):
        parts = []
        for i, text in enumerate(row):
            value = raw[i] if i < len(raw) else None
            numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
            parts.append(text.rjust(widths[i]) if numeric else text.ljust(widths[i]))
        lines.append("  ".join(parts).rstrip())
    return "\n".join(lines)
