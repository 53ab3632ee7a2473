import pytest

from calc import CalcError, clamp, divide, percent_change, round_half_up


def test_divide():
    assert divide(7, 2) == 3.5


def test_divide_by_zero_raises():
    with pytest.raises(CalcError, match="by zero"):
        divide(1, 0)


def test_divide_by_zero_default():
    assert divide(1, 0, default=0.0) == 0.0


def test_clamp_inside_and_outside():
    assert clamp(5, 0, 10) == 5
    assert clamp(-3, 0, 10) == 0
    assert clamp(42, 0, 10) == 10


def test_clamp_rejects_empty_interval():
    with pytest.raises(CalcError):
        clamp(1, 10, 0)


def test_round_half_up():
    assert round_half_up(2.5) == 3
    assert round_half_up(-2.5) == -3
    assert round_half_up(2.675, 2) == 2.68


def test_percent_change():
    assert percent_change(50, 75) == 50.0
    assert percent_change(-50, -25) == 50.0


def test_percent_change_zero_baseline():
    with pytest.raises(CalcError):
        percent_change(0, 10)
