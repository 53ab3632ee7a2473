import datetime as dt

from exprcalc import Quantity
from exprcalc.display import format_number, format_table, format_value
from exprcalc.errors import DivisionByZero


def test_format_number_precision():
    assert format_number(0.1 + 0.2) == "0.3"
    assert format_number(2 / 3) == "0.6666666667"


def test_format_number_thousands():
    assert format_number(1234567.891, thousands=True) == "1,234,567.891"
    assert format_number(-123456, thousands=True) == "-123,456"
    assert format_number(-999, thousands=True) == "-999"


def test_format_number_decimal_comma():
    assert format_number(-1234.5, decimal_separator=",", thousands=True) == "-1.234,5"


def test_format_number_scientific():
    assert format_number(1.5e20) == "1.5E+20"
    assert format_number(-2.5e-12) == "-2.5E-12"


def test_format_value_types():
    assert format_value(True) == "TRUE"
    assert format_value(None) == ""
    assert format_value(dt.date(2024, 1, 2)) == "2024-01-02"
    assert format_value(dt.datetime(2024, 1, 2, 3, 4, 5)) == "2024-01-02 03:04:05"
    assert format_value(Quantity.of(2.5, "km")) == "2.5 km"
    assert format_value([1, "a", [2]]) == '{1, "a", {2}}'
    assert format_value(DivisionByZero("x")) == "#DIV/0!"


def test_format_table():
    text = format_table([["name", "qty"], ["apple", 12], ["kiwi", 3]])
    assert text.splitlines() == ["name   qty", "apple   12", "kiwi     3"]
