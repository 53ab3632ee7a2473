"""Spreadsheet number-format codes, as used by ``TEXT(value, format)``.

Supported codes
---------------
* digit placeholders ``0`` (always shown), ``#`` (shown when significant) and
  ``?`` (space when not significant), decimal point ``.``
* thousands grouping ``,`` between placeholders (``#,##0``); commas right
  after the last integer placeholder scale by 1000 each (``0.0,`` -> thousands)
* ``%`` multiplies by 100, scientific ``0.00E+00``
* literal text in double quotes, ``\\x`` escapes, and the characters
  ``$ - + ( ) : / space`` as literals
* up to four sections ``positive;negative;zero;text``
* date/time codes ``yyyy yy m mm mmm mmmm d dd ddd dddd h hh mm ss AM/PM``
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from .datetime_util import from_serial
from .errors import ArgumentError

_DATE_CODES = re.compile(r"yyyy|yy|mmmmm|mmmm|mmm|mm|m|dddd|ddd|dd|d|hh|h|ss|s|AM/PM|am/pm|A/P", re.I)
_DATE_LETTERS = set("ymdhs")
_LITERAL_CHARS = set("$-+():/ !^&'~{}<>=")


def _round_half_up(value: float, decimals: int) -> Decimal:
    """Round like a spreadsheet (half away from zero) without float artefacts."""
    quantum = Decimal(1).scaleb(-decimals)
    return Decimal(repr(value)).quantize(quantum, rounding=ROUND_HALF_UP)


def split_sections(pattern: str) -> list[str]:
    """Split a format code on ``;`` outside quotes and escapes."""
    sections, current, in_quote, i = [], [], False, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == '"':
            in_quote = not in_quote
        elif ch == "\\" and not in_quote and i + 1 < len(pattern):
            current.append(pattern[i:i + 2])
            i += 2
            continue
        elif ch == ";" and not in_quote:
            sections.append("".join(current))
            current = []
            i += 1
            continue
        current.append(ch)
        i += 1
    sections.append("".join(current))
    if len(sections) > 4:
        raise ArgumentError("A format code can have at most four sections")
    return sections


def _tokens(section: str) -> list[tuple[str, str]]:
    """Split a section into ('lit', text) and ('code', text) pieces."""
    out: list[tuple[str, str]] = []
    i = 0
    while i < len(section):
        ch = section[i]
        if ch == '"':
            end = section.find('"', i + 1)
            if end == -1:
                raise ArgumentError("Unterminated quoted text in format code")
            out.append(("lit", section[i + 1:end]))
            i = end + 1
        elif ch == "\\" and i + 1 < len(section):
            out.append(("lit", section[i + 1]))
            i += 2
        elif ch in "Ee" and section[i + 1:i + 2] in ("+", "-"):
            out.extend([("code", ch), ("code", section[i + 1])])
            i += 2
        elif ch in _LITERAL_CHARS:
            out.append(("lit", ch))
            i += 1
        else:
            out.append(("code", ch))
            i += 1
    return out


def is_date_format(section: str) -> bool:
    codes = "".join(text for kind, text in _tokens(section) if kind == "code")
    return any(c in _DATE_LETTERS for c in codes.lower()) and not re.search(r"[0#?]", codes)


@dataclass
class NumberSpec:
    prefix: str
    suffix: str
    int_zeros: int
    grouping: bool
    decimals_min: int
    decimals_max: int
    percent: int
    scale_thousands: int
    exponent_digits: int | None
    exponent_sign: str


_NUMBER_CORE = re.compile(r"[#0?,]*(?:\.[#0?]*)?(?:[Ee][+-][0#]+)?")


def parse_number_spec(section: str) -> NumberSpec:
    pieces = _tokens(section)
    codes = "".join(text if kind == "code" else "\0" for kind, text in pieces)
    start = next((i for i, c in enumerate(codes) if c in "#0?."), None)
    if start is None:
        text = "".join(t for _, t in pieces)
        return NumberSpec(text.replace("%", ""), "", 0, False, 0, 0, text.count("%"), 0, None, "")
    match = _NUMBER_CORE.match(codes, start)
    core = match.group(0)
    end = match.end()

    def literal(a: int, b: int) -> str:
        # ``codes`` has exactly one character per piece, so indexes line up.
        return "".join(text for i, (_, text) in enumerate(pieces) if a <= i < b)

    prefix = literal(0, start)
    suffix = literal(end, len(codes))
    mantissa, exponent_sign, exponent = _split_exponent(core)
    int_part, _, frac_part = mantissa.partition(".")
    stripped = int_part.rstrip(",")
    scale = len(int_part) - len(stripped)
    return NumberSpec(
        prefix=prefix.replace("%", ""),
        suffix=suffix.replace("%", ""),
        int_zeros=stripped.count("0"),
        grouping="," in stripped,
        decimals_min=frac_part.count("0"),
        decimals_max=len(frac_part.replace(",", "")),
        percent=(prefix + suffix).count("%"),
        scale_thousands=scale,
        exponent_digits=len(exponent) if exponent else None,
        exponent_sign=exponent_sign,
    )


def _split_exponent(core: str) -> tuple[str, str, str]:
    m = re.search(r"[Ee]([+-])([0#]+)$", core)
    if not m:
        return core, "", ""
    return core[:m.start()], m.group(1), m.group(2)


def _group_thousands(digits: str) -> str:
    groups = []
    while len(digits) > 3:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    return ",".join([digits] + groups)


def _format_fixed(value: float, spec: NumberSpec) -> str:
    rounded = _round_half_up(value, spec.decimals_max)
    text = f"{rounded:f}"
    int_part, _, frac_part = text.partition(".")
    if spec.grouping:
        int_part = _group_thousands(int_part)
    sign = ""
    if int_part.startswith("-"):
        sign, int_part = "-", int_part[1:]
    if int_part.lstrip(",") in ("", "0") and spec.int_zeros == 0:
        int_part = ""
    elif len(int_part) < spec.int_zeros:
        int_part = int_part.rjust(spec.int_zeros, "0")
    frac_part = frac_part[: spec.decimals_max]
    while len(frac_part) > spec.decimals_min and frac_part.endswith("0"):
        frac_part = frac_part[:-1]
    if sign and not int_part.strip("0,") and not frac_part.strip("0"):
        sign = ""
    # Like spreadsheets, "0.##" keeps the decimal point even when no digits follow.
    body = f"{int_part}.{frac_part}" if spec.decimals_max else int_part
    return sign + body


def _format_scientific(value: float, spec: NumberSpec) -> str:
    if value == 0:
        exponent = 0
        mantissa = 0.0
    else:
        exponent = _decimal_exponent(value)
        mantissa = value / (10 ** exponent)
    rounded = _round_half_up(mantissa, spec.decimals_max)
    if abs(rounded) >= 10:
        exponent += 1
        rounded = _round_half_up(mantissa / 10, spec.decimals_max)
    body = f"{rounded:f}"
    exp_sign = "-" if exponent < 0 else ("+" if spec.exponent_sign == "+" else "")
    return f"{body}E{exp_sign}{str(abs(exponent)).rjust(spec.exponent_digits or 1, '0')}"


def _decimal_exponent(value: float) -> int:
    return Decimal(repr(abs(value))).adjusted()


def format_number(value: float, pattern: str) -> str:
    """Format a number with a spreadsheet format code.

    >>> format_number(1234.5, "#,##0.00")
    '1,234.50'
    >>> format_number(0.256, "0.0%")
    '25.6%'
    """
    sections = split_sections(pattern)
    section = sections[0]
    if value < 0 and len(sections) >= 2 and sections[1]:
        # An explicit negative section supplies its own sign (or parentheses).
        section, value = sections[1], -value
    elif value == 0 and len(sections) >= 3 and sections[2]:
        section = sections[2]
    if section.strip().upper() == "GENERAL" or section == "":
        return _general(value)
    if is_date_format(section):
        return format_date(from_serial(value), section)
    spec = parse_number_spec(section)
    scaled = value * (100 ** spec.percent) / (1000 ** spec.scale_thousands)
    if spec.exponent_digits is not None:
        body = _format_scientific(scaled, spec)
    elif spec.int_zeros == 0 and spec.decimals_max == 0 and not spec.grouping and not re.search(
        r"[#0?]", section
    ):
        body = ""
    else:
        body = _format_fixed(scaled, spec)
    return f"{spec.prefix}{body}{spec.suffix}" + "%" * spec.percent


def _general(value: float) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


def format_text(value: str, pattern: str) -> str:
    sections = split_sections(pattern)
    if len(sections) < 4:
        if "@" in sections[0]:
            section = sections[0]
        else:
            return value
    else:
        section = sections[3]
    return "".join(value if (k == "code" and t == "@") else t for k, t in _tokens(section))


_DATE_TOKEN = re.compile(
    r'"[^"]*"|\\.|AM/PM|A/P|yyyy|yy|mmmmm|mmmm|mmm|mm|m|dddd|ddd|dd|d|hh|h|ss|s|.', re.I | re.S
)


def _date_tokens(section: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    for m in _DATE_TOKEN.finditer(section):
        text = m.group(0)
        if text.startswith('"'):
            tokens.append(("lit", text[1:-1]))
        elif text.startswith("\\"):
            tokens.append(("lit", text[1:]))
        elif _DATE_CODES.fullmatch(text):
            tokens.append(("code", text))
        else:
            tokens.append(("lit", text))
    return tokens


def format_date(value: dt.date, section: str) -> str:
    """Format a date or date-time with ``yyyy-mm-dd``-style codes."""
    if not isinstance(value, dt.datetime):
        value = dt.datetime(value.year, value.month, value.day)
    tokens = _date_tokens(section)
    has_ampm = any(k == "code" and t.lower() in ("am/pm", "a/p") for k, t in tokens)
    out: list[str] = []
    for index, (kind, text) in enumerate(tokens):
        if kind == "lit":
            out.append(text)
            continue
        lower = text.lower()
        if lower in ("m", "mm") and _is_minute(tokens, index):
            out.append(f"{value.minute:0{len(lower)}d}")
        elif lower == "yyyy":
            out.append(f"{value.year:04d}")
        elif lower == "yy":
            out.append(f"{value.year % 100:02d}")
        elif lower == "mmmmm":
            out.append(value.strftime("%B")[0])
        elif lower == "mmmm":
            out.append(value.strftime("%B"))
        elif lower == "mmm":
            out.append(value.strftime("%b"))
        elif lower == "mm":
            out.append(f"{value.month:02d}")
        elif lower == "m":
            out.append(str(value.month))
        elif lower == "dddd":
            out.append(value.strftime("%A"))
        elif lower == "ddd":
            out.append(value.strftime("%a"))
        elif lower == "dd":
            out.append(f"{value.day:02d}")
        elif lower == "d":
            out.append(str(value.day))
        elif lower in ("hh", "h"):
            hour = value.hour
            if has_ampm:
                hour = hour % 12 or 12
            out.append(f"{hour:02d}" if lower == "hh" else str(hour))
        elif lower in ("ss", "s"):
            out.append(f"{value.second:02d}" if lower == "ss" else str(value.second))
        elif lower == "am/pm":
            out.append("AM" if value.hour < 12 else "PM")
        elif lower == "a/p":
            out.append("A" if value.hour < 12 else "P")
    return "".join(out)


def _is_minute(tokens: list[tuple[str, str]], index: int) -> bool:
    """``m``/``mm`` mean minutes right after an hour code or right before seconds."""
    for j in range(index - 1, -1, -1):
        kind, text = tokens[j]
        if kind == "code":
            if text.lower() in ("h", "hh"):
                return True
            break
    for j in range(index + 1, len(tokens)):
        kind, text = tokens[j]
        if kind == "code":
            return text.lower() in ("s", "ss")
    return False
