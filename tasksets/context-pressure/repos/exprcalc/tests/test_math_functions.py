import math

import pytest

from exprcalc import Calculator
from exprcalc.errors import ArgumentError, DivisionByZero, NumError

# (formula, expected) - spreadsheet rounding: halves go away from zero and the
# decimal value as written decides, not its binary approximation.
ROUNDING_CASES = [
    ("round_2_5", "ROUND(2.5)", 3),
    ("round_3_5", "ROUND(3.5)", 4),
    ("round_neg_2_5", "ROUND(-2.5)", -3),
    ("round_0_5", "ROUND(0.5)", 1),
    ("round_1_5", "ROUND(1.5)", 2),
    ("round_4_5", "ROUND(4.5)", 5),
    ("round_10_5", "ROUND(10.5)", 11),
    ("round_99_5", "ROUND(99.5)", 100),
    ("round_neg_3_5", "ROUND(-3.5)", -4),
    ("round_2_675", "ROUND(2.675, 2)", 2.68),
    ("round_1_005", "ROUND(1.005, 2)", 1.01),
    ("round_neg_1_005", "ROUND(-1.005, 2)", -1.01),
    ("round_0_125", "ROUND(0.125, 2)", 0.13),
    ("round_0_375", "ROUND(0.375, 2)", 0.38),
    ("round_0_285", "ROUND(0.285, 2)", 0.29),
    ("round_8_325", "ROUND(8.325, 2)", 8.33),
    ("round_5_55", "ROUND(5.55, 1)", 5.6),
    ("round_1_45", "ROUND(1.45, 1)", 1.5),
    ("round_12_345", "ROUND(12.345, 1)", 12.3),
    ("round_1234_5678", "ROUND(1234.5678, 2)", 1234.57),
    ("round_1250_tens", "ROUND(1250, -2)", 1300),
    ("round_neg_1250_tens", "ROUND(-1250, -2)", -1300),
    ("round_150_tens", "ROUND(150, -2)", 200),
    ("round_250_tens", "ROUND(250, -2)", 300),
    ("round_text_arg", 'ROUND("2.5")', 3),
    ("round_in_expression", "ROUND(10 / 4)", 3),
    ("round_price", "ROUND(19.995, 2)", 20),
    ("round_tax", "ROUND(0.615 * 100, 0)", 62),
]


@pytest.fixture(scope="module")
def rcalc():
    return Calculator()


@pytest.mark.parametrize(
    "formula, expected",
    [case[1:] for case in ROUNDING_CASES],
    ids=[case[0] for case in ROUNDING_CASES],
)
def test_round_table(rcalc, formula, expected):
    result = rcalc.evaluate(formula)
    assert result == expected, f"{formula} gave {result!r}, expected {expected!r}"


def test_round_returns_int_for_whole_results(ev):
    assert isinstance(ev("ROUND(3.7)"), int)


def test_roundup_and_rounddown(ev):
    assert ev("ROUNDUP(3.141, 2)") == 3.15
    assert ev("ROUNDUP(-3.141, 2)") == -3.15
    assert ev("ROUNDDOWN(3.149, 2)") == 3.14
    assert ev("ROUNDDOWN(-3.149, 2)") == -3.14
    assert ev("ROUNDUP(1.1)") == 2


def test_mround(ev):
    assert ev("MROUND(10, 3)") == 9
    assert ev("MROUND(1.3, 0.2)") == 1.4
    with pytest.raises(NumError):
        ev("MROUND(5, -2)")


def test_ceiling_and_floor(ev):
    assert ev("CEILING(4.42, 0.05)") == 4.45
    assert ev("FLOOR(4.42, 0.05)") == 4.4
    assert ev("CEILING(-2.5, 2)") == -2
    with pytest.raises(DivisionByZero):
        ev("FLOOR(3, 0)")


def test_int_and_trunc(ev):
    assert ev("INT(-3.7)") == -4
    assert ev("TRUNC(-3.7)") == -3
    assert ev("TRUNC(3.14159, 3)") == 3.141


def test_mod_has_sign_of_divisor(ev):
    assert ev("MOD(7, 3)") == 1
    assert ev("MOD(-7, 3)") == 2
    assert ev("MOD(7, -3)") == -2
    with pytest.raises(DivisionByZero):
        ev("MOD(1, 0)")


def test_quotient(ev):
    assert ev("QUOTIENT(-7, 2)") == -3


def test_sqrt_and_power(ev):
    assert ev("SQRT(16)") == 4
    assert ev("POWER(2, 10)") == 1024
    with pytest.raises(NumError):
        ev("SQRT(-1)")


def test_logs(ev):
    assert ev("LOG(1000)") == 3
    assert ev("LOG(8, 2)") == 3
    assert ev("LN(EXP(2))") == pytest.approx(2)
    with pytest.raises(NumError):
        ev("LN(0)")


def test_trig_radians(ev):
    assert ev("SIN(PI() / 2)") == pytest.approx(1)
    assert ev("COS(0)") == 1


def test_trig_degrees():
    calc = Calculator(angle_mode="degrees")
    assert calc.evaluate("SIN(30)") == pytest.approx(0.5)
    assert calc.evaluate("DEGREES(PI())") == pytest.approx(180)
    assert calc.evaluate("ATAN2(1, 1)") == pytest.approx(45)


def test_even_odd(ev):
    assert ev("EVEN(1.5)") == 2
    assert ev("EVEN(-1)") == -2
    assert ev("ODD(2)") == 3
    assert ev("ODD(-2)") == -3


def test_fact_combin_permut(ev):
    assert ev("FACT(5)") == 120
    assert ev("COMBIN(5, 2)") == 10
    assert ev("PERMUT(5, 2)") == 20
    with pytest.raises(NumError):
        ev("FACT(-1)")


def test_gcd_lcm(ev):
    assert ev("GCD(24, 36, {60})") == 12
    assert ev("LCM(4, 6)") == 12


def test_roman_and_arabic(ev):
    assert ev("ROMAN(1994)") == "MCMXCIV"
    assert ev('ARABIC("MCMXCIV")') == 1994


def test_base_and_decimal(ev):
    assert ev("BASE(255, 16)") == "FF"
    assert ev("BASE(5, 2, 8)") == "00000101"
    assert ev('DECIMAL("ff", 16)') == 255


def test_sumproduct(ev):
    assert ev("SUMPRODUCT({1, 2, 3}, {4, 5, 6})") == 32


def test_rand_is_seeded():
    a = Calculator(seed=7).evaluate("RANDBETWEEN(1, 1000)")
    b = Calculator(seed=7).evaluate("RANDBETWEEN(1, 1000)")
    assert a == b


def test_abs_sign(ev):
    assert ev("ABS(-4.5)") == 4.5
    assert ev("SIGN(-0.1)") == -1


def test_clamp_hypot(ev):
    assert ev("CLAMP(15, 1, 10)") == 10
    assert ev("HYPOT(3, 4)") == 5


def test_math_argument_type_error(ev):
    with pytest.raises(ArgumentError) as info:
        ev('SQRT("four")')
    assert "SQRT argument 1 expects a number" in info.value.message


def test_pi(ev):
    assert ev("PI()") == math.pi
