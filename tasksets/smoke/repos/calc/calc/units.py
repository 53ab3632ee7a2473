"""Unit conversion for length, mass and temperature.

Length and mass are linear: each unit has a factor to a base unit (metres,
kilograms).  Temperature is affine and goes through kelvin instead.
"""

from calc.errors import UnitError

LENGTH = {
    "mm": 0.001,
    "cm": 0.01,
    "m": 1.0,
    "km": 1000.0,
    "in": 0.0254,
    "ft": 0.3048,
    "yd": 0.9144,
    "mi": 1609.344,
}

MASS = {
    "mg": 1e-6,
    "g": 0.001,
    "kg": 1.0,
    "t": 1000.0,
    "oz": 0.028349523125,
    "lb": 0.45359237,
}

DIMENSIONS = {"length": LENGTH, "mass": MASS}

TEMPERATURE_UNITS = ("C", "F", "K")


def _dimension_of(unit):
    for name, table in DIMENSIONS.items():
        if unit in table:
            return name
    if unit in TEMPERATURE_UNITS:
        return "temperature"
    raise UnitError(f"unknown unit: {unit!r}")


def convert(value, from_unit, to_unit):
    """Convert ``value`` between two units of the same dimension.

    >>> convert(1, "km", "m")
    1000.0

    Temperatures are delegated to :func:`convert_temperature`.
    """
    source = _dimension_of(from_unit)
    target = _dimension_of(to_unit)
    if source != target:
        raise UnitError(f"cannot convert {source} ({from_unit}) to {target} ({to_unit})")
    if source == "temperature":
        return convert_temperature(value, from_unit, to_unit)
    table = DIMENSIONS[source]
    return value * table[from_unit] / table[to_unit]


def _to_kelvin(value, unit):
    if unit == "K":
        kelvin = value
    elif unit == "C":
        kelvin = value + 273.15
    elif unit == "F":
        kelvin = value - 32 * 5 / 9 + 273.15
    else:
        raise UnitError(f"unknown temperature unit: {unit!r}")
    if kelvin < 0:
        raise UnitError(f"{value}{unit} is below absolute zero")
    return kelvin


def _from_kelvin(kelvin, unit):
    if unit == "K":
        return kelvin
    if unit == "C":
        return kelvin - 273.15
    if unit == "F":
        return (kelvin - 273.15) * 9 / 5 + 32
    raise UnitError(f"unknown temperature unit: {unit!r}")


def convert_temperature(value, from_unit, to_unit):
    """Convert a temperature between ``"C"``, ``"F"`` and ``"K"``.

    The result is rounded to 10 decimal places to hide float noise from the
    round trip through kelvin.
    """
    if from_unit == to_unit:
        _to_kelvin(value, from_unit)  # still validates unit and absolute zero
        return value
    return round(_from_kelvin(_to_kelvin(value, from_unit), to_unit), 10)
