"""Durations as typed by users (``1h30m``, ``90m``, ``1.5h``, ``1:30``).

Internally every duration is an ``int`` number of seconds.  Time entries,
estimates and report totals are all stored and summed in seconds; only the
presentation layer turns them back into text.
"""

from __future__ import annotations

import math
import re

UNIT_SECONDS = {
    "w": 7 * 24 * 3600,
    "d": 24 * 3600,
    "h": 3600,
    "m": 60,
    "s": 1,
}

_UNIT_ALIASES = {
    "w": "w", "wk": "w", "wks": "w", "week": "w", "weeks": "w",
    "d": "d", "day": "d", "days": "d",
    "h": "h", "hr": "h", "hrs": "h", "hour": "h", "hours": "h",
    "m": "m", "min": "m", "mins": "m", "minute": "m", "minutes": "m",
    "s": "s", "sec": "s", "secs": "s", "second": "s", "seconds": "s",
}

_TOKEN_RE = re.compile(r"\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-z]+)\s*")
_CLOCK_RE = re.compile(r"^(\d+):([0-5]\d)(?::([0-5]\d))?$")


class DurationError(ValueError):
    """Raised for text that is not a duration."""


def parse_duration(text: str) -> int:
    """Parse a duration and return it in whole seconds.

    Accepted forms:

    * unit strings, combinable: ``2h``, ``1h30m``, ``1h 30m``, ``45min``,
      ``1.5h``, ``2d4h``, ``1w``
    * clock notation: ``1:30`` (hours:minutes), ``0:45:30`` (h:m:s)
    * a bare number, which means minutes: ``25``

    Fractions are allowed on any unit; the result is rounded to the nearest
    second.
    """
    if text is None:
        raise DurationError("missing duration")
    raw = text
    text = text.strip().lower()
    if not text:
        raise DurationError("empty duration")

    match = _CLOCK_RE.match(text)
    if match:
        hours, minutes, seconds = match.groups()
        return int(hours) * 3600 + int(minutes) * 60 + int(seconds or 0)

    if text.isdigit():
        return int(text) * 60

    total = 0
    position = 0
    seen = set()
    for match in _TOKEN_RE.finditer(text):
        if match.start() != position:
            break
        number, unit_text = match.groups()
        unit = _UNIT_ALIASES.get(unit_text)
        if unit is None:
            raise DurationError(f"unknown unit {unit_text!r} in duration {raw!r}")
        if unit in seen:
            raise DurationError(f"unit {unit!r} given twice in duration {raw!r}")
        seen.add(unit)
        value = float(number) if "." in number else int(number)
        total += value * UNIT_SECONDS[unit]
        position = match.end()
    if position != len(text) or not seen:
        raise DurationError(f"could not understand duration {raw!r}")
    return total


def format_duration(seconds: float | None, style: str = "short") -> str:
    """Render seconds for humans.

    ``short`` (default): ``1h30m``, ``45m``, ``2d3h``; ``long``: ``1 hour 30
    minutes``; ``decimal``: hours with two decimals (``1.50``).
    Seconds are dropped from ``short`` and ``long`` output unless the whole
    duration is under a minute.
    """
    if seconds is None:
        return "-"
    seconds = int(round(seconds))
    negative = seconds < 0
    seconds = abs(seconds)
    if style == "decimal":
        text = f"{seconds / 3600:.2f}"
    elif style in ("short", "long"):
        text = _format_parts(seconds, style == "long")
    else:
        raise ValueError(f"unknown duration style: {style!r}")
    return f"-{text}" if negative else text


def _format_parts(seconds: int, long: bool) -> str:
    if seconds < 60:
        return f"{seconds} seconds" if long else f"{seconds}s"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes = rest // 60
    parts = []
    for value, short_unit, long_unit in ((days, "d", "day"), (hours, "h", "hour"), (minutes, "m", "minute")):
        if value:
            if long:
                parts.append(f"{value} {long_unit}{'' if value == 1 else 's'}")
            else:
                parts.append(f"{value}{short_unit}")
    return " ".join(parts) if long else "".join(parts)


def round_duration(seconds: int, increment: int, mode: str = "nearest") -> int:
    """Round ``seconds`` to a multiple of ``increment`` seconds.

    ``mode`` is ``nearest`` (halves round up, as timesheets expect), ``up``
    or ``down``.  An increment of 0 disables rounding.
    """
    if increment <= 0:
        return seconds
    if mode == "up":
        return int(math.ceil(seconds / increment)) * increment
    if mode == "down":
        return (seconds // increment) * increment
    if mode == "nearest":
        return int(math.floor(seconds / increment + 0.5)) * increment
    raise ValueError(f"unknown rounding mode: {mode!r}")
