import pytest

from exprcalc import Calculator
from exprcalc.compat import V1_FUNCTIONS, registry_for
from exprcalc.functions import REGISTRY


@pytest.fixture
def v1():
    return Calculator(compat="v1")


def test_registry_overlay():
    merged = registry_for("v1")
    assert merged["ROUND"] is V1_FUNCTIONS["ROUND"]
    assert merged["SUM"] is REGISTRY["SUM"]
    assert registry_for(None) is REGISTRY
    with pytest.raises(ValueError):
        registry_for("v0")


def test_v1_round_quirks(v1):
    assert v1.evaluate("ROUND(-2.5)") == -2
    assert v1.evaluate("ROUND(1.25, 1)") == 1.3


def test_v1_find_returns_zero(v1):
    assert v1.evaluate('FIND("X", "abc")') == 0
    assert v1.evaluate('FIND("B", "abc")') == 2


def test_v1_average_counts_text_as_zero(v1):
    assert v1.evaluate('AVERAGE({4, "n/a", 8})') == 4


def test_v1_text_uses_python_specs(v1):
    assert v1.evaluate('TEXT(3.14159, ".2f")') == "3.14"


def test_v1_convert_and_concat(v1):
    assert v1.evaluate('CONVERT(1, "km", "m")') == 1000
    assert v1.evaluate('CONCAT("a", "b")') == "a b"
