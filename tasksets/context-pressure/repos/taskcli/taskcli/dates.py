"""Parsing and arithmetic for the dates users type on the command line.

All dates and times in taskcli are *naive local* values.  The current moment
comes from :func:`now`, which honours the ``TASKCLI_NOW`` environment variable
so that scripts and tests can pin "today" to a fixed value::

    TASKCLI_NOW=2024-05-08T10:00 taskcli add "Pay rent" --due "next friday"
"""

from __future__ import annotations

import calendar
import os
import re
from datetime import date, datetime, time, timedelta

WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")

_WEEKDAY_ALIASES = {}
for _index, _name in enumerate(WEEKDAYS):
    _WEEKDAY_ALIASES[_name] = _index
    _WEEKDAY_ALIASES[_name[:3]] = _index
_WEEKDAY_ALIASES.update({"tues": 1, "wednes": 2, "thur": 3, "thurs": 3})

_RELATIVE_RE = re.compile(r"^([+-])\s*(\d+)\s*([dwmy])$")
_IN_RE = re.compile(r"^in\s+(\d+)\s+(day|days|week|weeks|month|months|year|years)$")
_AGO_RE = re.compile(r"^(\d+)\s+(day|days|week|weeks)\s+ago$")
_CLOCK_RE = re.compile(r"^(\d{1,2}):(\d{2})(?::(\d{2}))?$")
_AMPM_RE = re.compile(r"^(\d{1,2})(?::(\d{2}))?\s*(am|pm)$")


class DateParseError(ValueError):
    """Raised when a date or time string cannot be understood."""


def now() -> datetime:
    """Return the current local time, or the value pinned by ``TASKCLI_NOW``."""
    pinned = os.environ.get("TASKCLI_NOW")
    if pinned:
        try:
            return datetime.fromisoformat(pinned)
        except ValueError as exc:
            raise DateParseError(f"TASKCLI_NOW is not an ISO timestamp: {pinned!r}") from exc
    return datetime.now().replace(microsecond=0)


def today() -> date:
    """Return the current local date (see :func:`now`)."""
    return now().date()


def parse_weekday(text: str) -> int:
    """Return the weekday index (Monday is 0) for a name such as ``"fri"``."""
    key = text.strip().lower().rstrip(".")
    if key not in _WEEKDAY_ALIASES:
        raise DateParseError(f"not a weekday: {text!r}")
    return _WEEKDAY_ALIASES[key]


def _midnight(day: date) -> datetime:
    """The first moment of ``day`` as a datetime."""
    return datetime.combine(day, time.min)


def _next_weekday(start, weekday: int, allow_same_day: bool = False):
    """Return the first ``weekday`` after ``start`` (or on it, if allowed)."""
    delta = (weekday - start.weekday()) % 7
    if delta == 0 and not allow_same_day:
        delta = 7
    return start + timedelta(days=delta)


def add_months(day: date, months: int) -> date:
    """Add calendar months, clamping the day to the length of the target month.

    >>> add_months(date(2024, 1, 31), 1)
    datetime.date(2024, 2, 29)
    """
    month_index = day.month - 1 + months
    year = day.year + month_index // 12
    month = month_index % 12 + 1
    last = calendar.monthrange(year, month)[1]
    return date(year, month, min(day.day, last))


def _shift(base: date, amount: int, unit: str) -> date:
    if unit in ("d", "day", "days"):
        return base + timedelta(days=amount)
    if unit in ("w", "week", "weeks"):
        return base + timedelta(weeks=amount)
    if unit in ("m", "month", "months"):
        return add_months(base, amount)
    if unit in ("y", "year", "years"):
        return add_months(base, 12 * amount)
    raise DateParseError(f"unknown date unit: {unit!r}")


def parse_date(text: str, today: date | None = None) -> date:
    """Parse a user supplied date.

    Accepted forms (case insensitive):

    * ISO dates: ``2024-05-10``
    * ``today``, ``tomorrow``, ``yesterday``
    * offsets: ``+3d``, ``-1w``, ``+2m``, ``in 3 days``, ``2 weeks ago``
    * weekdays: ``friday`` (today if it is Friday) and ``next friday``
      (always strictly after today)
    * ``eow`` / ``eom`` / ``eoy``: end of the current week, month or year
    """
    if today is None:
        today = now().date()
    raw = text
    text = text.strip().lower()
    if not text:
        raise DateParseError("empty date")

    if text == "today":
        return today
    if text == "tomorrow":
        return today + timedelta(days=1)
    if text == "yesterday":
        return today - timedelta(days=1)
    if text == "eow":
        return _next_weekday(today, 6, allow_same_day=True)
    if text == "eom":
        return date(today.year, today.month, calendar.monthrange(today.year, today.month)[1])
    if text == "eoy":
        return date(today.year, 12, 31)

    match = _RELATIVE_RE.match(text)
    if match:
        sign, amount, unit = match.groups()
        amount = int(amount) if sign == "+" else -int(amount)
        return _shift(today, amount, unit)

    match = _IN_RE.match(text)
    if match:
        return _shift(today, int(match.group(1)), match.group(2))

    match = _AGO_RE.match(text)
    if match:
        return _shift(today, -int(match.group(1)), match.group(2))

    words = text.split()
    if len(words) == 2 and words[0] == "next" and words[1] in _WEEKDAY_ALIASES:
        return _next_weekday(_midnight(today), parse_weekday(words[1]))
    if len(words) == 1 and words[0] in _WEEKDAY_ALIASES:
        return _next_weekday(today, parse_weekday(words[0]), allow_same_day=True)

    try:
        return date.fromisoformat(text)
    except ValueError:
        pass
    raise DateParseError(f"could not understand date {raw!r}")


