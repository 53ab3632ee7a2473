"""Calendar helpers used by the date functions and the formatter.

Serial numbers follow the spreadsheet convention: day 1 is 1900-01-01 and
serials are counted from 1899-12-30, so modern dates match the values other
spreadsheet programs show (the fictitious 1900-02-29 is not reproduced, so
serials before March 1900 differ by one).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re

from .errors import ArgumentError, NumError

EPOCH = dt.date(1899, 12, 30)
MONTH_NAMES = [calendar.month_name[i].lower() for i in range(1, 13)]
MONTH_ABBR = [calendar.month_abbr[i].lower() for i in range(1, 13)]


def to_serial(value: dt.date) -> int | float:
    """Serial number of a date (fractional for date-times)."""
    if isinstance(value, dt.datetime):
        delta = value - dt.datetime(EPOCH.year, EPOCH.month, EPOCH.day)
        serial = delta.days + delta.seconds / 86400 + delta.microseconds / 86400e6
        return int(serial) if serial == int(serial) else serial
    return (value - EPOCH).days


def from_serial(serial: float) -> dt.date:
    """Date (or date-time when ``serial`` has a fraction) for a serial number."""
    if serial < 0 or serial > 2958465:
        raise NumError(f"Serial number {serial} is outside the supported date range")
    whole = int(serial)
    day = EPOCH + dt.timedelta(days=whole)
    fraction = serial - whole
    if fraction:
        seconds = round(fraction * 86400)
        return dt.datetime(day.year, day.month, day.day) + dt.timedelta(seconds=seconds)
    return day


def is_leap_year(year: int) -> bool:
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int, month: int) -> int:
    return calendar.monthrange(year, month)[1]


def add_months(value: dt.date, months: int) -> dt.date:
    """Shift ``value`` by whole months, clamping the day to the month's length.

    >>> add_months(dt.date(2024, 1, 31), 1)
    datetime.date(2024, 2, 29)
    """
    index = value.year * 12 + (value.month - 1) + months
    year, month = divmod(index, 12)
    month += 1
    if not 1 <= year <= 9999:
        raise NumError("Date is out of range")
    day = min(value.day, days_in_month(year, month))
    if isinstance(value, dt.datetime):
        return value.replace(year=year, month=month, day=day)
    return dt.date(year, month, day)


def end_of_month(value: dt.date, months: int = 0) -> dt.date:
    shifted = add_months(dt.date(value.year, value.month, 1), months)
    return shifted.replace(day=days_in_month(shifted.year, shifted.month))


_ISO = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2}))?)?$")
_SLASH = re.compile(r"^(\d{1,2})[/.](\d{1,2})[/.](\d{2,4})$")
_WORDY = re.compile(r"^(\d{1,2})[ -]([A-Za-z]+)\.?[ -,]*(\d{4})$")
_WORDY_US = re.compile(r"^([A-Za-z]+)\.? (\d{1,2}),? (\d{4})$")


def _month_from_name(name: str) -> int:
    name = name.lower()
    for i, (full, abbr) in enumerate(zip(MONTH_NAMES, MONTH_ABBR), start=1):
        if name in (full, abbr) or (len(name) >= 3 and full.startswith(name)):
            return i
    raise ArgumentError(f"Unknown month name '{name}'")


def _make(year: int, month: int, day: int, text: str) -> dt.date:
    try:
        return dt.date(year, month, day)
    except ValueError:
        raise ArgumentError(f"'{text}' is not a valid date") from None


def parse_date(text: str, day_first: bool = False) -> dt.date:
    """Parse common date spellings.

    Accepted forms: ``2024-03-05`` (optionally with ``HH:MM[:SS]``),
    ``3/5/2024`` (month first unless ``day_first``), ``5 Mar 2024`` and
    ``March 5, 2024``.  Two-digit years are 2000-2029 or 1930-1999.
    """
    s = text.strip()
    m = _ISO.match(s)
    if m:
        year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
        date = _make(year, month, day, text)
        if m.group(4) is not None:
            hour, minute = int(m.group(4)), int(m.group(5))
            second = int(m.group(6) or 0)
            if hour > 23 or minute > 59 or second > 59:
                raise ArgumentError(f"'{text}' has an invalid time of day")
            return dt.datetime(year, month, day, hour, minute, second)
        return date
    m = _SLASH.match(s)
    if m:
        a, b, year = int(m.group(1)), int(m.group(2)), int(m.group(3))
        if year < 100:
            year += 2000 if year < 30 else 1900
        month, day = (b, a) if day_first else (a, b)
        return _make(year, month, day, text)
    m = _WORDY.match(s)
    if m:
        return _make(int(m.group(3)), _month_from_name(m.group(2)), int(m.group(1)), text)
    m = _WORDY_US.match(s)
    if m:
        return _make(int(m.group(3)), _month_from_name(m.group(1)), int(m.group(2)), text)
    raise ArgumentError(f"'{text}' is not a recognised date")


def weekday_number(value: dt.date, return_type: int = 1) -> int:
    """Spreadsheet WEEKDAY numbering.

    1: Sunday=1..Saturday=7, 2: Monday=1..Sunday=7, 3: Monday=0..Sunday=6,
    11-17: week starting Monday..Sunday with the start day = 1.
    """
    iso = value.isoweekday()  # Monday=1 .. Sunday=7
    if return_type == 1:
        return iso % 7 + 1
    if return_type == 2:
        return iso
    if return_type == 3:
        return iso - 1
    if 11 <= return_type <= 17:
        start = return_type - 10  # 1 = Monday
        return (iso - start) % 7 + 1
    raise NumError(f"WEEKDAY return type {return_type} is not supported")


def week_number(value: dt.date, return_type: int = 1) -> int:
    """WEEKNUM: week 1 contains January 1st; weeks start Sunday (1) or Monday (2)."""
    if return_type == 21:
        return value.isocalendar()[1]
    if return_type not in (1, 2):
        raise NumError(f"WEEKNUM return type {return_type} is not supported")
    jan1 = dt.date(value.year, 1, 1)
    start_iso = 7 if return_type == 1 else 1
    offset = (jan1.isoweekday() - start_iso) % 7
    return (value.toordinal() - jan1.toordinal() + offset) // 7 + 1


def days360(start: dt.date, end: dt.date, european: bool = False) -> int:
    """Days between two dates on a 360-day year (30/360 US or European)."""
    d1, d2 = start.day, end.day
    if european:
        d1 = min(d1, 30)
        d2 = min(d2, 30)
    else:
        last_feb = lambda d: d.month == 2 and d.day == days_in_month(d.year, 2)  # noqa: E731
        if last_feb(start) and last_feb(end):
            d2 = 30
        if last_feb(start):
            d1 = 30
        if d2 == 31 and d1 >= 30:
            d2 = 30
        if d1 == 31:
            d1 = 30
    return (end.year - start.year) * 360 + (end.month - start.month) * 30 + (d2 - d1)


def is_workday(value: dt.date, holidays: frozenset[dt.date], weekend: frozenset[int]) -> bool:
    return value.isoweekday() not in weekend and value not in holidays


WEEKEND_CODES = {
    1: frozenset({6, 7}), 2: frozenset({7, 1}), 3: frozenset({1, 2}), 4: frozenset({2, 3}),
    5: frozenset({3, 4}), 6: frozenset({4, 5}), 7: frozenset({5, 6}),
    11: frozenset({7}), 12: frozenset({1}), 13: frozenset({2}), 14: frozenset({3}),
    15: frozenset({4}), 16: frozenset({5}), 17: frozenset({6}),
}


def weekend_days(code: object = 1) -> frozenset[int]:
    """Weekend as ISO weekday numbers from a WORKDAY.INTL-style code or mask like ``"0000011"``."""
    if isinstance(code, str):
        if len(code) != 7 or set(code) - {"0", "1"} or code == "1111111":
            raise ArgumentError(f"Invalid weekend mask '{code}'")
        return frozenset(i + 1 for i, flag in enumerate(code) if flag == "1")
    try:
        return WEEKEND_CODES[int(code)]
    except (KeyError, TypeError, ValueError):
        raise NumError(f"Invalid weekend code {code!r}") from None


def networkdays(start: dt.date, end: dt.date, holidays=frozenset(), weekend=WEEKEND_CODES[1]) -> int:
    """Working days between ``start`` and ``end`` inclusive (negative if reversed)."""
    sign = 1
    if end < start:
        start, end, sign = end, start, -1
    count = 0
    day = start
    one = dt.timedelta(days=1)
    while day <= end:
        if is_workday(day, holidays, weekend):
            count += 1
        day += one
    return sign * count


def workday(start: dt.date, days: int, holidays=frozenset(), weekend=WEEKEND_CODES[1]) -> dt.date:
    """The date ``days`` working days after (or before) ``start``."""
    step = dt.timedelta(days=1 if days >= 0 else -1)
    remaining = abs(days)
    day = start
    while remaining:
        day += step
        if is_workday(day, holidays, weekend):
            remaining -= 1
    return day


def year_fraction(start: dt.date, end: dt.date, basis: int = 0) -> float:
    """YEARFRAC for bases 0 (30/360 US), 1 (actual/actual), 2 (actual/360),
    3 (actual/365) and 4 (30/360 European)."""
    if end < start:
        start, end = end, start
    if basis == 0:
        return days360(start, end) / 360
    if basis == 4:
        return days360(start, end, european=True) / 360
    actual = (end - start).days
    if basis == 2:
        return actual / 360
    if basis == 3:
        return actual / 365
    if basis == 1:
        if start.year == end.year:
            return actual / (366 if is_leap_year(start.year) else 365)
        years = range(start.year, end.year + 1)
        avg = sum(366 if is_leap_year(y) else 365 for y in years) / len(years)
        return actual / avg
    raise NumError(f"YEARFRAC basis {basis} is not supported")
