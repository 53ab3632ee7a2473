"""Runtime values and the coercion rules between them.

exprcalc values are plain Python objects:

=================  ==========================================
formula type       Python representation
=================  ==========================================
number             ``int`` or ``float`` (never ``bool``)
text               ``str``
logical            ``bool``
date / date-time   ``datetime.date`` / ``datetime.datetime``
list               ``list`` (may be nested for 2-D tables)
quantity           :class:`exprcalc.units.Quantity`
blank              ``None``
=================  ==========================================

Coercions follow spreadsheet conventions: ``TRUE`` is 1 in arithmetic,
numeric text such as ``"12.5"`` can be used as a number, blank is 0 or "".
"""

from __future__ import annotations

import datetime as _dt
import math

from .errors import ArgumentError, DivisionByZero, EvalError, NumError, UnitError
from .units import Quantity


def type_name(value: object) -> str:
    """Name of the formula type of ``value`` (used in error messages)."""
    if value is None:
        return "blank"
    if isinstance(value, bool):
        return "logical"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, _dt.datetime):
        return "date-time"
    if isinstance(value, _dt.date):
        return "date"
    if isinstance(value, list):
        return "list"
    if isinstance(value, Quantity):
        return "quantity"
    return type(value).__name__


def normalize_number(value: float) -> int | float:
    """Return ``int`` for integral floats of reasonable size, keep other floats."""
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise NumError("Result is not a finite number")
        if value.is_integer() and abs(value) < 2 ** 53:
            return int(value)
    return value


def parse_number_text(text: str) -> int | float | None:
    """Parse numeric text (``"1,234.5"``, ``" 12 "``, ``"50%"``); ``None`` if not numeric."""
    s = text.strip().replace(",", "")
    if not s:
        return None
    percent = s.endswith("%")
    if percent:
        s = s[:-1].strip()
    try:
        number: float = int(s) if s.lstrip("+-").isdigit() else float(s)
    except ValueError:
        return None
    if isinstance(number, float) and (math.isnan(number) or math.isinf(number)):
        return None
    return number / 100 if percent else number


def to_number(value: object, what: str = "value") -> int | float:
    """Coerce ``value`` to a number or raise :class:`ArgumentError`."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        number = parse_number_text(value)
        if number is None:
            raise ArgumentError(f"{what} expects a number, got text \"{value}\"")
        return number
    if isinstance(value, _dt.date):
        from .datetime_util import to_serial

        return to_serial(value)
    if isinstance(value, Quantity) and value.unit.is_dimensionless:
        return value.value * value.unit.factor
    raise ArgumentError(f"{what} expects a number, got {type_name(value)}")


def to_text(value: object) -> str:
    """Coerce ``value`` to text the way ``&`` and text functions see it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, str):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(normalize_number(value)) if value.is_integer() else f"{value:.15g}"
        return text
    if isinstance(value, _dt.datetime):
        return value.isoformat(sep=" ", timespec="seconds")
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, Quantity):
        return str(value)
    if isinstance(value, list):
        raise ArgumentError("A list cannot be used as text; use TEXTJOIN() to combine items")
    return str(value)