def parse_time(text: str) -> time:
    """Parse ``9:30``, ``17:05:10``, ``9am`` or ``5:30pm``."""
    text = text.strip().lower()
    match = _CLOCK_RE.match(text)
    if match:
        hour, minute, second = int(match.group(1)), int(match.group(2)), int(match.group(3) or 0)
    else:
        match = _AMPM_RE.match(text)
        if not match:
            raise DateParseError(f"could not understand time {text!r}")
        hour, minute, second = int(match.group(1)), int(match.group(2) or 0), 0
        if not 1 <= hour <= 12:
            raise DateParseError(f"hour out of range in {text!r}")
        if match.group(3) == "pm" and hour != 12:
            hour += 12
        elif match.group(3) == "am" and hour == 12:
            hour = 0
    if hour > 23 or minute > 59 or second > 59:
        raise DateParseError(f"time out of range: {text!r}")
    return time(hour, minute, second)


def parse_datetime(text: str, reference: datetime | None = None) -> datetime:
    """Parse a moment such as ``09:30``, ``yesterday 17:00`` or an ISO timestamp.

    A bare time refers to ``reference``'s day (default: now).  A bare date
    means midnight of that day.
    """
    reference = reference or now()
    text = text.strip()
    if not text:
        raise DateParseError("empty timestamp")
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        pass
    try:
        return datetime.combine(reference.date(), parse_time(text))
    except DateParseError:
        pass
    parts = text.rsplit(" ", 1)
    if len(parts) == 2:
        try:
            day = parse_date(parts[0], today=reference.date())
            return datetime.combine(day, parse_time(parts[1]))
        except DateParseError:
            pass
    return _midnight(parse_date(text, today=reference.date()))


def week_bounds(day: date, week_start: int | str = 0) -> tuple[date, date]:
    """Return the first and last day of the week containing ``day``.

    ``week_start`` is the weekday a week begins on, either as an index
    (Monday is 0) or as a name such as ``"sunday"``.
    """
    offset = day.weekday()
    start = day - timedelta(days=offset)
    return start, start + timedelta(days=6)


def month_bounds(day: date) -> tuple[date, date]:
    """Return the first and last day of the month containing ``day``."""
    last = calendar.monthrange(day.year, day.month)[1]
    return date(day.year, day.month, 1), date(day.year, day.month, last)


def iter_days(start: date, end: date):
    """Yield every date from ``start`` to ``end`` inclusive."""
    current = start
    while current <= end:
        yield current
        current += timedelta(days=1)


_RECUR_RE = re.compile(r"^(?:every\s+)?(\d+)?\s*(d|day|days|w|week|weeks|m|month|months|y|year|years)$")
_RECUR_NAMES = {"daily": (1, "d"), "weekly": (1, "w"), "biweekly": (2, "w"),
                "monthly": (1, "m"), "quarterly": (3, "m"), "yearly": (1, "y"),
                "annually": (1, "y")}


def parse_recurrence(text: str) -> tuple[int, str]:
    """Parse a recurrence rule into ``(amount, unit)``.

    ``weekly`` -> ``(1, "w")``, ``every 3 days`` -> ``(3, "d")``, ``2w`` -> ``(2, "w")``.
    """
    key = text.strip().lower()
    if key in _RECUR_NAMES:
        return _RECUR_NAMES[key]
    match = _RECUR_RE.match(key)
    if not match:
        raise DateParseError(f"could not understand recurrence {text!r}")
    amount = int(match.group(1) or 1)
    if amount <= 0:
        raise DateParseError("recurrence interval must be positive")
    return amount, match.group(2)[0]


def next_occurrence(due: date, rule: str, after: date | None = None) -> date:
    """Return the next due date of a recurring task.

    The interval is added to ``due`` until the result lies after ``after``
    (default: ``due`` itself), so that completing an overdue recurring task
    does not create another overdue copy.  Monthly rules keep the original
    day of month where possible (Jan 31 -> Feb 29 -> Mar 31).
    """
    amount, unit = parse_recurrence(rule)
    after = after or due
    steps = 1
    while True:
        if unit in ("m", "y"):
            months = amount * steps * (12 if unit == "y" else 1)
            candidate = add_months(due, months)
        else:
            candidate = _shift(due, amount * steps, unit)
        if candidate > after:
            return candidate
        steps += 1


def describe_relative(day: date, reference: date | None = None) -> str:
    """Describe ``day`` relative to ``reference``: ``today``, ``in 3d``, ``2d ago``."""
    reference = reference or today()
    delta = (day - reference).days
    if delta == 0:
        return "today"
    if delta == 1:
        return "tomorrow"
    if delta == -1:
        return "yesterday"
    if delta > 0:
        return f"in {delta}d" if delta < 14 else f"in {delta // 7}w"
    delta = -delta
    return f"{delta}d ago" if delta < 14 else f"{delta // 7}w ago"
