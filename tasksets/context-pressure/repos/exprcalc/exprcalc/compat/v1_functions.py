"""Function semantics of exprcalc 1.x.

Sheets saved by exprcalc 1.x are evaluated with ``Calculator(compat="v1")``,
which overlays the functions below on the current library.  They reproduce
the 1.x behaviour *including its quirks*; do not "fix" them, change the
current implementations in :mod:`exprcalc.functions` instead.

Differences from the current library:

* ``ROUND`` used ``floor(x * 10**d + 0.5)``, so negative halves round up
  (ROUND(-2.5) = -2) and binary float artefacts show (ROUND(1.005, 2) = 1).
* ``FIND`` was case-insensitive and returned 0 instead of an error.
* ``AVERAGE`` counted text items in lists as zero.
* ``TEXT`` took Python format specs (``TEXT(3.14159, ".2f")``).
* ``CONVERT`` knew length and mass only, with a fixed table and no prefixes.
* ``CONCAT`` put a space between the items.
"""

from __future__ import annotations

import math

from .. import values
from ..errors import ArgumentError, DivisionByZero, UnitError
from ..functions import REGISTRY, FunctionSpec

V1_FUNCTIONS: dict[str, FunctionSpec] = {}


def _v1(name: str, min_args: int, max_args: int | None):
    def decorator(func):
        V1_FUNCTIONS[name] = FunctionSpec(name, func, REGISTRY[name].category, min_args, max_args)
        return func

    return decorator


def _number(value, fn):
    return values.to_number(value, f"{fn} (v1)")


@_v1("ROUND", 1, 2)
def v1_round(ctx, number, digits=0):
    """ROUND(number, [digits])
    1.x rounding: floor(number * 10^digits + 0.5) / 10^digits."""
    n = _number(number, "ROUND")
    d = int(_number(digits, "ROUND"))
    factor = 10 ** d
    return values.normalize_number(math.floor(n * factor + 0.5) / factor)


@_v1("FIND", 2, 3)
def v1_find(ctx, needle, haystack, start=1):
    """FIND(find_text, within_text, [start])
    1.x FIND: case-insensitive, 0 when not found."""
    n = values.to_text(needle).lower()
    h = values.to_text(haystack).lower()
    begin = int(_number(start, "FIND"))
    return h.find(n, max(begin - 1, 0)) + 1


@_v1("AVERAGE", 1, None)
def v1_average(ctx, *items):
    """AVERAGE(number1, [number2], ...)
    1.x AVERAGE: text inside lists counts as 0."""
    nums = []
    for item in items:
        for value in item if isinstance(item, list) else [item]:
            if value is None:
                continue
            if isinstance(value, str):
                nums.append(values.parse_number_text(value) or 0)
            else:
                nums.append(_number(value, "AVERAGE"))
    if not nums:
        raise DivisionByZero("AVERAGE of nothing")
    return values.normalize_number(sum(nums) / len(nums))


@_v1("TEXT", 2, 2)
def v1_text(ctx, value, spec):
    """TEXT(value, python_format_spec)
    1.x TEXT: Python format specs such as ".2f" or ",d"."""
    try:
        return format(_number(value, "TEXT"), values.to_text(spec))
    except ValueError as exc:
        raise ArgumentError(f"TEXT (v1): {exc}") from None


_V1_UNITS = {
    "m": ("length", 1.0), "km": ("length", 1000.0), "cm": ("length", 0.01), "mm": ("length", 0.001),
    "in": ("length", 0.0254), "ft": ("length", 0.3048), "mi": ("length", 1609.344),
    "g": ("mass", 0.001), "kg": ("mass", 1.0), "lb": ("mass", 0.45359237), "oz": ("mass", 0.028349523125),
}


@_v1("CONVERT", 3, 3)
def v1_convert(ctx, number, from_unit, to_unit):
    """CONVERT(number, from_unit, to_unit)
    1.x CONVERT: length and mass units only."""
    n = _number(number, "CONVERT")
    try:
        kind_a, factor_a = _V1_UNITS[values.to_text(from_unit)]
        kind_b, factor_b = _V1_UNITS[values.to_text(to_unit)]
    except KeyError as exc:
        raise UnitError(f"CONVERT (v1): unknown unit {exc.args[0]!r}") from None
    if kind_a != kind_b:
        raise UnitError(f"CONVERT (v1): cannot convert {kind_a} to {kind_b}")
    return values.normalize_number(n * factor_a / factor_b)


@_v1("CONCAT", 1, None)
def v1_concat(ctx, *items):
    """CONCAT(text1, [text2], ...)
    1.x CONCAT: items joined with a single space."""
    flat = []
    for item in items:
        flat.extend(item if isinstance(item, list) else [item])
    return " ".join(values.to_text(v) for v in flat)


def registry_for(compat: str | None) -> dict[str, FunctionSpec]:
    """The function registry for a compatibility level (``None`` or ``"v1"``)."""
    if compat in (None, "", "v2"):
        return REGISTRY
    if compat == "v1":
        merged = dict(REGISTRY)
        merged.update(V1_FUNCTIONS)
        return merged
    raise ValueError(f"unknown compatibility level {compat!r}")
