import math

import pytest

from calc import StatsError, mean, median, mode, stdev, variance


def test_mean():
    assert mean([1, 2, 3, 4]) == 2.5


def test_mean_empty_raises():
    with pytest.raises(StatsError):
        mean([])


def test_rejects_non_numbers():
    with pytest.raises(StatsError, match="not a number"):
        mean([1, "2"])


def test_median_odd_length():
    assert median([5, 1, 3]) == 3


def test_median_even_length():
    assert median([4, 1, 3, 2]) == 2.5


def test_median_two_values():
    assert median([10, 20]) == 15


def test_mode_prefers_first_on_tie():
    assert mode([3, 1, 3, 1, 2]) == 3


def test_variance_sample_and_population():
    data = [2, 4, 4, 4, 5, 5, 7, 9]
    assert variance(data, sample=False) == 4.0
    assert math.isclose(variance(data), 32 / 7)


def test_stdev_population():
    assert stdev([2, 4, 4, 4, 5, 5, 7, 9], sample=False) == 2.0


def test_sample_variance_needs_two_values():
    with pytest.raises(StatsError):
        variance([1])
