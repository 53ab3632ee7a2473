import datetime as dt

import pytest

from exprcalc.errors import ArgumentError
from exprcalc.formatting import format_number, split_sections


def test_fixed_decimals(ev):
    assert ev('TEXT(3.14159, "0.00")') == "3.14"
    assert ev('TEXT(2.675, "0.00")') == "2.68"
    assert ev('TEXT(7, "000")') == "007"


def test_thousands_grouping_positive(ev):
    assert ev('TEXT(1234567.891, "#,##0.00")') == "1,234,567.89"
    assert ev('TEXT(999, "#,##0")') == "999"
    assert ev('TEXT(123456, "#,##0")') == "123,456"


def test_thousands_grouping_negative(ev):
    assert ev('TEXT(-1234567, "#,##0")') == "-1,234,567"
    assert ev('TEXT(-123456, "#,##0")') == "-123,456"
    assert ev('TEXT(-999.5, "#,##0.00")') == "-999.50"


def test_fixed_function_negative(ev):
    assert ev("FIXED(-123456.789, 1)") == "-123,456.8"


def test_fixed_function_positive(ev):
    assert ev("FIXED(1234.567)") == "1,234.57"
    assert ev("FIXED(1234.567, 1, TRUE)") == "1234.6"


def test_percent_and_scientific(ev):
    assert ev('TEXT(0.256, "0.0%")') == "25.6%"
    assert ev('TEXT(12345.678, "0.00E+00")') == "1.23E+04"
    assert ev('TEXT(0.00012, "0.0E+00")') == "1.2E-04"


def test_optional_digits(ev):
    assert ev('TEXT(5, "0.##")') == "5."
    assert ev('TEXT(5.125, "0.##")') == "5.13"


def test_sections(ev):
    assert ev('TEXT(-5, "0;(0)")') == "(5)"
    assert ev('TEXT(0, "0;-0;""zero""")') == "zero"


def test_currency_and_scaling(ev):
    assert ev('TEXT(1234.5, "$#,##0.00")') == "$1,234.50"
    assert ev('TEXT(1234567, "#,##0,""K""")') == "1,235K"
    assert ev("DOLLAR(-1234.5)") == "($1,234.50)"


def test_dates(ev):
    assert ev('TEXT(DATE(2024, 1, 1), "yyyy-mm-dd")') == "2024-01-01"
    assert ev('TEXT(DATE(2024, 3, 1), "dddd, mmmm d")') == "Friday, March 1"
    assert ev('TEXT(45292.75, "h:mm AM/PM")') == "6:00 PM"
    assert ev('TEXT(45292.5, "hh:mm:ss")') == "12:00:00"


def test_text_section(ev):
    assert ev('TEXT("abc", "0;0;0;""<""@"">""")') == "<abc>"


def test_split_sections_respects_quotes():
    assert split_sections('0;"a;b"') == ["0", '"a;b"']


def test_too_many_sections():
    with pytest.raises(ArgumentError):
        split_sections("0;0;0;0;0")


def test_format_number_direct():
    assert format_number(1234.5, "#,##0.00") == "1,234.50"
    assert format_number(0.5, "0%") == "50%"


def test_general(ev):
    assert ev('TEXT(1.5, "General")') == "1.5"