def to_bool(value: object, what: str = "value") -> bool:
    """Coerce ``value`` to a logical."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value != 0
    if isinstance(value, str):
        upper = value.strip().upper()
        if upper in ("TRUE", "YES"):
            return True
        if upper in ("FALSE", "NO", ""):
            return False
        raise ArgumentError(f"{what} expects a logical, got text \"{value}\"")
    raise ArgumentError(f"{what} expects a logical, got {type_name(value)}")


# -- comparison ---------------------------------------------------------------

_TYPE_ORDER = {"number": 0, "date": 0, "date-time": 0, "quantity": 0, "text": 1, "logical": 2, "blank": -1}


def _comparable(value: object):
    if isinstance(value, Quantity):
        return value.compare_key()
    if isinstance(value, _dt.date):
        from .datetime_util import to_serial

        return to_serial(value)
    if isinstance(value, str):
        return value.casefold()
    return value


def compare(a: object, b: object) -> int:
    """Three-way comparison with spreadsheet ordering.

    Numbers sort before text, which sorts before logicals; text comparison is
    case-insensitive.  Quantities compare by their SI value and must have
    compatible units.
    """
    if isinstance(a, list) or isinstance(b, list):
        raise ArgumentError("Lists cannot be compared; use a list function such as MATCH()")
    if a is None:
        a = "" if isinstance(b, str) else (False if isinstance(b, bool) else 0)
    if b is None:
        b = "" if isinstance(a, str) else (False if isinstance(a, bool) else 0)
    if isinstance(a, Quantity) and isinstance(b, Quantity) and not a.unit.compatible(b.unit):
        raise UnitError(f"Cannot compare '{a.unit.symbol}' with '{b.unit.symbol}'")
    ta, tb = _TYPE_ORDER.get(type_name(a), 3), _TYPE_ORDER.get(type_name(b), 3)
    if ta != tb:
        return -1 if ta < tb else 1
    ka, kb = _comparable(a), _comparable(b)
    if ka == kb:
        return 0
    return -1 if ka < kb else 1


def equals(a: object, b: object) -> bool:
    try:
        return compare(a, b) == 0
    except UnitError:
        return False


# -- arithmetic ---------------------------------------------------------------

def _dates(a, b):
    return isinstance(a, _dt.date), isinstance(b, _dt.date)


def add(a: object, b: object) -> object:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return a.add(b)
    if isinstance(a, Quantity) or isinstance(b, Quantity):
        raise UnitError("Cannot add a plain number and a quantity; give both a unit")
    da, db = _dates(a, b)
    if da and db:
        raise ArgumentError("Cannot add two dates")
    if da:
        return _shift_date(a, to_number(b, "+"))
    if db:
        return _shift_date(b, to_number(a, "+"))
    return normalize_number(to_number(a, "+") + to_number(b, "+"))


def subtract(a: object, b: object) -> object:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return a.sub(b)
    if isinstance(a, Quantity) or isinstance(b, Quantity):
        raise UnitError("Cannot subtract a plain number and a quantity; give both a unit")
    da, db = _dates(a, b)
    if da and db:
        delta = _as_datetime(a) - _as_datetime(b)
        return normalize_number(delta.days + delta.seconds / 86400)
    if da:
        return _shift_date(a, -to_number(b, "-"))
    return normalize_number(to_number(a, "-") - to_number(b, "-"))


def multiply(a: object, b: object) -> object:
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return _plain(a.mul(b))
    if isinstance(a, Quantity):
        return a.scale(to_number(b, "*"))
    if isinstance(b, Quantity):
        return b.scale(to_number(a, "*"))
    return normalize_number(to_number(a, "*") * to_number(b, "*"))


def divide(a: object, b: object) -> object:
    if isinstance(b, Quantity) and b.value == 0:
        raise DivisionByZero("Division by zero")
    if isinstance(a, Quantity) and isinstance(b, Quantity):
        return _plain(a.div(b))
    if isinstance(b, Quantity):
        raise UnitError("Cannot divide a plain number by a quantity")
    divisor = to_number(b, "/")
    if divisor == 0:
        raise DivisionByZero("Division by zero")
    if isinstance(a, Quantity):
        return a.scale(1 / divisor)
    numerator = to_number(a, "/")
    if isinstance(numerator, int) and isinstance(divisor, int) and numerator % divisor == 0:
        return numerator // divisor
    return normalize_number(numerator / divisor)


def power(a: object, b: object) -> object:
    base = to_number(a, "^")
    exponent = to_number(b, "^")
    if base == 0 and exponent < 0:
        raise DivisionByZero("Zero cannot be raised to a negative power")
    if base < 0 and not float(exponent).is_integer():
        raise NumError("A negative number cannot be raised to a fractional power")
    try:
        result = base ** exponent
    except OverflowError:
        raise NumError("Result of ^ is too large") from None
    if isinstance(result, complex):
        raise NumError("Result of ^ is not a real number")
    if isinstance(result, int) and abs(result) > 10 ** 300:
        raise NumError("Result of ^ is too large")
    return normalize_number(result)


def concat(a: object, b: object) -> str:
    return to_text(a) + to_text(b)


def _plain(value):
    return normalize_number(value) if isinstance(value, float) else value


def _as_datetime(d: _dt.date) -> _dt.datetime:
    if isinstance(d, _dt.datetime):
        return d
    return _dt.datetime(d.year, d.month, d.day)


def _shift_date(d: _dt.date, days: float) -> _dt.date:
    try:
        if isinstance(d, _dt.datetime):
            return d + _dt.timedelta(days=days)
        whole = int(math.floor(days))
        if whole != days:
            return _as_datetime(d) + _dt.timedelta(days=days)
        return d + _dt.timedelta(days=whole)
    except OverflowError:
        raise NumError("Date is out of range") from None


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def ensure_scalar(value: object, what: str) -> object:
    if isinstance(value, list):
        raise EvalError(f"{what} expects a single value, got a list")
    return value
