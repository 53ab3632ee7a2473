"""Descriptive statistics for sequences of numbers.

All functions accept any iterable of ints or floats and raise
:class:`~calc.errors.StatsError` when the statistic is undefined for the data
(most commonly: empty input).
"""

import math
from collections import Counter

from calc.errors import StatsError


def _as_list(data, minimum=1, name="data"):
    values = list(data)
    if len(values) < minimum:
        noun = "value" if minimum == 1 else "values"
        raise StatsError(f"{name} needs at least {minimum} {noun}, got {len(values)}")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise StatsError(f"not a number: {value!r}")
    return values


def mean(data):
    """Arithmetic mean of ``data``."""
    values = _as_list(data)
    return math.fsum(values) / len(values)


def median(data):
    """Middle value of ``data``; the mean of the two middle values for even sizes."""
    values = sorted(_as_list(data))
    n = len(values)
    mid = n // 2
    if n % 2:
        return values[mid]
    return (values[mid] + values[mid + 1]) / 2


def mode(data):
    """Most common value of ``data``.

    Ties are broken in favour of the value seen first.
    """
    values = _as_list(data)
    counts = Counter(values)
    best = max(counts.values())
    for value in values:
        if counts[value] == best:
            return value
    raise AssertionError("unreachable")


def variance(data, sample=True):
    """Variance of ``data``.

    With ``sample=True`` (the default) this is the unbiased sample variance
    (divides by ``n - 1``); with ``sample=False`` the population variance.
    """
    values = _as_list(data, minimum=2 if sample else 1)
    centre = mean(values)
    squares = math.fsum((x - centre) ** 2 for x in values)
    return squares / (len(values) - 1 if sample else len(values))


def stdev(data, sample=True):
    """Standard deviation of ``data``; see :func:`variance` for ``sample``."""
    return math.sqrt(variance(data, sample=sample))


def percentile(data, p):
    """The ``p``-th percentile of ``data`` (0 <= p <= 100).

    Uses linear interpolation between the closest ranks, the same method as
    NumPy's default and spreadsheet ``PERCENTILE.INC``.
    """
    if not 0 <= p <= 100:
        raise StatsError(f"percentile must be between 0 and 100, got {p!r}")
    values = sorted(_as_list(data))
    rank = (len(values) - 1) * p / 100
    lower = math.floor(rank)
    upper = lower + 1
    fraction = rank - lower
    return values[lower] + (values[upper] - values[lower]) * fraction


def quartiles(data):
    """Return ``(q1, q2, q3)``, the 25th, 50th and 75th percentiles."""
    values = _as_list(data)
    return tuple(percentile(values, p) for p in (25, 50, 75))
