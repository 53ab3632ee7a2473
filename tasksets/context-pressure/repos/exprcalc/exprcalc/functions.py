"""The built-in function library.

Every function is registered with :func:`builtin`, which records its name,
category, accepted number of arguments and docstring.  The first line of a
docstring is the signature shown by ``Calculator.help()`` and the CLI's
``--functions`` listing; optional arguments are written in brackets.

Functions receive a :class:`~exprcalc.evaluator.CallContext` followed by their
evaluated arguments.  *Lazy* functions (``IF``, ``AND``, ``IFERROR`` ...)
receive unevaluated AST nodes instead and evaluate them through ``ctx.eval``
so that untaken branches are never computed.

Conventions shared by all functions:

* numbers, text, logicals and dates are coerced following
  :mod:`exprcalc.values` (``"12"`` works where a number is expected);
* aggregate functions flatten nested lists and skip blanks; text inside a
  list is ignored, text given directly as an argument must be numeric;
* errors carry spreadsheet codes: ``#VALUE!`` for wrong types, ``#NUM!`` for
  out-of-domain numbers, ``#DIV/0!``, ``#N/A`` for failed lookups and
  ``#REF!`` for out-of-range indexes.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import math
import re
import statistics
import unicodedata
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Callable, Iterable

from . import datetime_util as dates
from . import formatting, units, values
from .errors import (
    ERROR_CODES,
    ArgumentError,
    DivisionByZero,
    EvalError,
    ExprError,
    NotAvailable,
    NumError,
    RefError,
    UnitError,
)
from .units import Quantity

# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------


@dataclass
class FunctionSpec:
    name: str
    impl: Callable
    category: str
    min_args: int
    max_args: int | None
    lazy: bool = False

    @property
    def doc(self) -> str:
        return (self.impl.__doc__ or "").strip()

    @property
    def signature(self) -> str:
        return self.doc.splitlines()[0] if self.doc else f"{self.name}(...)"

    @property
    def summary(self) -> str:
        lines = [line.strip() for line in self.doc.splitlines()[1:]]
        for line in lines:
            if line:
                return line
        return ""

    def check_arity(self, count: int) -> None:
        low, high = self.min_args, self.max_args
        if low <= count and (high is None or count <= high):
            return
        if high is None:
            expected = f"at least {low}"
        elif low == high:
            expected = str(low)
        elif high == low + 1:
            expected = f"{low} or {high}"
        else:
            expected = f"{low} to {high}"
        plural = "" if expected == "1" else "s"
        raise ArgumentError(
            f"{self.name} expects {expected} argument{plural}, got {count}. Usage: {self.signature}"
        )


REGISTRY: dict[str, FunctionSpec] = {}

CATEGORIES = (
    "math", "statistics", "text", "date", "logic", "lookup", "list",
    "financial", "engineering", "information", "units",
)


def builtin(name: str, category: str, min_args: int = 0, max_args: int | None = -1, *, lazy: bool = False):
    """Register a built-in function.

    ``max_args=-1`` (the default) means "same as ``min_args``", ``None`` means
    any number of arguments.
    """
    if category not in CATEGORIES:
        raise ValueError(f"unknown category {category!r}")

    def decorator(func: Callable) -> Callable:
        upper = name.upper()
        if upper in REGISTRY:
            raise ValueError(f"function {upper} registered twice")
        high = min_args if max_args == -1 else max_args
        REGISTRY[upper] = FunctionSpec(upper, func, category, min_args, high, lazy)
        return func

    return decorator


def lookup(name: str) -> FunctionSpec | None:
    return REGISTRY.get(name.upper())


def functions_in(category: str) -> list[FunctionSpec]:
    return sorted((s for s in REGISTRY.values() if s.category == category), key=lambda s: s.name)


# ---------------------------------------------------------------------------
# Argument helpers
# ---------------------------------------------------------------------------


def _where(fn: str, pos: int | str) -> str:
    return f"{fn} argument {pos}" if isinstance(pos, int) else f"{fn} {pos}"


def _num(value: object, fn: str, pos: int | str = 1) -> int | float:
    """Coerce a scalar argument to a number."""
    if isinstance(value, list):
        raise ArgumentError(f"{_where(fn, pos)} expects a number, got a list")
    if isinstance(value, Quantity) and not value.unit.is_dimensionless:
        raise UnitError(f"{_where(fn, pos)} expects a plain number, got a quantity in '{value.unit.symbol}'")
    return values.to_number(value, _where(fn, pos))


def _int(value: object, fn: str, pos: int | str = 1, minimum: int | None = None) -> int:
    """Coerce to a number and truncate toward zero, like spreadsheet integer arguments."""
    number = _num(value, fn, pos)
    if isinstance(number, float) and not math.isfinite(number):
        raise NumError(f"{_where(fn, pos)} must be finite")
    result = int(number)
    if minimum is not None and result < minimum:
        raise NumError(f"{_where(fn, pos)} must be at least {minimum}, got {result}")
    return result


def _text(value: object, fn: str = "", pos: int | str = 1) -> str:
    if isinstance(value, list):
        raise ArgumentError(f"{_where(fn, pos)} expects text, got a list")
    return values.to_text(value)


def _bool(value: object, fn: str, pos: int | str = 1) -> bool:
    if isinstance(value, list):
        raise ArgumentError(f"{_where(fn, pos)} expects a logical, got a list")
    return values.to_bool(value, _where(fn, pos))


def _date(value: object, fn: str, pos: int | str = 1) -> dt.date:
    """Accept a date, a serial number or date text."""
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        return dates.parse_date(value)
    if isinstance(value, bool) or value is None:
        raise ArgumentError(f"{_where(fn, pos)} expects a date, got {values.type_name(value)}")
    if isinstance(value, (int, float)):
        return dates.from_serial(value)
    raise ArgumentError(f"{_where(fn, pos)} expects a date, got {values.type_name(value)}")


def _plain_date(value: object, fn: str, pos: int | str = 1) -> dt.date:
    d = _date(value, fn, pos)
    return d.date() if isinstance(d, dt.datetime) else d


def _list(value: object) -> list:
    """Treat a scalar as a one-element list."""
    if isinstance(value, list):
        return value
    return [value]


def _flatten(items: Iterable[object]) -> list[object]:
    out: list[object] = []
    for item in items:
        if isinstance(item, list):
            out.extend(_flatten(item))
        else:
            out.append(item)
    return out


def _collect_numbers(args: Iterable[object], fn: str) -> list[int | float]:
    """Numbers for an aggregate function.

    Arguments given directly are coerced (numeric text and logicals count);
    inside lists only real numbers count - text, logicals and blanks are
    skipped, as spreadsheet ranges do.
    """
    numbers: list[int | float] = []
    for index, arg in enumerate(args, start=1):
        if isinstance(arg, list):
            for item in _flatten(arg):
                if not item:
                    continue
                if values.is_number(item):
                    numbers.append(item)
                elif isinstance(item, (dt.date,)):
                    numbers.append(dates.to_serial(item))
        elif arg is None:
            continue
        else:
            numbers.append(_num(arg, fn, index))
    return numbers


def _finite(value: float, fn: str) -> int | float:
    if isinstance(value, float) and not math.isfinite(value):
        raise NumError(f"{fn} result is not a finite number")
    return values.normalize_number(value)


def _round_half_up(value: float, digits: int) -> float:
    """Round half away from zero at ``digits`` decimals, working on the decimal
    representation so that 2.675 rounds to 2.68 like it looks on screen."""
    quantum = Decimal(1).scaleb(-digits)
    result = Decimal(repr(float(value))).quantize(quantum, rounding=ROUND_HALF_UP)
    return float(result)


_CRITERION = re.compile(r"^(<>|>=|<=|=|<|>)?(.*)$", re.S)


def _criterion(criterion: object) -> Callable[[object], bool]:
    """Build a predicate from a SUMIF-style criterion.

    ``5`` or ``"5"`` match equal numbers, ``">=10"`` compares, ``"<>x"``
    excludes, text may use ``*`` and ``?`` wildcards (``~`` escapes them) and
    matching is case-insensitive.
    """
    if not isinstance(criterion, str):
        return lambda v: v is not None and values.equals(v, criterion)
    op, operand = _CRITERION.match(criterion).groups()
    op = op or "="
    number = values.parse_number_text(operand) if operand.strip() else None
    if number is not None:
        def numeric(v: object) -> bool:
            if not values.is_number(v):
                if isinstance(v, str) and values.parse_number_text(v) is not None and op == "=":
                    return values.parse_number_text(v) == number
                return op == "<>"
            return {
                "=": v == number, "<>": v != number, "<": v < number,
                "<=": v <= number, ">": v > number, ">=": v >= number,
            }[op]
        return numeric
    if op in ("=", "<>"):
        if operand == "":
            blank = lambda v: v is None or v == ""  # noqa: E731
            return blank if op == "=" else (lambda v: not blank(v))
        pattern = _wildcard_regex(operand)
        matcher = lambda v: isinstance(v, str) and pattern.fullmatch(v) is not None  # noqa: E731
        return matcher if op == "=" else (lambda v: not matcher(v))

    def textual(v: object) -> bool:
        if not isinstance(v, str):
            return False
        cmp = values.compare(v, operand)
        return {"<": cmp < 0, "<=": cmp <= 0, ">": cmp > 0, ">=": cmp >= 0}[op]

    return textual


def _wildcard_regex(pattern: str) -> re.Pattern:
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "~" and i + 1 < len(pattern) and pattern[i + 1] in "*?~":
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        out.append(".*" if ch == "*" else "." if ch == "?" else re.escape(ch))
        i += 1
    return re.compile("".join(out), re.I | re.S)


def _same_length(fn: str, *lists: list) -> None:
    lengths = {len(x) for x in lists}
    if len(lengths) > 1:
        raise ArgumentError(f"{fn} expects lists of the same length, got lengths {sorted(lengths)}")


def _angle_in(ctx, value: float) -> float:
    """Convert an angle argument to radians according to the angle mode."""
    return math.radians(value) if ctx.options.angle_mode == "degrees" else value


def _angle_out(ctx, value: float) -> float:
    return math.degrees(value) if ctx.options.angle_mode == "degrees" else value

# ---------------------------------------------------------------------------
# Math
# ---------------------------------------------------------------------------


@builtin("ABS", "math", 1)
def fn_abs(ctx, number):
    """ABS(number)
    Absolute value of a number or quantity."""
    if isinstance(number, Quantity):
        return Quantity(abs(number.value), number.unit)
    return abs(_num(number, "ABS"))


@builtin("SIGN", "math", 1)
def fn_sign(ctx, number):
    """SIGN(number)
    1 for positive numbers, -1 for negative numbers and 0 for zero."""
    n = _num(number, "SIGN")
    return (n > 0) - (n < 0)


@builtin("SQRT", "math", 1)
def fn_sqrt(ctx, number):
    """SQRT(number)
    Positive square root. #NUM! for negative numbers."""
    n = _num(number, "SQRT")
    if n < 0:
        raise NumError(f"SQRT of a negative number ({n}) is not a real number")
    return _finite(math.sqrt(n), "SQRT")


@builtin("SQRTPI", "math", 1)
def fn_sqrtpi(ctx, number):
    """SQRTPI(number)
    Square root of number * PI."""
    n = _num(number, "SQRTPI")
    if n < 0:
        raise NumError("SQRTPI requires a non-negative number")
    return math.sqrt(n * math.pi)


@builtin("POWER", "math", 2)
def fn_power(ctx, number, power):
    """POWER(number, power)
    number raised to power; same as number ^ power."""
    return values.power(_num(number, "POWER", 1), _num(power, "POWER", 2))


@builtin("EXP", "math", 1)
def fn_exp(ctx, number):
    """EXP(number)
    e raised to the given power."""
    n = _num(number, "EXP")
    try:
        return math.exp(n)
    except OverflowError:
        raise NumError(f"EXP({n}) is too large") from None


@builtin("LN", "math", 1)
def fn_ln(ctx, number):
    """LN(number)
    Natural logarithm. #NUM! unless number > 0."""
    n = _num(number, "LN")
    if n <= 0:
        raise NumError("LN requires a positive number")
    return math.log(n)


@builtin("LOG", "math", 1, 2)
def fn_log(ctx, number, base=10):
    """LOG(number, [base])
    Logarithm of number to base (default 10)."""
    n = _num(number, "LOG", 1)
    b = _num(base, "LOG", 2)
    if n <= 0:
        raise NumError("LOG requires a positive number")
    if b <= 0 or b == 1:
        raise NumError("LOG base must be positive and not 1")
    result = math.log(n, b)
    nearest = round(result)
    return nearest if abs(result - nearest) < 1e-12 else result


@builtin("LOG10", "math", 1)
def fn_log10(ctx, number):
    """LOG10(number)
    Base-10 logarithm."""
    n = _num(number, "LOG10")
    if n <= 0:
        raise NumError("LOG10 requires a positive number")
    return values.normalize_number(math.log10(n))


@builtin("MOD", "math", 2)
def fn_mod(ctx, number, divisor):
    """MOD(number, divisor)
    Remainder after division; the result has the sign of the divisor."""
    n = _num(number, "MOD", 1)
    d = _num(divisor, "MOD", 2)
    if d == 0:
        raise DivisionByZero("MOD divisor is zero")
    result = n - d * math.floor(n / d)
    return values.normalize_number(round(result, 12)) if isinstance(result, float) else result


@builtin("QUOTIENT", "math", 2)
def fn_quotient(ctx, numerator, denominator):
    """QUOTIENT(numerator, denominator)
    Integer part of a division, truncated toward zero."""
    n = _num(numerator, "QUOTIENT", 1)
    d = _num(denominator, "QUOTIENT", 2)
    if d == 0:
        raise DivisionByZero("QUOTIENT denominator is zero")
    return int(n / d)


@builtin("INT", "math", 1)
def fn_int(ctx, number):
    """INT(number)
    Round down to the nearest integer (toward negative infinity)."""
    return math.floor(_num(number, "INT"))


