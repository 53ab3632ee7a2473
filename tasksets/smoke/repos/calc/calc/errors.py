"""Exception hierarchy shared by every calc module."""


class CalcError(ValueError):
    """Base class for all errors raised by calc."""


class StatsError(CalcError):
    """Raised when a statistic is undefined for the given data (e.g. empty input)."""


class UnitError(CalcError):
    """Raised for unknown units or conversions between incompatible dimensions."""
