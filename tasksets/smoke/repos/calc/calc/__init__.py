"""calc: small, dependency-free arithmetic, statistics and unit helpers.

The package groups three modules:

* :mod:`calc.ops` -- safe arithmetic (division, clamping, rounding, percentages)
* :mod:`calc.stats` -- descriptive statistics over sequences of numbers
* :mod:`calc.units` -- length, mass and temperature conversion
"""

from calc.errors import CalcError, StatsError, UnitError
from calc.ops import clamp, divide, percent_change, round_half_up
from calc.stats import mean, median, mode, percentile, quartiles, stdev, variance
from calc.units import convert, convert_temperature

__all__ = [
    "CalcError",
    "StatsError",
    "UnitError",
    "clamp",
    "convert",
    "convert_temperature",
    "divide",
    "mean",
    "median",
    "mode",
    "percent_change",
    "percentile",
    "quartiles",
    "round_half_up",
    "stdev",
    "variance",
]

__version__ = "0.3.1"
