import pytest

from exprcalc import Calculator
from exprcalc.errors import ParseError
from exprcalc.lexer import Syntax


@pytest.fixture
def de():
    return Calculator(locale="de")


def test_syntax_for_locale():
    assert Syntax.for_locale("de_DE") == Syntax(",", ";")
    assert Syntax.for_locale("en-US") == Syntax(".", ",")


def test_unknown_locale():
    with pytest.raises(ValueError):
        Calculator(locale="xx")


def test_decimal_comma_number(de):
    assert de.evaluate("1,5 * 2") == 3


def test_semicolon_separates_arguments(de):
    assert de.evaluate("SUM(1; 2; 3)") == 6


def test_round_with_decimal_comma(de):
    assert de.evaluate("ROUND(2,567; 2)") == 2.57


def test_user_function_with_semicolons(de):
    de.define("brutto(netto; satz) := netto * (1 + satz)")
    assert de.evaluate("brutto(100; 19%)") == pytest.approx(119)


def test_list_literal_uses_semicolons(de):
    assert de.evaluate("{1; 2; 3} * 2") == [2, 4, 6]


def test_format_uses_decimal_comma(de):
    assert de.format(2.5) == "2,5"
    assert de.format(1234567.5, thousands=True) == "1.234.567,5"


def test_default_locale_uses_commas():
    calc = Calculator()
    assert calc.evaluate("ROUND(2.567, 2)") == 2.57
    with pytest.raises(ParseError):
        calc.evaluate("SUM(1; 2)")
