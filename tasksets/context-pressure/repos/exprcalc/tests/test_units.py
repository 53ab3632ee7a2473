import pytest

from exprcalc import Quantity
from exprcalc.errors import UnitError
from exprcalc.units import convert, parse_unit


def test_parse_prefixed_and_compound_units():
    assert parse_unit("km").factor == 1000
    assert parse_unit("km/h").factor == pytest.approx(1000 / 3600)
    assert parse_unit("m/s^2").dimension_name == "acceleration"
    assert parse_unit("KiB").factor == 8 * 1024


def test_exact_names_win_over_prefixes():
    assert parse_unit("min").dimension_name == "time"
    assert parse_unit("Pa").dimension_name == "pressure"


def test_unknown_unit():
    with pytest.raises(UnitError) as info:
        parse_unit("furlong")
    assert "Unknown unit 'furlong'" in info.value.message


def test_convert_helper():
    assert convert(1, "mi", "km") == pytest.approx(1.609344)
    assert convert(0, "degC", "K") == pytest.approx(273.15)


def test_convert_length_and_speed(ev):
    assert ev('CONVERT(10, "km", "mi")') == pytest.approx(6.213711922)
    assert ev('CONVERT(100, "km/h", "m/s")') == pytest.approx(27.7777777778)
    assert ev('CONVERT(1, "kWh", "J")') == 3600000


def test_convert_incompatible(ev):
    with pytest.raises(UnitError) as info:
        ev('CONVERT(1, "kg", "m")')
    assert "measure different things" in info.value.message


def test_convert_temperature(ev):
    assert ev('CONVERT(100, "C", "F")') == pytest.approx(212)
    assert ev('CONVERT(32, "F", "C")') == pytest.approx(0, abs=1e-9)
    assert ev('CONVERT(25, "C", "K")') == pytest.approx(298.15)


def test_quantity_to_temperature(ev):
    result = ev("37[degC] to [degF]")
    assert result.unit.symbol == "degF"
    assert result.value == pytest.approx(98.6)


def test_temperature_round_trip(ev):
    assert ev('CONVERT(VALUEOF(20[degC] to [K]), "K", "C")') == pytest.approx(20)


def test_quantity_addition_converts_right_operand(ev):
    result = ev("2[km] + 300[m]")
    assert result.unit.symbol == "km"
    assert result.value == pytest.approx(2.3)


def test_quantity_conversion(ev):
    result = ev("5[km] to [mi]")
    assert result.value == pytest.approx(3.10685596)


def test_quantity_multiplication_and_division(ev):
    speed = ev("100[km] / 2[h]")
    assert speed.unit.dimension_name == "speed"
    assert (speed.to("km/h")).value == pytest.approx(50)
    assert ev("10[m] / 2[m]") == 5


def test_quantity_comparison(ev):
    assert ev("1[km] > 900[m]") is True


def test_adding_plain_number_to_quantity(ev):
    with pytest.raises(UnitError):
        ev("1[km] + 5")


def test_unit_functions(ev):
    assert ev('UNITOF(QTY(5, "kg"))') == "kg"
    assert ev('VALUEOF(1500[m], "km")') == 1.5
    assert ev('DIMENSION("km/h")') == "speed"


def test_quantity_str():
    assert str(Quantity.of(2.5, "km")) == "2.5 km"
