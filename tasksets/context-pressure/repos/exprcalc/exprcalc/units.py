"""Physical units and quantities.

A :class:`Unit` is a scale ``factor`` (and, for temperatures, an ``offset``)
relative to the SI base units of its dimension.  Dimensions are stored as a
tuple of exponents over :data:`BASE_DIMENSIONS`.  Compound units such as
``km/h`` or ``kg*m/s^2`` are built by :func:`parse_unit`.

Converting a value ``v`` from unit ``a`` to unit ``b`` is::

    si = (v + a.offset) * a.factor
    result = si / b.factor - b.offset

Offsets only make sense for simple (non-compound) temperature units; a
compound unit containing an offset unit is rejected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from .errors import UnitError

BASE_DIMENSIONS = ("length", "mass", "time", "temperature", "amount", "current", "information")
_ZERO = (0,) * len(BASE_DIMENSIONS)


def _dim(**exps: int) -> tuple[int, ...]:
    return tuple(exps.get(name, 0) for name in BASE_DIMENSIONS)


DIMENSION_NAMES = {
    _dim(length=1): "length",
    _dim(mass=1): "mass",
    _dim(time=1): "time",
    _dim(temperature=1): "temperature",
    _dim(amount=1): "amount of substance",
    _dim(current=1): "electric current",
    _dim(information=1): "information",
    _dim(length=2): "area",
    _dim(length=3): "volume",
    _dim(length=1, time=-1): "speed",
    _dim(length=1, time=-2): "acceleration",
    _dim(mass=1, length=1, time=-2): "force",
    _dim(mass=1, length=2, time=-2): "energy",
    _dim(mass=1, length=2, time=-3): "power",
    _dim(mass=1, length=-1, time=-2): "pressure",
    _dim(time=-1): "frequency",
    _dim(information=1, time=-1): "data rate",
    _ZERO: "dimensionless",
}


@dataclass(frozen=True)
class Unit:
    symbol: str
    factor: float
    dims: tuple[int, ...]
    offset: float = 0.0

    @property
    def dimension_name(self) -> str:
        return DIMENSION_NAMES.get(self.dims, "compound")

    @property
    def is_dimensionless(self) -> bool:
        return self.dims == _ZERO

    def compatible(self, other: "Unit") -> bool:
        return self.dims == other.dims

    def __str__(self) -> str:
        return self.symbol


# symbol -> (factor to SI, dimension, offset, accepts SI prefixes)
_UNITS: dict[str, tuple[float, tuple[int, ...], float, bool]] = {
    # length
    "m": (1.0, _dim(length=1), 0.0, True),
    "in": (0.0254, _dim(length=1), 0.0, False),
    "ft": (0.3048, _dim(length=1), 0.0, False),
    "yd": (0.9144, _dim(length=1), 0.0, False),
    "mi": (1609.344, _dim(length=1), 0.0, False),
    "nmi": (1852.0, _dim(length=1), 0.0, False),
    "au": (149597870700.0, _dim(length=1), 0.0, False),
    "ly": (9460730472580800.0, _dim(length=1), 0.0, False),
    # mass
    "g": (0.001, _dim(mass=1), 0.0, True),
    "t": (1000.0, _dim(mass=1), 0.0, False),
    "lb": (0.45359237, _dim(mass=1), 0.0, False),
    "oz": (0.028349523125, _dim(mass=1), 0.0, False),
    "st": (6.35029318, _dim(mass=1), 0.0, False),
    # time
    "s": (1.0, _dim(time=1), 0.0, True),
    "min": (60.0, _dim(time=1), 0.0, False),
    "h": (3600.0, _dim(time=1), 0.0, False),
    "hr": (3600.0, _dim(time=1), 0.0, False),
    "day": (86400.0, _dim(time=1), 0.0, False),
    "wk": (604800.0, _dim(time=1), 0.0, False),
    "yr": (31557600.0, _dim(time=1), 0.0, False),
    # temperature (absolute scales)
    "K": (1.0, _dim(temperature=1), 0.0, False),
    "degC": (1.0, _dim(temperature=1), 273.15, False),
    "degF": (5.0 / 9.0, _dim(temperature=1), 459.67, False),
    "degR": (5.0 / 9.0, _dim(temperature=1), 0.0, False),
    # amount, current
    "mol": (1.0, _dim(amount=1), 0.0, True),
    "A": (1.0, _dim(current=1), 0.0, True),
    # information
    "bit": (1.0, _dim(information=1), 0.0, True),
    "B": (8.0, _dim(information=1), 0.0, True),
    # area / volume
    "ha": (10000.0, _dim(length=2), 0.0, False),
    "acre": (4046.8564224, _dim(length=2), 0.0, False),
    "L": (0.001, _dim(length=3), 0.0, True),
    "gal": (0.003785411784, _dim(length=3), 0.0, False),
    "qt": (0.000946352946, _dim(length=3), 0.0, False),
    "pt": (0.000473176473, _dim(length=3), 0.0, False),
    "cup": (0.0002365882365, _dim(length=3), 0.0, False),
    "floz": (0.0000295735295625, _dim(length=3), 0.0, False),
    # speed
    "mph": (0.44704, _dim(length=1, time=-1), 0.0, False),
    "kn": (1852.0 / 3600.0, _dim(length=1, time=-1), 0.0, False),
    # derived
    "N": (1.0, _dim(mass=1, length=1, time=-2), 0.0, True),
    "lbf": (4.4482216152605, _dim(mass=1, length=1, time=-2), 0.0, False),
    "J": (1.0, _dim(mass=1, length=2, time=-2), 0.0, True),
    "cal": (4.184, _dim(mass=1, length=2, time=-2), 0.0, True),
    "Wh": (3600.0, _dim(mass=1, length=2, time=-2), 0.0, True),
    "W": (1.0, _dim(mass=1, length=2, time=-3), 0.0, True),
    "hp": (745.69987158227, _dim(mass=1, length=2, time=-3), 0.0, False),
    "Pa": (1.0, _dim(mass=1, length=-1, time=-2), 0.0, True),
    "bar": (100000.0, _dim(mass=1, length=-1, time=-2), 0.0, False),
    "atm": (101325.0, _dim(mass=1, length=-1, time=-2), 0.0, False),
    "psi": (6894.757293168, _dim(mass=1, length=-1, time=-2), 0.0, False),
    "Hz": (1.0, _dim(time=-1), 0.0, True),
    "%": (0.01, _ZERO, 0.0, False),
}

ALIASES = {
    "meter": "m", "metre": "m", "meters": "m", "inch": "in", "foot": "ft", "feet": "ft",
    "yard": "yd", "mile": "mi", "miles": "mi", "gram": "g", "tonne": "t", "pound": "lb",
    "lbm": "lb", "ounce": "oz", "sec": "s", "second": "s", "mn": "min", "minute": "min",
    "hour": "h", "d": "day", "days": "day", "week": "wk", "year": "yr",
    "C": "degC", "cel": "degC", "°C": "degC", "F": "degF", "fah": "degF", "°F": "degF",
    "kel": "K", "Rank": "degR", "l": "L", "lt": "L", "liter": "L", "litre": "L",
    "kt": "kn", "knot": "kn", "byte": "B", "bits": "bit", "bytes": "B",
}

PREFIXES = {
    "Y": 1e24, "Z": 1e21, "E": 1e18, "P": 1e15, "T": 1e12, "G": 1e9, "M": 1e6,
    "k": 1e3, "h": 1e2, "da": 1e1, "d": 1e-1, "c": 1e-2, "m": 1e-3, "u": 1e-6,
    "µ": 1e-6, "n": 1e-9, "p": 1e-12, "f": 1e-15,
}
BINARY_PREFIXES = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40}


def _simple_unit(symbol: str) -> Unit:
    symbol = ALIASES.get(symbol, symbol)
    if symbol in _UNITS:
        factor, dims, offset, _ = _UNITS[symbol]
        return Unit(symbol, factor, dims, offset)
    for prefixes in (BINARY_PREFIXES, PREFIXES):
        for prefix in sorted(prefixes, key=len, reverse=True):
            if symbol.startswith(prefix) and len(symbol) > len(prefix):
                base = symbol[len(prefix):]
                entry = _UNITS.get(base)
                if entry and entry[3]:
                    if prefixes is BINARY_PREFIXES and base not in ("B", "bit"):
                        continue
                    factor, dims, offset, _ = entry
                    return Unit(symbol, factor * prefixes[prefix], dims, offset)
    raise UnitError(f"Unknown unit '{symbol}'")


_TERM = re.compile(r"\s*([^\s*/^]+)\s*(?:\^\s*(-?\d+))?\s*")


@lru_cache(maxsize=512)
def parse_unit(text: str) -> Unit:
    """Parse a unit expression such as ``"km"``, ``"m/s^2"`` or ``"kW*h"``.

    >>> parse_unit("km/h").factor
    0.2777777777777778
    """
    text = text.strip()
    if not text:
        raise UnitError("Empty unit")
    if text in ALIASES or text in _UNITS:
        return _simple_unit(text)
    factor = 1.0
    dims = list(_ZERO)
    pieces = re.split(r"([*/])", text)
    sign = 1
    terms = 0
    for piece in pieces:
        if piece in ("*", "/"):
            sign = 1 if piece == "*" else -1
            continue
        match = _TERM.fullmatch(piece)
        if not match:
            raise UnitError(f"Cannot parse unit '{text}'")
        unit = _simple_unit(match.group(1))
        if unit.offset:
            raise UnitError(f"'{unit.symbol}' cannot be combined with other units in '{text}'")
        power = int(match.group(2) or 1) * sign
        factor *= unit.factor ** power
        for i, exp in enumerate(unit.dims):
            dims[i] += exp * power
        terms += 1
    if terms == 1 and "^" not in text:
        return _simple_unit(text)
    return Unit(text, factor, tuple(dims))


def convert_value(value: float, source: Unit, target: Unit) -> float:
    """Convert ``value`` from ``source`` to ``target`` (handles temperature offsets)."""
    if not source.compatible(target):
        raise UnitError(
            f"Cannot convert '{source.symbol}' ({source.dimension_name}) "
            f"to '{target.symbol}' ({target.dimension_name})"
        )
    si = (value + source.offset) * source.factor
    return si / target.factor - target.offset


def convert(value: float, source: str, target: str) -> float:
    """Convert between unit symbols, e.g. ``convert(1, "mi", "km")``."""
    return convert_value(value, parse_unit(source), parse_unit(target))


@dataclass(frozen=True)
class Quantity:
    """A number with a unit.  Arithmetic keeps the left operand's unit."""

    value: float
    unit: Unit

    @classmethod
    def of(cls, value: float, unit: str | Unit) -> "Quantity":
        return cls(value, unit if isinstance(unit, Unit) else parse_unit(unit))

    def to(self, unit: str | Unit) -> "Quantity":
        target = unit if isinstance(unit, Unit) else parse_unit(unit)
        if not self.unit.compatible(target):
            raise UnitError(
                f"Cannot convert '{self.unit.symbol}' ({self.unit.dimension_name}) "
                f"to '{target.symbol}' ({target.dimension_name})"
            )
        return Quantity(self.value * self.unit.factor / target.factor, target)

    def si_value(self) -> float:
        return (self.value + self.unit.offset) * self.unit.factor

    def _same_unit(self, other: "Quantity", op: str) -> float:
        if not self.unit.compatible(other.unit):
            raise UnitError(
                f"Cannot {op} '{other.unit.symbol}' ({other.unit.dimension_name}) "
                f"and '{self.unit.symbol}' ({self.unit.dimension_name})"
            )
        if self.unit.offset or other.unit.offset:
            # Temperature differences: treat the right operand as an interval.
            return other.value * other.unit.factor / self.unit.factor
        return convert_value(other.value, other.unit, self.unit)

    def add(self, other: "Quantity") -> "Quantity":
        return Quantity(self.value + self._same_unit(other, "add"), self.unit)

    def sub(self, other: "Quantity") -> "Quantity":
        return Quantity(self.value - self._same_unit(other, "subtract"), self.unit)

    def scale(self, k: float) -> "Quantity":
        return Quantity(self.value * k, self.unit)

    def mul(self, other: "Quantity") -> "Quantity | float":
        return _combine(self, other, 1)

    def div(self, other: "Quantity") -> "Quantity | float":
        return _combine(self, other, -1)

    def compare_key(self) -> float:
        return self.si_value()

    def __str__(self) -> str:
        return f"{self.value:g} {self.unit.symbol}"


def _combine(a: Quantity, b: Quantity, sign: int) -> "Quantity | float":
    if a.unit.offset or b.unit.offset:
        raise UnitError("Temperatures on an absolute scale cannot be multiplied or divided")
    dims = tuple(x + sign * y for x, y in zip(a.unit.dims, b.unit.dims))
    value = a.value * b.value if sign > 0 else a.value / b.value
    factor = a.unit.factor * (b.unit.factor ** sign)
    if dims == _ZERO:
        return value * factor
    symbol = f"{a.unit.symbol}{'*' if sign > 0 else '/'}{b.unit.symbol}"
    return Quantity(value, Unit(symbol, factor, dims))


def known_units() -> list[str]:
    """All base unit symbols (without prefixes or aliases), sorted."""
    return sorted(_UNITS)
