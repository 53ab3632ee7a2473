import pytest

from calc import StatsError, percentile, quartiles


def test_percentile_interpolates():
    assert percentile([10, 20, 30, 40], 50) == 25


def test_percentile_zero_is_min():
    assert percentile([7, 3, 9], 0) == 3


def test_percentile_out_of_range():
    with pytest.raises(StatsError):
        percentile([1, 2, 3], 101)


def test_percentile_empty():
    with pytest.raises(StatsError):
        percentile([], 50)


def test_quartiles():
    assert quartiles([1, 2, 3, 4, 5]) == (2, 3, 4)
