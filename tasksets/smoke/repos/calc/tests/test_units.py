import pytest

from calc import UnitError, convert, convert_temperature


def test_length():
    assert convert(1, "km", "m") == 1000.0
    assert convert(12, "in", "ft") == pytest.approx(1.0)


def test_mass():
    assert convert(1, "lb", "g") == pytest.approx(453.59237)


def test_incompatible_dimensions():
    with pytest.raises(UnitError, match="cannot convert"):
        convert(1, "kg", "m")


def test_unknown_unit():
    with pytest.raises(UnitError, match="unknown unit"):
        convert(1, "furlong", "m")


def test_celsius_to_fahrenheit():
    assert convert_temperature(100, "C", "F") == 212


def test_celsius_to_kelvin():
    assert convert_temperature(-273.15, "C", "K") == 0


def test_fahrenheit_to_celsius():
    assert convert_temperature(212, "F", "C") == 100
    assert convert_temperature(32, "F", "C") == 0


def test_fahrenheit_via_convert():
    assert convert(-40, "F", "C") == -40


def test_below_absolute_zero():
    with pytest.raises(UnitError, match="absolute zero"):
        convert_temperature(-300, "C", "K")