@builtin("TRUNC", "math", 1, 2)
def fn_trunc(ctx, number, digits=0):
    """TRUNC(number, [digits])
    Truncate toward zero, keeping digits decimals."""
    n = _num(number, "TRUNC", 1)
    d = _int(digits, "TRUNC", 2)
    factor = 10 ** d
    return values.normalize_number(math.trunc(n * factor) / factor)


@builtin("ROUND", "math", 1, 2)
def fn_round(ctx, number, digits=0):
    """ROUND(number, [digits])
    Round to digits decimals (negative digits round to tens, hundreds ...).
    Halves round away from zero: ROUND(2.5) = 3, ROUND(-2.5) = -3."""
    n = _num(number, "ROUND", 1)
    d = _int(digits, "ROUND", 2)
    return values.normalize_number(float(round(n, d)))


@builtin("ROUNDUP", "math", 1, 2)
def fn_roundup(ctx, number, digits=0):
    """ROUNDUP(number, [digits])
    Round away from zero."""
    n = _num(number, "ROUNDUP", 1)
    d = _int(digits, "ROUNDUP", 2)
    factor = 10 ** d
    scaled = _round_half_up(n * factor, 9)
    result = math.ceil(abs(scaled)) / factor
    return values.normalize_number(math.copysign(result, n))


@builtin("ROUNDDOWN", "math", 1, 2)
def fn_rounddown(ctx, number, digits=0):
    """ROUNDDOWN(number, [digits])
    Round toward zero."""
    n = _num(number, "ROUNDDOWN", 1)
    d = _int(digits, "ROUNDDOWN", 2)
    factor = 10 ** d
    scaled = _round_half_up(n * factor, 9)
    result = math.floor(abs(scaled)) / factor
    return values.normalize_number(math.copysign(result, n))


@builtin("MROUND", "math", 2)
def fn_mround(ctx, number, multiple):
    """MROUND(number, multiple)
    Round to the nearest multiple; number and multiple must have the same sign."""
    n = _num(number, "MROUND", 1)
    m = _num(multiple, "MROUND", 2)
    if m == 0:
        return 0
    if n * m < 0:
        raise NumError("MROUND number and multiple must have the same sign")
    quotient = _round_half_up(n / m, 0)
    return values.normalize_number(_round_half_up(quotient * m, 12))


@builtin("CEILING", "math", 1, 2)
def fn_ceiling(ctx, number, significance=1):
    """CEILING(number, [significance])
    Round up to the next multiple of significance (default 1)."""
    n = _num(number, "CEILING", 1)
    s = _num(significance, "CEILING", 2)
    if s == 0:
        return 0
    if n > 0 and s < 0:
        raise NumError("CEILING significance must be positive for a positive number")
    s = abs(s)
    return values.normalize_number(_round_half_up(math.ceil(_round_half_up(n / s, 9)) * s, 12))


@builtin("FLOOR", "math", 1, 2)
def fn_floor(ctx, number, significance=1):
    """FLOOR(number, [significance])
    Round down to the previous multiple of significance (default 1)."""
    n = _num(number, "FLOOR", 1)
    s = _num(significance, "FLOOR", 2)
    if s == 0:
        raise DivisionByZero("FLOOR significance is zero")
    if n > 0 and s < 0:
        raise NumError("FLOOR significance must be positive for a positive number")
    s = abs(s)
    return values.normalize_number(_round_half_up(math.floor(_round_half_up(n / s, 9)) * s, 12))


@builtin("EVEN", "math", 1)
def fn_even(ctx, number):
    """EVEN(number)
    Round away from zero to the nearest even integer."""
    n = _num(number, "EVEN")
    result = math.ceil(abs(n))
    if result % 2:
        result += 1
    return int(math.copysign(result, n)) if n else 0


@builtin("ODD", "math", 1)
def fn_odd(ctx, number):
    """ODD(number)
    Round away from zero to the nearest odd integer."""
    n = _num(number, "ODD")
    result = math.ceil(abs(n))
    if result % 2 == 0:
        result += 1
    return int(math.copysign(result, n)) if n >= 0 else -result


@builtin("PI", "math", 0)
def fn_pi(ctx):
    """PI()
    The constant 3.14159265358979."""
    return math.pi


@builtin("SIN", "math", 1)
def fn_sin(ctx, angle):
    """SIN(angle)
    Sine of an angle (radians, or degrees in degree mode)."""
    return math.sin(_angle_in(ctx, _num(angle, "SIN")))


@builtin("COS", "math", 1)
def fn_cos(ctx, angle):
    """COS(angle)
    Cosine of an angle (radians, or degrees in degree mode)."""
    return math.cos(_angle_in(ctx, _num(angle, "COS")))


@builtin("TAN", "math", 1)
def fn_tan(ctx, angle):
    """TAN(angle)
    Tangent of an angle (radians, or degrees in degree mode)."""
    radians = _angle_in(ctx, _num(angle, "TAN"))
    if math.isclose(math.cos(radians), 0.0, abs_tol=1e-15):
        raise DivisionByZero("TAN is undefined at odd multiples of 90 degrees")
    return math.tan(radians)


@builtin("ASIN", "math", 1)
def fn_asin(ctx, number):
    """ASIN(number)
    Arcsine; number must be between -1 and 1."""
    n = _num(number, "ASIN")
    if not -1 <= n <= 1:
        raise NumError("ASIN requires a number between -1 and 1")
    return _angle_out(ctx, math.asin(n))


@builtin("ACOS", "math", 1)
def fn_acos(ctx, number):
    """ACOS(number)
    Arccosine; number must be between -1 and 1."""
    n = _num(number, "ACOS")
    if not -1 <= n <= 1:
        raise NumError("ACOS requires a number between -1 and 1")
    return _angle_out(ctx, math.acos(n))


@builtin("ATAN", "math", 1)
def fn_atan(ctx, number):
    """ATAN(number)
    Arctangent."""
    return _angle_out(ctx, math.atan(_num(number, "ATAN")))


@builtin("ATAN2", "math", 2)
def fn_atan2(ctx, x, y):
    """ATAN2(x, y)
    Angle of the point (x, y) from the x axis. Note the spreadsheet argument order."""
    xn = _num(x, "ATAN2", 1)
    yn = _num(y, "ATAN2", 2)
    if xn == 0 and yn == 0:
        raise DivisionByZero("ATAN2 is undefined at the origin")
    return _angle_out(ctx, math.atan2(yn, xn))


@builtin("SINH", "math", 1)
def fn_sinh(ctx, number):
    """SINH(number)
    Hyperbolic sine."""
    try:
        return math.sinh(_num(number, "SINH"))
    except OverflowError:
        raise NumError("SINH result is too large") from None


@builtin("COSH", "math", 1)
def fn_cosh(ctx, number):
    """COSH(number)
    Hyperbolic cosine."""
    try:
        return math.cosh(_num(number, "COSH"))
    except OverflowError:
        raise NumError("COSH result is too large") from None


@builtin("TANH", "math", 1)
def fn_tanh(ctx, number):
    """TANH(number)
    Hyperbolic tangent."""
    return math.tanh(_num(number, "TANH"))


@builtin("DEGREES", "math", 1)
def fn_degrees(ctx, radians):
    """DEGREES(radians)
    Convert radians to degrees."""
    return math.degrees(_num(radians, "DEGREES"))


@builtin("RADIANS", "math", 1)
def fn_radians(ctx, degrees):
    """RADIANS(degrees)
    Convert degrees to radians."""
    return math.radians(_num(degrees, "RADIANS"))


@builtin("FACT", "math", 1)
def fn_fact(ctx, number):
    """FACT(number)
    Factorial of the integer part of number (0 to 170)."""
    n = _int(number, "FACT", 1, minimum=0)
    if n > 170:
        raise NumError("FACT argument must be at most 170")
    return math.factorial(n)


@builtin("FACTDOUBLE", "math", 1)
def fn_factdouble(ctx, number):
    """FACTDOUBLE(number)
    Double factorial: n * (n-2) * (n-4) ..."""
    n = _int(number, "FACTDOUBLE", 1, minimum=-1)
    if n > 300:
        raise NumError("FACTDOUBLE argument must be at most 300")
    result = 1
    while n > 1:
        result *= n
        n -= 2
    return result


@builtin("COMBIN", "math", 2)
def fn_combin(ctx, n, k):
    """COMBIN(n, k)
    Number of ways to choose k items from n, ignoring order."""
    nn = _int(n, "COMBIN", 1, minimum=0)
    kk = _int(k, "COMBIN", 2, minimum=0)
    if kk > nn:
        raise NumError("COMBIN k must not exceed n")
    return math.comb(nn, kk)


@builtin("PERMUT", "math", 2)
def fn_permut(ctx, n, k):
    """PERMUT(n, k)
    Number of ordered arrangements of k items chosen from n."""
    nn = _int(n, "PERMUT", 1, minimum=0)
    kk = _int(k, "PERMUT", 2, minimum=0)
    if kk > nn:
        raise NumError("PERMUT k must not exceed n")
    return math.perm(nn, kk)


@builtin("GCD", "math", 1, None)
def fn_gcd(ctx, *numbers):
    """GCD(number1, [number2], ...)
    Greatest common divisor of non-negative integers."""
    ints = [_int(v, "GCD", i, minimum=0) for i, v in enumerate(_flatten(numbers), start=1)]
    return math.gcd(*ints)


@builtin("LCM", "math", 1, None)
def fn_lcm(ctx, *numbers):
    """LCM(number1, [number2], ...)
    Least common multiple of non-negative integers."""
    ints = [_int(v, "LCM", i, minimum=0) for i, v in enumerate(_flatten(numbers), start=1)]
    return math.lcm(*ints)


@builtin("RAND", "math", 0)
def fn_rand(ctx):
    """RAND()
    Random number in [0, 1). Reproducible when the calculator has a seed."""
    return ctx.options.rng.random()


@builtin("RANDBETWEEN", "math", 2)
def fn_randbetween(ctx, bottom, top):
    """RANDBETWEEN(bottom, top)
    Random integer between bottom and top inclusive."""
    low = math.ceil(_num(bottom, "RANDBETWEEN", 1))
    high = math.floor(_num(top, "RANDBETWEEN", 2))
    if low > high:
        raise NumError("RANDBETWEEN bottom must not exceed top")
    return ctx.options.rng.randint(low, high)


_ROMAN = [(1000, "M"), (900, "CM"), (500, "D"), (400, "CD"), (100, "C"), (90, "XC"),
          (50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")]


@builtin("ROMAN", "math", 1)
def fn_roman(ctx, number):
    """ROMAN(number)
    Classic Roman numeral for an integer from 0 to 3999 (0 gives "")."""
    n = _int(number, "ROMAN", 1, minimum=0)
    if n > 3999:
        raise NumError("ROMAN supports numbers up to 3999")
    out = []
    for value, letters in _ROMAN:
        count, n = divmod(n, value)
        out.append(letters * count)
    return "".join(out)


@builtin("ARABIC", "math", 1)
def fn_arabic(ctx, text):
    """ARABIC(text)
    Value of a Roman numeral; a leading "-" makes it negative."""
    s = _text(text, "ARABIC").strip().upper()
    sign = -1 if s.startswith("-") else 1
    s = s.lstrip("-")
    symbols = {letters: value for value, letters in _ROMAN if len(letters) == 1}
    total, previous = 0, 0
    for ch in reversed(s):
        if ch not in symbols:
            raise ArgumentError(f"ARABIC: '{text}' is not a Roman numeral")
        value = symbols[ch]
        total += -value if value < previous else value
        previous = max(previous, value)
    return sign * total


@builtin("BASE", "math", 2, 3)
def fn_base(ctx, number, radix, min_length=0):
    """BASE(number, radix, [min_length])
    Text representation of a non-negative integer in radix 2 to 36."""
    n = _int(number, "BASE", 1, minimum=0)
    r = _int(radix, "BASE", 2)
    width = _int(min_length, "BASE", 3, minimum=0)
    if not 2 <= r <= 36:
        raise NumError("BASE radix must be between 2 and 36")
    digits = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    out = ""
    while n:
        n, rem = divmod(n, r)
        out = digits[rem] + out
    return (out or "0").rjust(width, "0")


@builtin("DECIMAL", "math", 2)
def fn_decimal(ctx, text, radix):
    """DECIMAL(text, radix)
    Convert text in radix 2 to 36 to a number."""
    s = _text(text, "DECIMAL", 1).strip()
    r = _int(radix, "DECIMAL", 2)
    if not 2 <= r <= 36:
        raise NumError("DECIMAL radix must be between 2 and 36")
    try:
        return int(s, r) if s else 0
    except ValueError:
        raise NumError(f"DECIMAL: '{s}' is not a valid base-{r} number") from None


@builtin("SUMSQ", "math", 1, None)
def fn_sumsq(ctx, *numbers):
    """SUMSQ(number1, [number2], ...)
    Sum of the squares of the arguments."""
    return sum(n * n for n in _collect_numbers(numbers, "SUMSQ"))


@builtin("SUMPRODUCT", "math", 1, None)
def fn_sumproduct(ctx, *lists):
    """SUMPRODUCT(list1, [list2], ...)
    Multiply corresponding items of equally long lists and add the products.
    Non-numeric items count as zero."""
    flat = [_flatten(_list(x)) for x in lists]
    _same_length("SUMPRODUCT", *flat)
    total = 0
    for row in zip(*flat):
        product = 1
        for item in row:
            product *= item if values.is_number(item) else 0
        total += product
    return values.normalize_number(total)


@builtin("CLAMP", "math", 3)
def fn_clamp(ctx, number, low, high):
    """CLAMP(number, low, high)
    Limit number to the range low..high."""
    n = _num(number, "CLAMP", 1)
    lo = _num(low, "CLAMP", 2)
    hi = _num(high, "CLAMP", 3)
    if lo > hi:
        raise NumError("CLAMP low must not exceed high")
    return min(max(n, lo), hi)


@builtin("HYPOT", "math", 1, None)
def fn_hypot(ctx, *numbers):
    """HYPOT(number1, [number2], ...)
    Euclidean length sqrt(a^2 + b^2 + ...)."""
    return math.hypot(*_collect_numbers(numbers, "HYPOT"))

# ---------------------------------------------------------------------------
# Statistics and aggregates
# ---------------------------------------------------------------------------


def _sum_quantities(items: list[object], fn: str) -> Quantity | None:
    """If every non-blank item is a quantity, add them in the first one's unit."""
    flat = [v for v in _flatten(items) if v is not None]
    if not flat or not all(isinstance(v, Quantity) for v in flat):
        if any(isinstance(v, Quantity) for v in flat):
            raise UnitError(f"{fn} cannot mix quantities with plain numbers")
        return None
    total = flat[0]
    for item in flat[1:]:
        total = total.add(item)
    return total


@builtin("SUM", "statistics", 1, None)
def fn_sum(ctx, *numbers):
    """SUM(number1, [number2], ...)
    Add numbers; lists are flattened and text inside lists is ignored.
    Quantities with compatible units can be summed too."""
    quantity = _sum_quantities(list(numbers), "SUM")
    if quantity is not None:
        return quantity
    return values.normalize_number(math.fsum(_collect_numbers(numbers, "SUM")))


@builtin("PRODUCT", "statistics", 1, None)
def fn_product(ctx, *numbers):
    """PRODUCT(number1, [number2], ...)
    Multiply all numbers. An empty selection gives 0."""
    nums = _collect_numbers(numbers, "PRODUCT")
    if not nums:
        return 0
    return _finite(math.prod(nums), "PRODUCT")


@builtin("COUNT", "statistics", 1, None)
def fn_count(ctx, *items):
    """COUNT(value1, [value2], ...)
    Count the numbers (and dates) among the values."""
    count = 0
    for item in _flatten(items):
        if values.is_number(item) or isinstance(item, dt.date):
            count += 1
    return count


@builtin("COUNTA", "statistics", 1, None)
def fn_counta(ctx, *items):
    """COUNTA(value1, [value2], ...)
    Count the values that are not blank."""
    return sum(1 for item in _flatten(items) if item is not None)


@builtin("COUNTBLANK", "statistics", 1, None)
def fn_countblank(ctx, *items):
    """COUNTBLANK(value1, [value2], ...)
    Count blanks and empty text."""
    return sum(1 for item in _flatten(items) if item is None or item == "")


@builtin("AVERAGE", "statistics", 1, None)
def fn_average(ctx, *numbers):
    """AVERAGE(number1, [number2], ...)
    Arithmetic mean. #DIV/0! when there are no numbers."""
    nums = _collect_numbers(numbers, "AVERAGE")
    if not nums:
        raise DivisionByZero("AVERAGE has no numbers to average")
    return values.normalize_number(math.fsum(nums) / len(nums))


@builtin("AVERAGEA", "statistics", 1, None)
def fn_averagea(ctx, *items):
    """AVERAGEA(value1, [value2], ...)
    Mean where text counts as 0 and logicals as 0 or 1; blanks are skipped."""
    nums = []
    for item in _flatten(items):
        if item is None:
            continue
        if isinstance(item, bool):
            nums.append(int(item))
        elif values.is_number(item):
            nums.append(item)
        elif isinstance(item, str):
            nums.append(0)
        else:
            nums.append(values.to_number(item, "AVERAGEA"))
    if not nums:
        raise DivisionByZero("AVERAGEA has no values to average")
    return values.normalize_number(math.fsum(nums) / len(nums))


@builtin("MIN", "statistics", 1, None)
def fn_min(ctx, *numbers):
    """MIN(number1, [number2], ...)
    Smallest number; 0 if there are none."""
    nums = _collect_numbers(numbers, "MIN")
    return min(nums) if nums else 0


@builtin("MAX", "statistics", 1, None)
def fn_max(ctx, *numbers):
    """MAX(number1, [number2], ...)
    Largest number; 0 if there are none."""
    nums = _collect_numbers(numbers, "MAX")
    return max(nums) if nums else 0


@builtin("MEDIAN", "statistics", 1, None)
def fn_median(ctx, *numbers):
    """MEDIAN(number1, [number2], ...)
    Middle value (average of the two middle values for an even count)."""
    nums = _collect_numbers(numbers, "MEDIAN")
    if not nums:
        raise NumError("MEDIAN has no numbers")
    return values.normalize_number(statistics.median(nums))


@builtin("MODE", "statistics", 1, None)
def fn_mode(ctx, *numbers):
    """MODE(number1, [number2], ...)
    Most frequent number; the first one seen wins ties. #N/A if nothing repeats."""
    nums = _collect_numbers(numbers, "MODE")
    counts: dict[float, int] = {}
    for n in nums:
        counts[n] = counts.get(n, 0) + 1
    best = max(counts.values(), default=0)
    if best < 2:
        raise NotAvailable("MODE: no value occurs more than once")
    return next(n for n in nums if counts[n] == best)


def _variance(nums: list[float], sample: bool, fn: str) -> float:
    needed = 2 if sample else 1
    if len(nums) < needed:
        raise DivisionByZero(f"{fn} needs at least {needed} number{'s' if needed > 1 else ''}")
    mean = math.fsum(nums) / len(nums)
    squares = math.fsum((x - mean) ** 2 for x in nums)
    return squares / (len(nums) - 1 if sample else len(nums))


@builtin("VAR", "statistics", 1, None)
def fn_var(ctx, *numbers):
    """VAR(number1, [number2], ...)
    Sample variance (divides by n - 1)."""
    return _variance(_collect_numbers(numbers, "VAR"), True, "VAR")


@builtin("VARP", "statistics", 1, None)
def fn_varp(ctx, *numbers):
    """VARP(number1, [number2], ...)
    Population variance (divides by n)."""
    return _variance(_collect_numbers(numbers, "VARP"), False, "VARP")


@builtin("STDEV", "statistics", 1, None)
def fn_stdev(ctx, *numbers):
    """STDEV(number1, [number2], ...)
    Sample standard deviation."""
    return math.sqrt(_variance(_collect_numbers(numbers, "STDEV"), True, "STDEV"))


@builtin("STDEVP", "statistics", 1, None)
def fn_stdevp(ctx, *numbers):
    """STDEVP(number1, [number2], ...)
    Population standard deviation."""
    return math.sqrt(_variance(_collect_numbers(numbers, "STDEVP"), False, "STDEVP"))


@builtin("DEVSQ", "statistics", 1, None)
def fn_devsq(ctx, *numbers):
    """DEVSQ(number1, [number2], ...)
    Sum of squared deviations from the mean."""
    nums = _collect_numbers(numbers, "DEVSQ")
    if not nums:
        raise NumError("DEVSQ has no numbers")
    mean = math.fsum(nums) / len(nums)
    return values.normalize_number(math.fsum((x - mean) ** 2 for x in nums))


@builtin("AVEDEV", "statistics", 1, None)
def fn_avedev(ctx, *numbers):
    """AVEDEV(number1, [number2], ...)
    Average absolute deviation from the mean."""
    nums = _collect_numbers(numbers, "AVEDEV")
    if not nums:
        raise NumError("AVEDEV has no numbers")
    mean = math.fsum(nums) / len(nums)
    return values.normalize_number(math.fsum(abs(x - mean) for x in nums) / len(nums))


@builtin("GEOMEAN", "statistics", 1, None)
def fn_geomean(ctx, *numbers):
    """GEOMEAN(number1, [number2], ...)
    Geometric mean of positive numbers."""
    nums = _collect_numbers(numbers, "GEOMEAN")
    if not nums or any(n <= 0 for n in nums):
        raise NumError("GEOMEAN requires positive numbers")
    return math.exp(math.fsum(math.log(n) for n in nums) / len(nums))


@builtin("HARMEAN", "statistics", 1, None)
def fn_harmean(ctx, *numbers):
    """HARMEAN(number1, [number2], ...)
    Harmonic mean of positive numbers."""
    nums = _collect_numbers(numbers, "HARMEAN")
    if not nums or any(n <= 0 for n in nums):
        raise NumError("HARMEAN requires positive numbers")
    return len(nums) / math.fsum(1 / n for n in nums)


@builtin("LARGE", "statistics", 2)
def fn_large(ctx, numbers, k):
    """LARGE(list, k)
    The k-th largest number in a list (k = 1 is the maximum)."""
    nums = sorted(_collect_numbers([_list(numbers)], "LARGE"), reverse=True)
    kk = _int(k, "LARGE", 2)
    if not 1 <= kk <= len(nums):
        raise NumError(f"LARGE k must be between 1 and {len(nums)}, got {kk}")
    return nums[kk - 1]


@builtin("SMALL", "statistics", 2)
def fn_small(ctx, numbers, k):
    """SMALL(list, k)
    The k-th smallest number in a list (k = 1 is the minimum)."""
    nums = sorted(_collect_numbers([_list(numbers)], "SMALL"))
    kk = _int(k, "SMALL", 2)
    if not 1 <= kk <= len(nums):
        raise NumError(f"SMALL k must be between 1 and {len(nums)}, got {kk}")
    return nums[kk - 1]


@builtin("RANK", "statistics", 2, 3)
def fn_rank(ctx, number, numbers, ascending=False):
    """RANK(number, list, [ascending])
    Position of number in the list sorted descending (or ascending); ties share a rank."""
    n = _num(number, "RANK", 1)
    nums = _collect_numbers([_list(numbers)], "RANK")
    if n not in nums:
        raise NotAvailable(f"RANK: {n} is not in the list")
    if _bool(ascending, "RANK", 3):
        return 1 + sum(1 for x in nums if x < n)
    return 1 + sum(1 for x in nums if x > n)


def _percentile(nums: list[float], p: float, fn: str) -> float:
    if not nums:
        raise NumError(f"{fn} has no numbers")
    if not 0 <= p <= 1:
        raise NumError(f"{fn} percentile must be between 0 and 1")
    ordered = sorted(nums)
    position = p * (len(ordered) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(ordered) - 1)
    fraction = position - lower
    return values.normalize_number(ordered[lower] + (ordered[upper] - ordered[lower]) * fraction)


@builtin("PERCENTILE", "statistics", 2)
def fn_percentile(ctx, numbers, k):
    """PERCENTILE(list, k)
    k-th percentile (0..1) with linear interpolation between closest ranks."""
    return _percentile(_collect_numbers([_list(numbers)], "PERCENTILE"), _num(k, "PERCENTILE", 2), "PERCENTILE")


@builtin("QUARTILE", "statistics", 2)
def fn_quartile(ctx, numbers, quart):
    """QUARTILE(list, quart)
    Quartile 0 (minimum) to 4 (maximum) of a list."""
    q = _int(quart, "QUARTILE", 2)
    if not 0 <= q <= 4:
        raise NumError("QUARTILE quart must be 0, 1, 2, 3 or 4")
    return _percentile(_collect_numbers([_list(numbers)], "QUARTILE"), q / 4, "QUARTILE")


@builtin("SUMIF", "statistics", 2, 3)
def fn_sumif(ctx, items, criterion, sum_items=None):
    """SUMIF(list, criterion, [sum_list])
    Add the items (or the matching items of sum_list) that meet the criterion,
    e.g. SUMIF(amounts, ">100") or SUMIF(regions, "North", sales)."""
    test = _flatten(_list(items))
    targets = test if sum_items is None else _flatten(_list(sum_items))
    _same_length("SUMIF", test, targets)
    match = _criterion(criterion)
    total = math.fsum(t for v, t in zip(test, targets) if match(v) and values.is_number(t))
    return values.normalize_number(total)


@builtin("COUNTIF", "statistics", 2)
def fn_countif(ctx, items, criterion):
    """COUNTIF(list, criterion)
    Count the items that meet the criterion, e.g. COUNTIF(names, "a*")."""
    match = _criterion(criterion)
    return sum(1 for v in _flatten(_list(items)) if match(v))


@builtin("AVERAGEIF", "statistics", 2, 3)
def fn_averageif(ctx, items, criterion, average_items=None):
    """AVERAGEIF(list, criterion, [average_list])
    Mean of the items (or of average_list) where the criterion holds."""
    test = _flatten(_list(items))
    targets = test if average_items is None else _flatten(_list(average_items))
    _same_length("AVERAGEIF", test, targets)
    match = _criterion(criterion)
    chosen = [t for v, t in zip(test, targets) if match(v) and values.is_number(t)]
    if not chosen:
        raise DivisionByZero("AVERAGEIF: no items meet the criterion")
    return values.normalize_number(math.fsum(chosen) / len(chosen))


def _multi_criteria(fn: str, pairs: tuple) -> list[bool]:
    if len(pairs) % 2:
        raise ArgumentError(f"{fn} expects list/criterion pairs")
    mask: list[bool] | None = None
    for i in range(0, len(pairs), 2):
        items = _flatten(_list(pairs[i]))
        match = _criterion(pairs[i + 1])
        result = [match(v) for v in items]
        if mask is None:
            mask = result
        else:
            _same_length(fn, mask, result)
            mask = [a and b for a, b in zip(mask, result)]
    return mask or []


@builtin("SUMIFS", "statistics", 3, None)
def fn_sumifs(ctx, sum_items, *pairs):
    """SUMIFS(sum_list, list1, criterion1, [list2, criterion2], ...)
    Add sum_list items where every criterion holds."""
    targets = _flatten(_list(sum_items))
    mask = _multi_criteria("SUMIFS", pairs)
    _same_length("SUMIFS", targets, mask)
    return values.normalize_number(math.fsum(t for t, ok in zip(targets, mask) if ok and values.is_number(t)))


@builtin("COUNTIFS", "statistics", 2, None)
def fn_countifs(ctx, *pairs):
    """COUNTIFS(list1, criterion1, [list2, criterion2], ...)
    Count positions where every criterion holds."""
    return sum(_multi_criteria("COUNTIFS", pairs))


@builtin("CORREL", "statistics", 2)
def fn_correl(ctx, xs, ys):
    """CORREL(list1, list2)
    Pearson correlation coefficient of two equally long lists."""
    a, b = _paired_numbers("CORREL", xs, ys)
    if len(a) < 2:
        raise DivisionByZero("CORREL needs at least two pairs")
    try:
        return statistics.correlation(a, b)
    except statistics.StatisticsError:
        raise DivisionByZero("CORREL: one of the lists is constant") from None


def _paired_numbers(fn: str, xs, ys) -> tuple[list[float], list[float]]:
    a, b = _flatten(_list(xs)), _flatten(_list(ys))
    _same_length(fn, a, b)
    pairs = [(x, y) for x, y in zip(a, b) if values.is_number(x) and values.is_number(y)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


@builtin("SLOPE", "statistics", 2)
def fn_slope(ctx, known_ys, known_xs):
    """SLOPE(known_ys, known_xs)
    Slope of the least-squares regression line."""
    ys, xs = _paired_numbers("SLOPE", known_ys, known_xs)
    if len(xs) < 2 or len(set(xs)) == 1:
        raise DivisionByZero("SLOPE needs at least two different x values")
    return statistics.linear_regression(xs, ys).slope


@builtin("INTERCEPT", "statistics", 2)
def fn_intercept(ctx, known_ys, known_xs):
    """INTERCEPT(known_ys, known_xs)
    Y intercept of the least-squares regression line."""
    ys, xs = _paired_numbers("INTERCEPT", known_ys, known_xs)
    if len(xs) < 2 or len(set(xs)) == 1:
        raise DivisionByZero("INTERCEPT needs at least two different x values")
    return statistics.linear_regression(xs, ys).intercept


@builtin("FORECAST", "statistics", 3)
def fn_forecast(ctx, x, known_ys, known_xs):
    """FORECAST(x, known_ys, known_xs)
    Predict y at x using linear regression."""
    xv = _num(x, "FORECAST", 1)
    ys, xs = _paired_numbers("FORECAST", known_ys, known_xs)
    if len(xs) < 2 or len(set(xs)) == 1:
        raise DivisionByZero("FORECAST needs at least two different x values")
    fit = statistics.linear_regression(xs, ys)
    return values.normalize_number(fit.intercept + fit.slope * xv)

# ---------------------------------------------------------------------------
# Text
# ---------------------------------------------------------------------------


@builtin("LEN", "text", 1)
def fn_len(ctx, text):
    """LEN(text)
    Number of characters in text."""
    return len(_text(text, "LEN"))


@builtin("UPPER", "text", 1)
def fn_upper(ctx, text):
    """UPPER(text)
    Convert text to upper case."""
    return _text(text, "UPPER").upper()


@builtin("LOWER", "text", 1)
def fn_lower(ctx, text):
    """LOWER(text)
    Convert text to lower case."""
    return _text(text, "LOWER").lower()


@builtin("PROPER", "text", 1)
def fn_proper(ctx, text):
    """PROPER(text)
    Capitalise the first letter of every word: PROPER("o'neil smith") = "O'Neil Smith"."""
    s = _text(text, "PROPER")
    out, previous_letter = [], False
    for ch in s:
        out.append(ch.lower() if previous_letter else ch.upper())
        previous_letter = ch.isalpha()
    return "".join(out)


@builtin("TRIM", "text", 1)
def fn_trim(ctx, text):
    """TRIM(text)
    Remove leading and trailing spaces and collapse inner runs of spaces to one."""
    return " ".join(part for part in _text(text, "TRIM").split(" ") if part)


@builtin("CLEAN", "text", 1)
def fn_clean(ctx, text):
    """CLEAN(text)
    Remove non-printable control characters."""
    return "".join(ch for ch in _text(text, "CLEAN") if unicodedata.category(ch) != "Cc")


@builtin("LEFT", "text", 1, 2)
def fn_left(ctx, text, count=1):
    """LEFT(text, [count])
    The first count characters (default 1)."""
    n = _int(count, "LEFT", 2, minimum=0)
    return _text(text, "LEFT")[:n]


@builtin("RIGHT", "text", 1, 2)
def fn_right(ctx, text, count=1):
    """RIGHT(text, [count])
    The last count characters (default 1)."""
    n = _int(count, "RIGHT", 2, minimum=0)
    s = _text(text, "RIGHT")
    return s[len(s) - n:] if n else ""


@builtin("MID", "text", 3)
def fn_mid(ctx, text, start, count):
    """MID(text, start, count)
    count characters starting at position start (1-based)."""
    s = _text(text, "MID")
    begin = _int(start, "MID", 2, minimum=1)
    n = _int(count, "MID", 3, minimum=0)
    return s[begin - 1:begin - 1 + n]


@builtin("FIND", "text", 2, 3)
def fn_find(ctx, needle, haystack, start=1):
    """FIND(find_text, within_text, [start])
    1-based position of find_text in within_text, case-sensitive. #VALUE! if absent."""
    n = _text(needle, "FIND", 1)
    h = _text(haystack, "FIND", 2)
    begin = _int(start, "FIND", 3, minimum=1)
    if begin > len(h) + 1:
        raise ArgumentError("FIND start is beyond the end of the text")
    index = h.find(n, begin - 1)
    if index < 0:
        raise ArgumentError(f"FIND: \"{n}\" not found")
    return index + 1


@builtin("SEARCH", "text", 2, 3)
def fn_search(ctx, needle, haystack, start=1):
    """SEARCH(find_text, within_text, [start])
    Like FIND but case-insensitive, with * and ? wildcards."""
    n = _text(needle, "SEARCH", 1)
    h = _text(haystack, "SEARCH", 2)
    begin = _int(start, "SEARCH", 3, minimum=1)
    if begin > len(h) + 1:
        raise ArgumentError("SEARCH start is beyond the end of the text")
    pattern = _wildcard_regex(n).pattern.replace(".*", ".*?")
    match = re.compile(pattern, re.I | re.S).search(h, begin - 1)
    if not match:
        raise ArgumentError(f"SEARCH: \"{n}\" not found")
    return match.start() + 1


@builtin("SUBSTITUTE", "text", 3, 4)
def fn_substitute(ctx, text, old, new, instance=None):
    """SUBSTITUTE(text, old_text, new_text, [instance])
    Replace occurrences of old_text (all, or only the n-th instance)."""
    s = _text(text, "SUBSTITUTE", 1)
    o = _text(old, "SUBSTITUTE", 2)
    n = _text(new, "SUBSTITUTE", 3)
    if o == "":
        return s
    if instance is None:
        return s.replace(o, n)
    which = _int(instance, "SUBSTITUTE", 4, minimum=1)
    index = -1
    for _ in range(which):
        index = s.find(o, index + 1)
        if index < 0:
            return s
    return s[:index] + n + s[index + len(o):]


@builtin("REPLACE", "text", 4)
def fn_replace(ctx, text, start, count, new):
    """REPLACE(text, start, count, new_text)
    Replace count characters starting at start with new_text."""
    s = _text(text, "REPLACE", 1)
    begin = _int(start, "REPLACE", 2, minimum=1)
    n = _int(count, "REPLACE", 3, minimum=0)
    return s[:begin - 1] + _text(new, "REPLACE", 4) + s[begin - 1 + n:]


@builtin("REPT", "text", 2)
def fn_rept(ctx, text, times):
    """REPT(text, times)
    Repeat text; the result may not exceed 32767 characters."""
    s = _text(text, "REPT", 1)
    n = _int(times, "REPT", 2, minimum=0)
    if len(s) * n > 32767:
        raise ArgumentError("REPT result would be longer than 32767 characters")
    return s * n


@builtin("CONCAT", "text", 1, None)
def fn_concat(ctx, *items):
    """CONCAT(text1, [text2], ...)
    Join all values (lists are flattened) without a separator."""
    return "".join(values.to_text(v) for v in _flatten(items))


@builtin("CONCATENATE", "text", 1, None)
def fn_concatenate(ctx, *items):
    """CONCATENATE(text1, [text2], ...)
    Join values; unlike CONCAT, list arguments are rejected."""
    for i, item in enumerate(items, start=1):
        if isinstance(item, list):
            raise ArgumentError(f"CONCATENATE argument {i} is a list; use CONCAT or TEXTJOIN")
    return "".join(values.to_text(v) for v in items)


@builtin("TEXTJOIN", "text", 3, None)
def fn_textjoin(ctx, delimiter, ignore_empty, *items):
    """TEXTJOIN(delimiter, ignore_empty, text1, [text2], ...)
    Join values with a delimiter, optionally skipping empty ones."""
    sep = _text(delimiter, "TEXTJOIN", 1)
    skip = _bool(ignore_empty, "TEXTJOIN", 2)
    parts = [values.to_text(v) for v in _flatten(items)]
    if skip:
        parts = [p for p in parts if p != ""]
    return sep.join(parts)


@builtin("EXACT", "text", 2)
def fn_exact(ctx, a, b):
    """EXACT(text1, text2)
    TRUE if both texts are identical, case included."""
    return _text(a, "EXACT", 1) == _text(b, "EXACT", 2)


@builtin("CHAR", "text", 1)
def fn_char(ctx, number):
    """CHAR(number)
    Character for a code from 1 to 255 (Latin-1)."""
    n = _int(number, "CHAR")
    if not 1 <= n <= 255:
        raise ArgumentError("CHAR expects a number from 1 to 255")
    return bytes([n]).decode("latin-1")


@builtin("CODE", "text", 1)
def fn_code(ctx, text):
    """CODE(text)
    Latin-1 code of the first character."""
    s = _text(text, "CODE")
    if not s:
        raise ArgumentError("CODE of empty text")
    try:
        return s[0].encode("latin-1")[0]
    except UnicodeEncodeError:
        return 63  # '?' like other spreadsheets


@builtin("UNICHAR", "text", 1)
def fn_unichar(ctx, number):
    """UNICHAR(number)
    Unicode character for a code point."""
    n = _int(number, "UNICHAR")
    if not 1 <= n <= 0x10FFFF or 0xD800 <= n <= 0xDFFF:
        raise ArgumentError(f"UNICHAR: {n} is not a valid code point")
    return chr(n)


@builtin("UNICODE", "text", 1)
def fn_unicode(ctx, text):
    """UNICODE(text)
    Code point of the first character."""
    s = _text(text, "UNICODE")
    if not s:
        raise ArgumentError("UNICODE of empty text")
    return ord(s[0])


@builtin("VALUE", "text", 1)
def fn_value(ctx, text):
    """VALUE(text)
    Convert numeric, percent or date text to a number."""
    if values.is_number(text):
        return text
    s = _text(text, "VALUE")
    number = values.parse_number_text(s)
    if number is not None:
        return values.normalize_number(number)
    try:
        return dates.to_serial(dates.parse_date(s))
    except ExprError:
        raise ArgumentError(f"VALUE: \"{s}\" is not a number") from None


@builtin("NUMBERVALUE", "text", 1, 3)
def fn_numbervalue(ctx, text, decimal=".", group=","):
    """NUMBERVALUE(text, [decimal_separator], [group_separator])
    Locale-independent number parsing: NUMBERVALUE("1.234,5", ",", ".") = 1234.5."""
    s = _text(text, "NUMBERVALUE", 1).replace(" ", "")
    dec = _text(decimal, "NUMBERVALUE", 2)[:1]
    grp = _text(group, "NUMBERVALUE", 3)[:1]
    if not dec or dec == grp:
        raise ArgumentError("NUMBERVALUE separators must be distinct single characters")
    if s.count(dec) > 1:
        raise ArgumentError(f"NUMBERVALUE: \"{text}\" has more than one decimal separator")
    whole, _, frac = s.partition(dec)
    if grp in frac:
        raise ArgumentError("NUMBERVALUE: group separator after the decimal separator")
    normalized = whole.replace(grp, "") + ("." + frac if frac else "")
    number = values.parse_number_text(normalized)
    if number is None:
        raise ArgumentError(f"NUMBERVALUE: \"{text}\" is not a number")
    return values.normalize_number(number)


@builtin("TEXT", "text", 2)
def fn_text(ctx, value, format_code):
    """TEXT(value, format)
    Format a number or date with a format code, e.g. TEXT(0.25, "0.0%") or
    TEXT(TODAY(), "yyyy-mm-dd")."""
    pattern = _text(format_code, "TEXT", 2)
    if isinstance(value, dt.date):
        section = formatting.split_sections(pattern)[0]
        if formatting.is_date_format(section):
            return formatting.format_date(value, section)
        value = dates.to_serial(value)
    if isinstance(value, str):
        number = values.parse_number_text(value)
        if number is None:
            return formatting.format_text(value, pattern)
        value = number
    return formatting.format_number(_num(value, "TEXT", 1), pattern)


@builtin("FIXED", "text", 1, 3)
def fn_fixed(ctx, number, decimals=2, no_commas=False):
    """FIXED(number, [decimals], [no_commas])
    Round to decimals and format as text with thousands separators."""
    n = _num(number, "FIXED", 1)
    d = _int(decimals, "FIXED", 2)
    if d > 127:
        raise ArgumentError("FIXED decimals must be at most 127")
    pattern = ("0" if _bool(no_commas, "FIXED", 3) else "#,##0") + ("." + "0" * d if d > 0 else "")
    if d < 0:
        n = _round_half_up(n, d)
    return formatting.format_number(n, pattern)


@builtin("DOLLAR", "text", 1, 2)
def fn_dollar(ctx, number, decimals=2):
    """DOLLAR(number, [decimals])
    Currency text: DOLLAR(-1234.5) = "($1,234.50)"."""
    n = _num(number, "DOLLAR", 1)
    d = _int(decimals, "DOLLAR", 2, minimum=0)
    core = "$#,##0" + ("." + "0" * d if d else "")
    return formatting.format_number(n, f"{core};({core})")


@builtin("TEXTBEFORE", "text", 2, 3)
def fn_textbefore(ctx, text, delimiter, instance=1):
    """TEXTBEFORE(text, delimiter, [instance])
    Text before the n-th delimiter; a negative instance counts from the end."""
    s = _text(text, "TEXTBEFORE", 1)
    d = _text(delimiter, "TEXTBEFORE", 2)
    n = _int(instance, "TEXTBEFORE", 3)
    index = _nth_index(s, d, n, "TEXTBEFORE")
    return s[:index]


@builtin("TEXTAFTER", "text", 2, 3)
def fn_textafter(ctx, text, delimiter, instance=1):
    """TEXTAFTER(text, delimiter, [instance])
    Text after the n-th delimiter; a negative instance counts from the end."""
    s = _text(text, "TEXTAFTER", 1)
    d = _text(delimiter, "TEXTAFTER", 2)
    n = _int(instance, "TEXTAFTER", 3)
    index = _nth_index(s, d, n, "TEXTAFTER")
    return s[index + len(d):]


def _nth_index(s: str, delimiter: str, n: int, fn: str) -> int:
    if n == 0:
        raise ArgumentError(f"{fn} instance must not be 0")
    if delimiter == "":
        return 0 if n > 0 else len(s)
    positions = [m.start() for m in re.finditer(re.escape(delimiter), s)]
    if abs(n) > len(positions):
        raise NotAvailable(f"{fn}: delimiter \"{delimiter}\" occurs fewer than {abs(n)} times")
    return positions[n - 1] if n > 0 else positions[n]


@builtin("TEXTSPLIT", "text", 2, 3)
def fn_textsplit(ctx, text, delimiter, ignore_empty=False):
    """TEXTSPLIT(text, delimiter, [ignore_empty])
    Split text into a list at each delimiter."""
    s = _text(text, "TEXTSPLIT", 1)
    d = _text(delimiter, "TEXTSPLIT", 2)
    if d == "":
        raise ArgumentError("TEXTSPLIT delimiter must not be empty")
    parts = s.split(d)
    if _bool(ignore_empty, "TEXTSPLIT", 3):
        parts = [p for p in parts if p]
    return parts


@builtin("STARTSWITH", "text", 2)
def fn_startswith(ctx, text, prefix):
    """STARTSWITH(text, prefix)
    TRUE if text begins with prefix (case-insensitive)."""
    return _text(text, "STARTSWITH", 1).casefold().startswith(_text(prefix, "STARTSWITH", 2).casefold())


@builtin("ENDSWITH", "text", 2)
def fn_endswith(ctx, text, suffix):
    """ENDSWITH(text, suffix)
    TRUE if text ends with suffix (case-insensitive)."""
    return _text(text, "ENDSWITH", 1).casefold().endswith(_text(suffix, "ENDSWITH", 2).casefold())


@builtin("CONTAINS", "text", 2)
def fn_contains(ctx, text, part):
    """CONTAINS(text, part)
    TRUE if part occurs in text (case-insensitive)."""
    return _text(part, "CONTAINS", 2).casefold() in _text(text, "CONTAINS", 1).casefold()


@builtin("PADLEFT", "text", 2, 3)
def fn_padleft(ctx, text, width, fill=" "):
    """PADLEFT(text, width, [fill])
    Pad text on the left with fill (one character) up to width characters."""
    s = _text(text, "PADLEFT", 1)
    w = _int(width, "PADLEFT", 2, minimum=0)
    f = _text(fill, "PADLEFT", 3)
    if len(f) != 1:
        raise ArgumentError("PADLEFT fill must be a single character")
    return s.rjust(w, f)


@builtin("PADRIGHT", "text", 2, 3)
def fn_padright(ctx, text, width, fill=" "):
    """PADRIGHT(text, width, [fill])
    Pad text on the right with fill (one character) up to width characters."""
    s = _text(text, "PADRIGHT", 1)
    w = _int(width, "PADRIGHT", 2, minimum=0)
    f = _text(fill, "PADRIGHT", 3)
    if len(f) != 1:
        raise ArgumentError("PADRIGHT fill must be a single character")
    return s.ljust(w, f)


def _regex(pattern: object, fn: str) -> re.Pattern:
    p = _text(pattern, fn, 2)
    try:
        return re.compile(p)
    except re.error as exc:
        raise ArgumentError(f"{fn}: invalid regular expression: {exc}") from None


@builtin("REGEXMATCH", "text", 2)
def fn_regexmatch(ctx, text, pattern):
    """REGEXMATCH(text, pattern)
    TRUE if the regular expression matches anywhere in text."""
    return _regex(pattern, "REGEXMATCH").search(_text(text, "REGEXMATCH")) is not None


@builtin("REGEXEXTRACT", "text", 2)
def fn_regexextract(ctx, text, pattern):
    """REGEXEXTRACT(text, pattern)
    The first match (or the first capture group, if the pattern has groups)."""
    rx = _regex(pattern, "REGEXEXTRACT")
    match = rx.search(_text(text, "REGEXEXTRACT"))
    if not match:
        raise NotAvailable("REGEXEXTRACT: no match")
    return match.group(1) if rx.groups else match.group(0)


@builtin("REGEXREPLACE", "text", 3)
def fn_regexreplace(ctx, text, pattern, replacement):
    """REGEXREPLACE(text, pattern, replacement)
    Replace every match; use $1, $2 ... to refer to groups."""
    rx = _regex(pattern, "REGEXREPLACE")
    repl = re.sub(r"\$(\d+)", r"\\\1", _text(replacement, "REGEXREPLACE", 3))
    try:
        return rx.sub(repl, _text(text, "REGEXREPLACE"))
    except re.error as exc:
        raise ArgumentError(f"REGEXREPLACE: {exc}") from None


@builtin("SPLITWORDS", "text", 1)
def fn_splitwords(ctx, text):
    """SPLITWORDS(text)
    List of the words in text (runs of letters, digits and apostrophes)."""
    return re.findall(r"[\w']+", _text(text, "SPLITWORDS"))

# ---------------------------------------------------------------------------
# Dates and times
# ---------------------------------------------------------------------------


def _today(ctx) -> dt.date:
    return ctx.options.today or dt.date.today()


def _holidays(value: object, fn: str) -> frozenset[dt.date]:
    if value is None:
        return frozenset()
    return frozenset(_plain_date(v, fn, "holidays") for v in _flatten(_list(value)) if v is not None)


@builtin("DATE", "date", 3)
def fn_date(ctx, year, month, day):
    """DATE(year, month, day)
    Build a date; months and days outside their range roll over,
    so DATE(2024, 13, 1) is 2025-01-01 and DATE(2024, 3, 0) is 2024-02-29."""
    y = _int(year, "DATE", 1)
    m = _int(month, "DATE", 2)
    d = _int(day, "DATE", 3)
    if 0 <= y < 1900:
        y += 1900
    try:
        first = dates.add_months(dt.date(y, 1, 1), m - 1)
        return first + dt.timedelta(days=d - 1)
    except (ValueError, OverflowError):
        raise NumError(f"DATE({y}, {m}, {d}) is out of range") from None


@builtin("TIME", "date", 3)
def fn_time(ctx, hour, minute, second):
    """TIME(hour, minute, second)
    Fraction of a day for a time of day: TIME(12, 0, 0) = 0.5."""
    h = _int(hour, "TIME", 1)
    m = _int(minute, "TIME", 2)
    s = _int(second, "TIME", 3)
    total = h * 3600 + m * 60 + s
    if total < 0:
        raise NumError("TIME must not be negative")
    return values.normalize_number((total % 86400) / 86400)


@builtin("DATETIME", "date", 3, 6)
def fn_datetime(ctx, year, month, day, hour=0, minute=0, second=0):
    """DATETIME(year, month, day, [hour], [minute], [second])
    Build a date-time value."""
    base = fn_date(ctx, year, month, day)
    seconds = _int(hour, "DATETIME", 4) * 3600 + _int(minute, "DATETIME", 5) * 60 + _int(second, "DATETIME", 6)
    return dt.datetime(base.year, base.month, base.day) + dt.timedelta(seconds=seconds)


@builtin("TODAY", "date", 0)
def fn_today(ctx):
    """TODAY()
    Today's date (fixed when the calculator was created with today=...)."""
    return _today(ctx)


@builtin("NOW", "date", 0)
def fn_now(ctx):
    """NOW()
    Current date and time (midnight of the fixed date when today=... is set)."""
    if ctx.options.today is not None:
        t = ctx.options.today
        return dt.datetime(t.year, t.month, t.day)
    return dt.datetime.now().replace(microsecond=0)


@builtin("YEAR", "date", 1)
def fn_year(ctx, date):
    """YEAR(date)
    Year of a date."""
    return _date(date, "YEAR").year


@builtin("MONTH", "date", 1)
def fn_month(ctx, date):
    """MONTH(date)
    Month of a date, 1 to 12."""
    return _date(date, "MONTH").month


@builtin("DAY", "date", 1)
def fn_day(ctx, date):
    """DAY(date)
    Day of the month, 1 to 31."""
    return _date(date, "DAY").day


def _time_part(value: object, fn: str) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, str):
        parsed = _date(value, fn)
        return parsed if isinstance(parsed, dt.datetime) else dt.datetime(parsed.year, parsed.month, parsed.day)
    fraction = _num(value, fn) % 1
    seconds = round(fraction * 86400)
    return dt.datetime(2000, 1, 1) + dt.timedelta(seconds=seconds)


@builtin("HOUR", "date", 1)
def fn_hour(ctx, value):
    """HOUR(time)
    Hour 0-23 of a date-time or day fraction."""
    return _time_part(value, "HOUR").hour


@builtin("MINUTE", "date", 1)
def fn_minute(ctx, value):
    """MINUTE(time)
    Minute 0-59 of a date-time or day fraction."""
    return _time_part(value, "MINUTE").minute


@builtin("SECOND", "date", 1)
def fn_second(ctx, value):
    """SECOND(time)
    Second 0-59 of a date-time or day fraction."""
    return _time_part(value, "SECOND").second


@builtin("WEEKDAY", "date", 1, 2)
def fn_weekday(ctx, date, return_type=1):
    """WEEKDAY(date, [return_type])
    Day of the week: type 1 Sunday=1..Saturday=7, type 2 Monday=1..Sunday=7,
    type 3 Monday=0..Sunday=6."""
    return dates.weekday_number(_date(date, "WEEKDAY"), _int(return_type, "WEEKDAY", 2))


@builtin("WEEKNUM", "date", 1, 2)
def fn_weeknum(ctx, date, return_type=1):
    """WEEKNUM(date, [return_type])
    Week of the year; weeks start on Sunday (1), Monday (2), or ISO weeks (21)."""
    return dates.week_number(_date(date, "WEEKNUM"), _int(return_type, "WEEKNUM", 2))


@builtin("ISOWEEKNUM", "date", 1)
def fn_isoweeknum(ctx, date):
    """ISOWEEKNUM(date)
    ISO 8601 week number."""
    return _date(date, "ISOWEEKNUM").isocalendar()[1]


@builtin("EDATE", "date", 2)
def fn_edate(ctx, start, months):
    """EDATE(start_date, months)
    The same day months later (or earlier), clamped to the end of shorter months."""
    return dates.add_months(_plain_date(start, "EDATE", 1), _int(months, "EDATE", 2))


@builtin("EOMONTH", "date", 2)
def fn_eomonth(ctx, start, months):
    """EOMONTH(start_date, months)
    Last day of the month that is months away from start_date."""
    return dates.end_of_month(_plain_date(start, "EOMONTH", 1), _int(months, "EOMONTH", 2))


@builtin("DAYS", "date", 2)
def fn_days(ctx, end, start):
    """DAYS(end_date, start_date)
    Number of days from start_date to end_date."""
    return (_plain_date(end, "DAYS", 1) - _plain_date(start, "DAYS", 2)).days


@builtin("DAYS360", "date", 2, 3)
def fn_days360(ctx, start, end, european=False):
    """DAYS360(start_date, end_date, [european])
    Days between dates on a 360-day calendar (US method unless european is TRUE)."""
    return dates.days360(
        _plain_date(start, "DAYS360", 1), _plain_date(end, "DAYS360", 2), _bool(european, "DAYS360", 3)
    )


@builtin("DATEDIF", "date", 3)
def fn_datedif(ctx, start, end, unit):
    """DATEDIF(start_date, end_date, unit)
    Difference in complete "Y" years, "M" months or "D" days; "MD", "YM" and
    "YD" ignore the larger units."""
    a = _plain_date(start, "DATEDIF", 1)
    b = _plain_date(end, "DATEDIF", 2)
    u = _text(unit, "DATEDIF", 3).upper()
    if b < a:
        raise NumError("DATEDIF start date must not be after the end date")
    months = (b.year - a.year) * 12 + (b.month - a.month)
    if b.day < a.day:
        months -= 1
    if u == "Y":
        return months // 12
    if u == "M":
        return months
    if u == "D":
        return (b - a).days
    if u == "YM":
        return months % 12
    if u == "MD":
        anchor = dates.add_months(a, months)
        return (b - anchor).days
    if u == "YD":
        anchor = dates.add_months(a, (months // 12) * 12)
        return (b - anchor).days
    raise ArgumentError(f"DATEDIF unit must be Y, M, D, MD, YM or YD, got \"{u}\"")


@builtin("NETWORKDAYS", "date", 2, 3)
def fn_networkdays(ctx, start, end, holidays=None):
    """NETWORKDAYS(start_date, end_date, [holidays])
    Working days (Monday-Friday) between two dates inclusive, minus holidays."""
    return dates.networkdays(
        _plain_date(start, "NETWORKDAYS", 1),
        _plain_date(end, "NETWORKDAYS", 2),
        _holidays(holidays, "NETWORKDAYS"),
    )


@builtin("NETWORKDAYS.INTL", "date", 2, 4)
def fn_networkdays_intl(ctx, start, end, weekend=1, holidays=None):
    """NETWORKDAYS.INTL(start_date, end_date, [weekend], [holidays])
    Like NETWORKDAYS with a custom weekend code (1-7, 11-17) or mask "0000011"."""
    return dates.networkdays(
        _plain_date(start, "NETWORKDAYS.INTL", 1),
        _plain_date(end, "NETWORKDAYS.INTL", 2),
        _holidays(holidays, "NETWORKDAYS.INTL"),
        dates.weekend_days(weekend),
    )


@builtin("WORKDAY", "date", 2, 3)
def fn_workday(ctx, start, days, holidays=None):
    """WORKDAY(start_date, days, [holidays])
    The date that is days working days from start_date."""
    return dates.workday(
        _plain_date(start, "WORKDAY", 1), _int(days, "WORKDAY", 2), _holidays(holidays, "WORKDAY")
    )


@builtin("WORKDAY.INTL", "date", 2, 4)
def fn_workday_intl(ctx, start, days, weekend=1, holidays=None):
    """WORKDAY.INTL(start_date, days, [weekend], [holidays])
    WORKDAY with a custom weekend code or mask."""
    return dates.workday(
        _plain_date(start, "WORKDAY.INTL", 1),
        _int(days, "WORKDAY.INTL", 2),
        _holidays(holidays, "WORKDAY.INTL"),
        dates.weekend_days(weekend),
    )


@builtin("YEARFRAC", "date", 2, 3)
def fn_yearfrac(ctx, start, end, basis=0):
    """YEARFRAC(start_date, end_date, [basis])
    Fraction of a year between two dates. Basis 0 = 30/360 US, 1 = actual/actual,
    2 = actual/360, 3 = actual/365, 4 = 30/360 European."""
    return dates.year_fraction(
        _plain_date(start, "YEARFRAC", 1), _plain_date(end, "YEARFRAC", 2), _int(basis, "YEARFRAC", 3)
    )


@builtin("DATEVALUE", "date", 1)
def fn_datevalue(ctx, text):
    """DATEVALUE(text)
    Serial number of a date written as text."""
    return dates.to_serial(dates.parse_date(_text(text, "DATEVALUE")))


@builtin("TODATE", "date", 1)
def fn_todate(ctx, value):
    """TODATE(value)
    Convert a serial number or date text to a date value."""
    return _date(value, "TODATE")


@builtin("ISLEAPYEAR", "date", 1)
def fn_isleapyear(ctx, value):
    """ISLEAPYEAR(year_or_date)
    TRUE for leap years."""
    year = value.year if isinstance(value, dt.date) else _int(value, "ISLEAPYEAR")
    return dates.is_leap_year(year)


@builtin("DAYSINMONTH", "date", 1)
def fn_daysinmonth(ctx, value):
    """DAYSINMONTH(date)
    Number of days in the month of a date."""
    d = _date(value, "DAYSINMONTH")
    return dates.days_in_month(d.year, d.month)


@builtin("QUARTER", "date", 1)
def fn_quarter(ctx, value):
    """QUARTER(date)
    Calendar quarter 1-4."""
    return (_date(value, "QUARTER").month - 1) // 3 + 1

# ---------------------------------------------------------------------------
# Logic (lazy functions receive AST nodes)
# ---------------------------------------------------------------------------


def _condition(ctx, node, fn: str, pos: int) -> bool:
    value = ctx.eval(node)
    if isinstance(value, str) and value.strip().upper() not in ("TRUE", "FALSE"):
        raise ArgumentError(f"{fn} condition {pos} is text \"{value}\", not a logical")
    return _bool(value, fn, pos)


@builtin("IF", "logic", 2, 3, lazy=True)
def fn_if(ctx, condition, then, otherwise=None):
    """IF(condition, value_if_true, [value_if_false])
    Choose between two values; only the chosen one is evaluated. Without
    value_if_false the result is FALSE."""
    if _condition(ctx, condition, "IF", 1):
        return ctx.eval(then)
    return ctx.eval(otherwise) if otherwise is not None else False


@builtin("IFS", "logic", 2, None, lazy=True)
def fn_ifs(ctx, *pairs):
    """IFS(condition1, value1, [condition2, value2], ...)
    Value of the first true condition; #N/A if none is true."""
    if len(pairs) % 2:
        raise ArgumentError("IFS expects condition/value pairs")
    for i in range(0, len(pairs), 2):
        if _condition(ctx, pairs[i], "IFS", i + 1):
            return ctx.eval(pairs[i + 1])
    raise NotAvailable("IFS: no condition is true")


@builtin("SWITCH", "logic", 3, None, lazy=True)
def fn_switch(ctx, expression, *cases):
    """SWITCH(expression, value1, result1, [value2, result2], ..., [default])
    Compare expression with each value and return the matching result."""
    subject = ctx.eval(expression)
    for i in range(0, len(cases) - 1, 2):
        if values.equals(subject, ctx.eval(cases[i])):
            return ctx.eval(cases[i + 1])
    if len(cases) % 2:
        return ctx.eval(cases[-1])
    raise NotAvailable("SWITCH: no value matches and there is no default")


@builtin("AND", "logic", 1, None, lazy=True)
def fn_and(ctx, *conditions):
    """AND(logical1, [logical2], ...)
    TRUE if all arguments are true; stops at the first false one.
    Lists are checked item by item (blanks and text in lists are ignored)."""
    for i, node in enumerate(conditions, start=1):
        value = ctx.eval(node)
        items = [v for v in _flatten(value) if v is not None and not isinstance(v, str)] if isinstance(value, list) else [value]
        for item in items:
            if not _bool(item, "AND", i):
                return False
    return True


@builtin("OR", "logic", 1, None, lazy=True)
def fn_or(ctx, *conditions):
    """OR(logical1, [logical2], ...)
    TRUE if any argument is true; stops at the first true one."""
    for i, node in enumerate(conditions, start=1):
        value = ctx.eval(node)
        items = [v for v in _flatten(value) if v is not None and not isinstance(v, str)] if isinstance(value, list) else [value]
        for item in items:
            if _bool(item, "OR", i):
                return True
    return False


@builtin("XOR", "logic", 1, None)
def fn_xor(ctx, *conditions):
    """XOR(logical1, [logical2], ...)
    TRUE if an odd number of arguments are true."""
    count = sum(1 for i, v in enumerate(_flatten(conditions), start=1) if v is not None and _bool(v, "XOR", i))
    return count % 2 == 1


@builtin("NOT", "logic", 1)
def fn_not(ctx, value):
    """NOT(logical)
    Reverse a logical value."""
    return not _bool(value, "NOT")


@builtin("TRUE", "logic", 0)
def fn_true(ctx):
    """TRUE()
    The logical value TRUE."""
    return True


@builtin("FALSE", "logic", 0)
def fn_false(ctx):
    """FALSE()
    The logical value FALSE."""
    return False


@builtin("IFERROR", "logic", 2, lazy=True)
def fn_iferror(ctx, value, fallback):
    """IFERROR(value, value_if_error)
    value, or value_if_error when evaluating value fails with any error."""
    try:
        return ctx.eval(value)
    except EvalError:
        return ctx.eval(fallback)


@builtin("IFNA", "logic", 2, lazy=True)
def fn_ifna(ctx, value, fallback):
    """IFNA(value, value_if_na)
    Like IFERROR but only catches #N/A (failed lookups)."""
    try:
        return ctx.eval(value)
    except NotAvailable:
        return ctx.eval(fallback)


@builtin("CHOOSE", "logic", 2, None, lazy=True)
def fn_choose(ctx, index, *choices):
    """CHOOSE(index, value1, [value2], ...)
    The index-th value (1-based); only that value is evaluated."""
    i = _int(ctx.eval(index), "CHOOSE", 1)
    if not 1 <= i <= len(choices):
        raise ArgumentError(f"CHOOSE index must be between 1 and {len(choices)}, got {i}")
    return ctx.eval(choices[i - 1])


@builtin("LET", "logic", 3, None, lazy=True)
def fn_let(ctx, *args):
    """LET(name1, value1, [name2, value2, ...], calculation)
    Name intermediate results: LET(x, 2, y, x + 1, x * y) = 6."""
    from .nodes import Name

    if len(args) % 2 == 0:
        raise ArgumentError("LET expects name/value pairs followed by a calculation")
    scope = ctx.env.child()
    inner = type(ctx)(ctx.evaluator, scope, ctx.name, ctx.node)
    for i in range(0, len(args) - 1, 2):
        name_node = args[i]
        if not isinstance(name_node, Name):
            raise ArgumentError(f"LET argument {i + 1} must be a name")
        scope.define(name_node.name, inner.eval(args[i + 1]))
    return inner.eval(args[-1])


# ---------------------------------------------------------------------------
# Information
# ---------------------------------------------------------------------------


@builtin("ISNUMBER", "information", 1)
def fn_isnumber(ctx, value):
    """ISNUMBER(value)
    TRUE for numbers (not numeric text)."""
    return values.is_number(value)


@builtin("ISTEXT", "information", 1)
def fn_istext(ctx, value):
    """ISTEXT(value)
    TRUE for text."""
    return isinstance(value, str)


@builtin("ISNONTEXT", "information", 1)
def fn_isnontext(ctx, value):
    """ISNONTEXT(value)
    TRUE for anything that is not text (including blanks)."""
    return not isinstance(value, str)


@builtin("ISBLANK", "information", 1)
def fn_isblank(ctx, value):
    """ISBLANK(value)
    TRUE for a blank (an unset optional value); empty text is not blank."""
    return value is None


@builtin("ISLOGICAL", "information", 1)
def fn_islogical(ctx, value):
    """ISLOGICAL(value)
    TRUE for TRUE or FALSE."""
    return isinstance(value, bool)


@builtin("ISDATE", "information", 1)
def fn_isdate(ctx, value):
    """ISDATE(value)
    TRUE for date and date-time values."""
    return isinstance(value, dt.date)


@builtin("ISLIST", "information", 1)
def fn_islist(ctx, value):
    """ISLIST(value)
    TRUE for lists."""
    return isinstance(value, list)


@builtin("ISQUANTITY", "information", 1)
def fn_isquantity(ctx, value):
    """ISQUANTITY(value)
    TRUE for numbers with a unit."""
    return isinstance(value, Quantity)


@builtin("ISEVEN", "information", 1)
def fn_iseven(ctx, value):
    """ISEVEN(number)
    TRUE if the integer part of number is even."""
    return _int(value, "ISEVEN") % 2 == 0


@builtin("ISODD", "information", 1)
def fn_isodd(ctx, value):
    """ISODD(number)
    TRUE if the integer part of number is odd."""
    return _int(value, "ISODD") % 2 == 1


@builtin("ISERROR", "information", 1, lazy=True)
def fn_iserror(ctx, value):
    """ISERROR(value)
    TRUE if evaluating value fails with any error."""
    try:
        ctx.eval(value)
    except EvalError:
        return True
    return False


@builtin("ISNA", "information", 1, lazy=True)
def fn_isna(ctx, value):
    """ISNA(value)
    TRUE if evaluating value fails with #N/A."""
    try:
        ctx.eval(value)
    except NotAvailable:
        return True
    return False


@builtin("ERROR.TYPE", "information", 1, lazy=True)
def fn_error_type(ctx, value):
    """ERROR.TYPE(value)
    Number of the error produced by value: 1 #NULL!, 2 #DIV/0!, 3 #VALUE!,
    4 #REF!, 5 #NAME?, 6 #NUM!, 7 #N/A. #N/A if value is not an error."""
    try:
        ctx.eval(value)
    except EvalError as exc:
        if exc.code in ERROR_CODES:
            return ERROR_CODES.index(exc.code) + 1
        return 3
    raise NotAvailable("ERROR.TYPE: the value is not an error")


@builtin("NA", "information", 0)
def fn_na(ctx):
    """NA()
    Produce the #N/A error (marks a missing value)."""
    raise NotAvailable("NA() was called")


@builtin("TYPE", "information", 1)
def fn_type(ctx, value):
    """TYPE(value)
    1 number, 2 text, 4 logical, 64 list, 128 date, 256 quantity."""
    if isinstance(value, bool):
        return 4
    if values.is_number(value) or value is None:
        return 1
    if isinstance(value, str):
        return 2
    if isinstance(value, list):
        return 64
    if isinstance(value, dt.date):
        return 128
    if isinstance(value, Quantity):
        return 256
    return 16


@builtin("TYPENAME", "information", 1)
def fn_typename(ctx, value):
    """TYPENAME(value)
    Name of the value's type: "number", "text", "logical", "date" ..."""
    return values.type_name(value)


@builtin("N", "information", 1)
def fn_n(ctx, value):
    """N(value)
    Numbers unchanged, TRUE as 1, dates as serial numbers, everything else 0."""
    if isinstance(value, bool):
        return int(value)
    if values.is_number(value):
        return value
    if isinstance(value, dt.date):
        return dates.to_serial(value)
    return 0


@builtin("T", "information", 1)
def fn_t(ctx, value):
    """T(value)
    Text unchanged, everything else empty text."""
    return value if isinstance(value, str) else ""

# ---------------------------------------------------------------------------
# Lookup
# ---------------------------------------------------------------------------


def _table(value: object, fn: str) -> list[list]:
    """A 2-D table: a list of rows.  A flat list is one column."""
    if not isinstance(value, list):
        raise ArgumentError(f"{fn} expects a table (a list of rows)")
    if value and all(isinstance(row, list) for row in value):
        return value
    return [[item] for item in value]


def _match_position(needle: object, haystack: list, mode: int, fn: str) -> int:
    """0-based position of needle.  mode 0 exact (wildcards for text),
    1 largest value <= needle (sorted ascending), -1 smallest value >= needle
    (sorted descending)."""
    if mode == 0:
        if isinstance(needle, str) and any(c in needle for c in "*?~"):
            pattern = _wildcard_regex(needle)
            for i, item in enumerate(haystack):
                if isinstance(item, str) and pattern.fullmatch(item):
                    return i
        else:
            for i, item in enumerate(haystack):
                if item is not None and values.equals(item, needle):
                    return i
        raise NotAvailable(f"{fn}: {values.to_text(needle)!r} not found")
    best = None
    for i, item in enumerate(haystack):
        if item is None or values.type_name(item) != values.type_name(needle):
            continue
        cmp = values.compare(item, needle)
        if mode > 0:
            if cmp <= 0:
                best = i
            else:
                break
        else:
            if cmp >= 0:
                best = i
            else:
                break
    if best is None:
        raise NotAvailable(f"{fn}: no value {'<=' if mode > 0 else '>='} {values.to_text(needle)!r}")
    return best


@builtin("MATCH", "lookup", 2, 3)
def fn_match(ctx, needle, items, match_type=1):
    """MATCH(lookup_value, list, [match_type])
    1-based position of lookup_value. match_type 0 = exact, 1 = largest value
    less than or equal (list ascending), -1 = smallest value greater than or
    equal (list descending)."""
    mode = _int(match_type, "MATCH", 3)
    mode = (mode > 0) - (mode < 0)
    return _match_position(needle, _flatten(_list(items)), mode, "MATCH") + 1


@builtin("INDEX", "lookup", 2, 3)
def fn_index(ctx, items, row, column=None):
    """INDEX(list_or_table, row, [column])
    Item at a 1-based position; for tables give row and column. Row 0 with a
    column returns the whole column; column 0 returns the whole row."""
    if not isinstance(items, list):
        raise ArgumentError("INDEX expects a list or table")
    r = _int(row, "INDEX", 2, minimum=0)
    if column is None:
        if r == 0:
            return items
        if r > len(items):
            raise RefError(f"INDEX row {r} is outside the list of {len(items)} items")
        return items[r - 1]
    table = _table(items, "INDEX")
    c = _int(column, "INDEX", 3, minimum=0)
    if r > len(table):
        raise RefError(f"INDEX row {r} is outside the table of {len(table)} rows")
    if r == 0:
        if c == 0:
            return table
        return [row_[c - 1] if c <= len(row_) else _ref_error("INDEX", c) for row_ in table]
    row_values = table[r - 1]
    if c == 0:
        return row_values
    if c > len(row_values):
        _ref_error("INDEX", c)
    return row_values[c - 1]


def _ref_error(fn: str, column: int):
    raise RefError(f"{fn} column {column} is outside the table")


@builtin("VLOOKUP", "lookup", 3, 4)
def fn_vlookup(ctx, needle, table, column, approximate=True):
    """VLOOKUP(lookup_value, table, column, [approximate])
    Find lookup_value in the first column of table and return the value in
    the given column of that row. approximate (default TRUE) requires the
    first column sorted ascending; use FALSE for an exact match."""
    rows = _table(table, "VLOOKUP")
    c = _int(column, "VLOOKUP", 3, minimum=1)
    first = [row[0] if row else None for row in rows]
    mode = 1 if _bool(approximate, "VLOOKUP", 4) else 0
    row = rows[_match_position(needle, first, mode, "VLOOKUP")]
    if c > len(row):
        raise RefError(f"VLOOKUP column {c} is outside the table of {len(row)} columns")
    return row[c - 1]


@builtin("HLOOKUP", "lookup", 3, 4)
def fn_hlookup(ctx, needle, table, row_index, approximate=True):
    """HLOOKUP(lookup_value, table, row, [approximate])
    Like VLOOKUP but searches the first row and returns from row row_index."""
    rows = _table(table, "HLOOKUP")
    r = _int(row_index, "HLOOKUP", 3, minimum=1)
    if r > len(rows):
        raise RefError(f"HLOOKUP row {r} is outside the table of {len(rows)} rows")
    mode = 1 if _bool(approximate, "HLOOKUP", 4) else 0
    position = _match_position(needle, rows[0], mode, "HLOOKUP")
    if position >= len(rows[r - 1]):
        raise RefError("HLOOKUP: ragged table")
    return rows[r - 1][position]


@builtin("XLOOKUP", "lookup", 3, 5)
def fn_xlookup(ctx, needle, lookup_list, return_list, if_not_found=None, match_mode=0):
    """XLOOKUP(lookup_value, lookup_list, return_list, [if_not_found], [match_mode])
    Exact-match lookup returning the item at the same position of return_list.
    match_mode 0 = exact, -1 = exact or next smaller, 1 = exact or next larger,
    2 = wildcard match. The lists need not be sorted."""
    keys = _flatten(_list(lookup_list))
    results = _list(return_list)
    if len(keys) != len(results):
        raise ArgumentError("XLOOKUP lookup_list and return_list must have the same length")
    mode = _int(match_mode, "XLOOKUP", 5)
    position = None
    if mode in (0, 2):
        for i, key in enumerate(keys):
            if mode == 2 and isinstance(needle, str):
                if isinstance(key, str) and _wildcard_regex(needle).fullmatch(key):
                    position = i
                    break
            elif key is not None and values.equals(key, needle):
                position = i
                break
    elif mode in (-1, 1):
        candidates = [(i, k) for i, k in enumerate(keys) if k is not None and values.type_name(k) == values.type_name(needle)]
        if mode == -1:
            fits = [(k, i) for i, k in candidates if values.compare(k, needle) <= 0]
            chosen = max(fits, key=lambda p: (_sort_key(p[0]), -p[1]), default=None)
        else:
            fits = [(k, i) for i, k in candidates if values.compare(k, needle) >= 0]
            chosen = min(fits, key=lambda p: (_sort_key(p[0]), p[1]), default=None)
        position = chosen[1] if chosen else None
    else:
        raise ArgumentError("XLOOKUP match_mode must be -1, 0, 1 or 2")
    if position is None:
        if if_not_found is not None:
            return if_not_found
        raise NotAvailable(f"XLOOKUP: {values.to_text(needle)!r} not found")
    return results[position]


@builtin("LOOKUP", "lookup", 2, 3)
def fn_lookup(ctx, needle, lookup_list, result_list=None):
    """LOOKUP(lookup_value, sorted_list, [result_list])
    Approximate lookup in an ascending list; returns from result_list if given."""
    keys = _flatten(_list(lookup_list))
    position = _match_position(needle, keys, 1, "LOOKUP")
    if result_list is None:
        return keys[position]
    results = _flatten(_list(result_list))
    if position >= len(results):
        raise NotAvailable("LOOKUP result_list is shorter than the lookup list")
    return results[position]


# ---------------------------------------------------------------------------
# Lists
# ---------------------------------------------------------------------------


def _sort_key(value: object):
    """Sort key consistent with values.compare for scalars."""
    if value is None:
        return (3, 0)
    kind = values.type_name(value)
    if kind in ("number", "date", "date-time", "quantity"):
        return (0, values.to_number(value) if not isinstance(value, Quantity) else value.si_value())
    if kind == "text":
        return (1, value.casefold())
    if kind == "logical":
        return (2, value)
    raise ArgumentError(f"Cannot sort a {kind}")


@builtin("SEQUENCE", "list", 1, 3)
def fn_sequence(ctx, count, start=1, step=1):
    """SEQUENCE(count, [start], [step])
    List of count numbers: SEQUENCE(4, 10, 5) = {10, 15, 20, 25}."""
    n = _int(count, "SEQUENCE", 1, minimum=0)
    if n > 100000:
        raise NumError("SEQUENCE count must be at most 100000")
    first = _num(start, "SEQUENCE", 2)
    inc = _num(step, "SEQUENCE", 3)
    return [values.normalize_number(first + i * inc) for i in range(n)]


@builtin("RANGE", "list", 1, 3)
def fn_range(ctx, a, b=None, step=None):
    """RANGE(stop) or RANGE(start, stop, [step])
    Numbers from start up to but excluding stop, like Python's range."""
    if b is None:
        start, stop = 0, _int(a, "RANGE", 1)
    else:
        start, stop = _int(a, "RANGE", 1), _int(b, "RANGE", 2)
    inc = 1 if step is None else _int(step, "RANGE", 3)
    if inc == 0:
        raise NumError("RANGE step must not be 0")
    result = list(range(start, stop, inc))
    if len(result) > 100000:
        raise NumError("RANGE would produce more than 100000 items")
    return result


@builtin("SORT", "list", 1, 2)
def fn_sort(ctx, items, descending=False):
    """SORT(list, [descending])
    Sort numbers, text and logicals (numbers first, text case-insensitively)."""
    data = list(_list(items))
    if any(isinstance(v, list) for v in data):
        raise ArgumentError("SORT expects a flat list; use SORTBY for tables")
    return sorted(data, key=_sort_key, reverse=_bool(descending, "SORT", 2))


@builtin("SORTBY", "list", 2, 3)
def fn_sortby(ctx, items, keys, descending=False):
    """SORTBY(list, keys, [descending])
    Sort list (or table rows) by the matching items of keys; the sort is stable."""
    data = list(_list(items))
    k = _flatten(_list(keys))
    _same_length("SORTBY", data, k)
    order = sorted(range(len(data)), key=lambda i: _sort_key(k[i]), reverse=_bool(descending, "SORTBY", 3))
    return [data[i] for i in order]


@builtin("UNIQUE", "list", 1)
def fn_unique(ctx, items):
    """UNIQUE(list)
    Items with duplicates removed (text compared case-insensitively), in first-seen order."""
    out: list[object] = []
    for item in _list(items):
        if not any(values.equals(item, seen) and type(item) is type(seen) for seen in out):
            out.append(item)
    return out


@builtin("COUNTUNIQUE", "list", 1, None)
def fn_countunique(ctx, *items):
    """COUNTUNIQUE(value1, [value2], ...)
    Number of distinct non-blank values."""
    flat = [v for v in _flatten(items) if v is not None]
    return len(fn_unique(ctx, flat))


@builtin("FILTER", "list", 2, 3)
def fn_filter(ctx, items, include, if_empty=None):
    """FILTER(list, include, [if_empty])
    Keep the items whose matching include value is TRUE, e.g.
    FILTER(prices, prices > 10). if_empty is returned when nothing is kept."""
    data = _list(items)
    mask = _list(include)
    _same_length("FILTER", data, mask)
    kept = [item for item, keep in zip(data, mask) if _bool(keep, "FILTER", 2)]
    if not kept:
        if if_empty is not None:
            return if_empty
        raise NotAvailable("FILTER: no items match")
    return kept


@builtin("MAP", "list", 2)
def fn_map(ctx, items, function):
    """MAP(list, function)
    Apply a function (a user function or the name of one, e.g. "ABS") to
    every item."""
    return [ctx.call(function, [item]) for item in _list(items)]


@builtin("REDUCE", "list", 3)
def fn_reduce(ctx, initial, items, function):
    """REDUCE(initial, list, function)
    Fold the list with a two-argument function: function(accumulator, item)."""
    acc = initial
    for item in _list(items):
        acc = ctx.call(function, [acc, item])
    return acc


@builtin("REVERSE", "list", 1)
def fn_reverse(ctx, value):
    """REVERSE(list_or_text)
    Items of a list (or characters of text) in reverse order."""
    if isinstance(value, list):
        return list(reversed(value))
    return _text(value, "REVERSE")[::-1]


@builtin("FLATTEN", "list", 1, None)
def fn_flatten(ctx, *items):
    """FLATTEN(list1, [list2], ...)
    One flat list of all items of nested lists."""
    return _flatten(items)


@builtin("TAKE", "list", 2)
def fn_take(ctx, items, count):
    """TAKE(list, count)
    The first count items, or the last -count items for a negative count."""
    data = _list(items)
    n = _int(count, "TAKE", 2)
    return data[:n] if n >= 0 else data[n:]


@builtin("DROP", "list", 2)
def fn_drop(ctx, items, count):
    """DROP(list, count)
    The list without its first count items (last -count items if negative)."""
    data = _list(items)
    n = _int(count, "DROP", 2)
    return data[n:] if n >= 0 else data[:n]


@builtin("SLICE", "list", 2, 3)
def fn_slice(ctx, items, start, end=None):
    """SLICE(list, start, [end])
    Items from 1-based start to end inclusive; negative positions count from the end."""
    data = _list(items)
    size = len(data)
    s = _int(start, "SLICE", 2)
    e = size if end is None else _int(end, "SLICE", 3)
    s = s + size + 1 if s < 0 else s
    e = e + size + 1 if e < 0 else e
    if s < 1:
        s = 1
    return data[s - 1:e]


@builtin("APPEND", "list", 1, None)
def fn_append(ctx, *items):
    """APPEND(list_or_value1, [list_or_value2], ...)
    Concatenate lists; scalars are added as single items."""
    out: list[object] = []
    for item in items:
        out.extend(item if isinstance(item, list) else [item])
    return out


@builtin("FIRST", "list", 1)
def fn_first(ctx, items):
    """FIRST(list)
    The first item. #REF! for an empty list."""
    data = _list(items)
    if not data:
        raise RefError("FIRST of an empty list")
    return data[0]


@builtin("LAST", "list", 1)
def fn_last(ctx, items):
    """LAST(list)
    The last item. #REF! for an empty list."""
    data = _list(items)
    if not data:
        raise RefError("LAST of an empty list")
    return data[-1]


@builtin("ROWS", "list", 1)
def fn_rows(ctx, items):
    """ROWS(list_or_table)
    Number of rows (items of a flat list)."""
    return len(_list(items))


@builtin("COLUMNS", "list", 1)
def fn_columns(ctx, items):
    """COLUMNS(table)
    Number of columns: the longest row of a table, 1 for a flat list."""
    data = _list(items)
    if data and all(isinstance(row, list) for row in data):
        return max(len(row) for row in data)
    return 1 if data else 0


@builtin("TRANSPOSE", "list", 1)
def fn_transpose(ctx, items):
    """TRANSPOSE(table)
    Swap rows and columns; a flat list becomes a single row."""
    table = _table(_list(items), "TRANSPOSE")
    width = max((len(row) for row in table), default=0)
    return [[row[c] if c < len(row) else None for row in table] for c in range(width)]


@builtin("ISIN", "list", 2)
def fn_isin(ctx, value, items):
    """ISIN(value, list)
    TRUE if value equals an item of list (text compared case-insensitively)."""
    return any(item is not None and values.equals(item, value) for item in _flatten(_list(items)))

# ---------------------------------------------------------------------------
# Financial
# ---------------------------------------------------------------------------


def _pmt_type(value: object, fn: str) -> int:
    t = _int(value, fn, "type")
    if t not in (0, 1):
        raise NumError(f"{fn} type must be 0 (end of period) or 1 (start of period)")
    return t


@builtin("PMT", "financial", 3, 5)
def fn_pmt(ctx, rate, nper, pv, fv=0, type_=0):
    """PMT(rate, nper, pv, [fv], [type])
    Payment per period of a loan or annuity. Money paid out is negative:
    PMT(5%/12, 360, 200000) is about -1073.64."""
    r = _num(rate, "PMT", 1)
    n = _num(nper, "PMT", 2)
    p = _num(pv, "PMT", 3)
    f = _num(fv, "PMT", 4)
    t = _pmt_type(type_, "PMT")
    if n == 0:
        raise NumError("PMT number of periods must not be 0")
    if r == 0:
        return -(p + f) / n
    growth = (1 + r) ** n
    return -(r * (p * growth + f)) / ((1 + r * t) * (growth - 1))


@builtin("FV", "financial", 3, 5)
def fn_fv(ctx, rate, nper, pmt, pv=0, type_=0):
    """FV(rate, nper, pmt, [pv], [type])
    Future value of periodic payments and an initial amount."""
    r = _num(rate, "FV", 1)
    n = _num(nper, "FV", 2)
    payment = _num(pmt, "FV", 3)
    p = _num(pv, "FV", 4)
    t = _pmt_type(type_, "FV")
    if r == 0:
        return -(p + payment * n)
    growth = (1 + r) ** n
    return -(p * growth + payment * (1 + r * t) * (growth - 1) / r)


@builtin("PV", "financial", 3, 5)
def fn_pv(ctx, rate, nper, pmt, fv=0, type_=0):
    """PV(rate, nper, pmt, [fv], [type])
    Present value of a series of future payments."""
    r = _num(rate, "PV", 1)
    n = _num(nper, "PV", 2)
    payment = _num(pmt, "PV", 3)
    f = _num(fv, "PV", 4)
    t = _pmt_type(type_, "PV")
    if r == 0:
        return -(f + payment * n)
    growth = (1 + r) ** n
    return -(f + payment * (1 + r * t) * (growth - 1) / r) / growth


@builtin("NPER", "financial", 3, 5)
def fn_nper(ctx, rate, pmt, pv, fv=0, type_=0):
    """NPER(rate, pmt, pv, [fv], [type])
    Number of periods needed to pay off pv (or reach fv)."""
    r = _num(rate, "NPER", 1)
    payment = _num(pmt, "NPER", 2)
    p = _num(pv, "NPER", 3)
    f = _num(fv, "NPER", 4)
    t = _pmt_type(type_, "NPER")
    if r == 0:
        if payment == 0:
            raise NumError("NPER: payment and rate cannot both be 0")
        return -(p + f) / payment
    adjusted = payment * (1 + r * t) / r
    numerator = adjusted - f
    denominator = p + adjusted
    if numerator / denominator <= 0:
        raise NumError("NPER: the loan can never be paid off with this payment")
    return math.log(numerator / denominator) / math.log(1 + r)


@builtin("RATE", "financial", 3, 6)
def fn_rate(ctx, nper, pmt, pv, fv=0, type_=0, guess=0.1):
    """RATE(nper, pmt, pv, [fv], [type], [guess])
    Interest rate per period, found with Newton's method. #NUM! if it does
    not converge within 100 iterations."""
    n = _num(nper, "RATE", 1)
    payment = _num(pmt, "RATE", 2)
    p = _num(pv, "RATE", 3)
    f = _num(fv, "RATE", 4)
    t = _pmt_type(type_, "RATE")
    r = _num(guess, "RATE", 6)

    def balance(rate: float) -> float:
        if abs(rate) < 1e-12:
            return p + payment * n + f
        growth = (1 + rate) ** n
        return p * growth + payment * (1 + rate * t) * (growth - 1) / rate + f

    for _ in range(100):
        value = balance(r)
        step = 1e-7
        slope = (balance(r + step) - value) / step
        if slope == 0:
            break
        new = r - value / slope
        if abs(new - r) < 1e-10:
            return new
        r = new
        if r <= -1:
            break
    raise NumError("RATE did not converge; try a different guess")


@builtin("NPV", "financial", 2, None)
def fn_npv(ctx, rate, *cashflows):
    """NPV(rate, value1, [value2], ...)
    Net present value of cash flows at the end of periods 1, 2, 3 ..."""
    r = _num(rate, "NPV", 1)
    if r == -1:
        raise DivisionByZero("NPV rate must not be -100%")
    flows = _collect_numbers(cashflows, "NPV")
    return math.fsum(v / (1 + r) ** (i + 1) for i, v in enumerate(flows))


@builtin("IRR", "financial", 1, 2)
def fn_irr(ctx, cashflows, guess=0.1):
    """IRR(values, [guess])
    Internal rate of return of periodic cash flows (needs a sign change)."""
    flows = _collect_numbers([_list(cashflows)], "IRR")
    if not any(v > 0 for v in flows) or not any(v < 0 for v in flows):
        raise NumError("IRR needs at least one positive and one negative cash flow")
    r = _num(guess, "IRR", 2)
    for _ in range(100):
        npv = sum(v / (1 + r) ** i for i, v in enumerate(flows))
        derivative = sum(-i * v / (1 + r) ** (i + 1) for i, v in enumerate(flows))
        if derivative == 0:
            break
        new = r - npv / derivative
        if abs(new - r) < 1e-10:
            return new
        r = new
        if r <= -1:
            r = -0.99
    raise NumError("IRR did not converge; try a different guess")


@builtin("EFFECT", "financial", 2)
def fn_effect(ctx, nominal_rate, periods):
    """EFFECT(nominal_rate, periods_per_year)
    Effective annual rate from a nominal rate compounded periods times a year."""
    r = _num(nominal_rate, "EFFECT", 1)
    n = _int(periods, "EFFECT", 2, minimum=1)
    if r <= 0:
        raise NumError("EFFECT nominal rate must be positive")
    return (1 + r / n) ** n - 1


@builtin("NOMINAL", "financial", 2)
def fn_nominal(ctx, effect_rate, periods):
    """NOMINAL(effect_rate, periods_per_year)
    Nominal annual rate that gives the effective rate."""
    r = _num(effect_rate, "NOMINAL", 1)
    n = _int(periods, "NOMINAL", 2, minimum=1)
    if r <= 0:
        raise NumError("NOMINAL effective rate must be positive")
    return n * ((1 + r) ** (1 / n) - 1)


@builtin("SLN", "financial", 3)
def fn_sln(ctx, cost, salvage, life):
    """SLN(cost, salvage, life)
    Straight-line depreciation per period."""
    c = _num(cost, "SLN", 1)
    s = _num(salvage, "SLN", 2)
    n = _num(life, "SLN", 3)
    if n == 0:
        raise DivisionByZero("SLN life must not be 0")
    return values.normalize_number((c - s) / n)


@builtin("DDB", "financial", 4, 5)
def fn_ddb(ctx, cost, salvage, life, period, factor=2):
    """DDB(cost, salvage, life, period, [factor])
    Declining-balance depreciation for one period (double by default)."""
    c = _num(cost, "DDB", 1)
    s = _num(salvage, "DDB", 2)
    n = _num(life, "DDB", 3)
    p = _int(period, "DDB", 4, minimum=1)
    k = _num(factor, "DDB", 5)
    if n <= 0 or p > n or k <= 0 or c < 0 or s < 0:
        raise NumError("DDB arguments are out of range")
    book = c
    depreciation = 0.0
    for _ in range(p):
        depreciation = min(book * k / n, max(0.0, book - s))
        book -= depreciation
    return depreciation


# ---------------------------------------------------------------------------
# Engineering (number bases)
# ---------------------------------------------------------------------------


def _to_base(number: object, fn: str, radix: int, places: object, bits: int = 40) -> str:
    n = _int(number, fn, 1)
    limit = 1 << (bits - 1)
    if not -limit <= n < limit:
        raise NumError(f"{fn}: {n} is out of range")
    if n < 0:
        n += 1 << bits
        digits = _format_radix(n, radix)
        return digits
    digits = _format_radix(n, radix)
    if places is not None:
        width = _int(places, fn, 2, minimum=1)
        if len(digits) > width:
            raise NumError(f"{fn}: {digits} needs more than {width} places")
        digits = digits.rjust(width, "0")
    return digits


def _format_radix(n: int, radix: int) -> str:
    return {2: format(n, "b"), 8: format(n, "o"), 16: format(n, "X")}[radix]


def _from_base(text: object, fn: str, radix: int, bits: int = 40) -> int:
    s = _text(text, fn).strip()
    if len(s) > 10:
        raise NumError(f"{fn}: at most 10 digits are allowed")
    try:
        n = int(s or "0", radix)
    except ValueError:
        raise NumError(f"{fn}: '{s}' is not a valid base-{radix} number") from None
    if len(s) == 10 and n >= 1 << (bits - 1):
        n -= 1 << bits
    return n


@builtin("DEC2BIN", "engineering", 1, 2)
def fn_dec2bin(ctx, number, places=None):
    """DEC2BIN(number, [places])
    Binary text; negative numbers use 10-digit two's complement."""
    return _to_base(number, "DEC2BIN", 2, places, bits=10)


@builtin("BIN2DEC", "engineering", 1)
def fn_bin2dec(ctx, text):
    """BIN2DEC(text)
    Number from binary text (10 digits, two's complement)."""
    return _from_base(text, "BIN2DEC", 2, bits=10)


@builtin("DEC2OCT", "engineering", 1, 2)
def fn_dec2oct(ctx, number, places=None):
    """DEC2OCT(number, [places])
    Octal text; negative numbers use 30-bit two's complement."""
    return _to_base(number, "DEC2OCT", 8, places, bits=30)


@builtin("OCT2DEC", "engineering", 1)
def fn_oct2dec(ctx, text):
    """OCT2DEC(text)
    Number from octal text."""
    return _from_base(text, "OCT2DEC", 8, bits=30)


@builtin("DEC2HEX", "engineering", 1, 2)
def fn_dec2hex(ctx, number, places=None):
    """DEC2HEX(number, [places])
    Hexadecimal text; negative numbers use 40-bit two's complement."""
    return _to_base(number, "DEC2HEX", 16, places, bits=40)


@builtin("HEX2DEC", "engineering", 1)
def fn_hex2dec(ctx, text):
    """HEX2DEC(text)
    Number from hexadecimal text."""
    return _from_base(text, "HEX2DEC", 16, bits=40)


@builtin("BITAND", "engineering", 2)
def fn_bitand(ctx, a, b):
    """BITAND(number1, number2)
    Bitwise AND of two non-negative integers."""
    return _int(a, "BITAND", 1, minimum=0) & _int(b, "BITAND", 2, minimum=0)


@builtin("BITOR", "engineering", 2)
def fn_bitor(ctx, a, b):
    """BITOR(number1, number2)
    Bitwise OR of two non-negative integers."""
    return _int(a, "BITOR", 1, minimum=0) | _int(b, "BITOR", 2, minimum=0)


@builtin("BITXOR", "engineering", 2)
def fn_bitxor(ctx, a, b):
    """BITXOR(number1, number2)
    Bitwise exclusive OR of two non-negative integers."""
    return _int(a, "BITXOR", 1, minimum=0) ^ _int(b, "BITXOR", 2, minimum=0)


@builtin("BITLSHIFT", "engineering", 2)
def fn_bitlshift(ctx, number, shift):
    """BITLSHIFT(number, shift)
    Shift bits left (a negative shift shifts right)."""
    n = _int(number, "BITLSHIFT", 1, minimum=0)
    s = _int(shift, "BITLSHIFT", 2)
    if abs(s) > 53:
        raise NumError("BITLSHIFT shift must be between -53 and 53")
    return n << s if s >= 0 else n >> -s


# ---------------------------------------------------------------------------
# Units
# ---------------------------------------------------------------------------


@builtin("CONVERT", "units", 3)
def fn_convert(ctx, number, from_unit, to_unit):
    """CONVERT(number, from_unit, to_unit)
    Convert a number between units: CONVERT(10, "km", "mi"),
    CONVERT(100, "C", "F"), CONVERT(1, "kWh", "J"). Prefixes such as k, M, m
    and Ki are accepted on metric and data units."""
    n = _num(number, "CONVERT", 1)
    source = units.parse_unit(_text(from_unit, "CONVERT", 2))
    target = units.parse_unit(_text(to_unit, "CONVERT", 3))
    if not source.compatible(target):
        raise UnitError(
            f"CONVERT: '{source.symbol}' ({source.dimension_name}) and "
            f"'{target.symbol}' ({target.dimension_name}) measure different things"
        )
    return values.normalize_number(_round_half_up(n * source.factor / target.factor, 12))


@builtin("QTY", "units", 2)
def fn_qty(ctx, number, unit):
    """QTY(number, unit)
    Build a quantity, the same as number[unit]: QTY(5, "km")."""
    return Quantity.of(_num(number, "QTY", 1), _text(unit, "QTY", 2))


@builtin("UNITOF", "units", 1)
def fn_unitof(ctx, quantity):
    """UNITOF(quantity)
    The unit symbol of a quantity, "" for plain numbers."""
    if isinstance(quantity, Quantity):
        return quantity.unit.symbol
    _num(quantity, "UNITOF")
    return ""


@builtin("VALUEOF", "units", 1, 2)
def fn_valueof(ctx, quantity, unit=None):
    """VALUEOF(quantity, [unit])
    The number of a quantity, optionally after converting to unit."""
    if not isinstance(quantity, Quantity):
        return _num(quantity, "VALUEOF")
    if unit is not None:
        quantity = quantity.to(_text(unit, "VALUEOF", 2))
    return values.normalize_number(quantity.value)


@builtin("DIMENSION", "units", 1)
def fn_dimension(ctx, value):
    """DIMENSION(quantity_or_unit)
    Name of the physical dimension: DIMENSION("km/h") = "speed"."""
    if isinstance(value, Quantity):
        return value.unit.dimension_name
    return units.parse_unit(_text(value, "DIMENSION")).dimension_name


# ---------------------------------------------------------------------------
# Introspection
# ---------------------------------------------------------------------------


def help_text(name: str) -> str:
    """Full help for a function: signature, category and description."""
    spec = lookup(name)
    if spec is None:
        raise KeyError(name)
    body = "\n".join(line.strip() for line in spec.doc.splitlines()[1:]).strip()
    return f"{spec.signature}  [{spec.category}]\n{body}"


def listing() -> str:
    """A compact listing of all functions grouped by category."""
    lines = []
    for category in CATEGORIES:
        specs = functions_in(category)
        if not specs:
            continue
        lines.append(f"{category.upper()} ({len(specs)})")
        for spec in specs:
            lines.append(f"  {spec.signature:<48} {spec.summary}")
    return "\n".join(lines)
