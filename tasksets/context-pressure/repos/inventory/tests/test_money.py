from decimal import Decimal

import pytest

from inventory.money import allocate_proportionally, format_money, parse_price, round_money


def test_round_money_is_half_up():
    assert round_money(Decimal("2.025")) == Decimal("2.03")
    assert round_money(Decimal("2.015")) == Decimal("2.02")
    assert round_money(Decimal("-2.025")) == Decimal("-2.03")


def test_round_money_accepts_floats_via_str():
    assert round_money(0.1 + 0.2) == Decimal("0.30")


@pytest.mark.parametrize(
    "text, expected",
    [("12", "12.00"), ("12.5", "12.50"), ("$1,299.95", "1299.95"), ("1299.95", "1299.95"),
     ("-3.10", "-3.10")],
)
def test_parse_price_us_notation(text, expected):
    assert parse_price(text) == Decimal(expected)


@pytest.mark.parametrize("text", ["", "12,50", "1.299,00", "1,29", "abc", "$"])
def test_parse_price_rejects_other_notation(text):
    with pytest.raises(ValueError):
        parse_price(text)


def test_format_money():
    assert format_money(Decimal("1299.5")) == "1,299.50 USD"
    assert format_money(3, "EUR") == "3.00 EUR"


def test_allocate_proportionally_adds_up():
    parts = allocate_proportionally(Decimal("10.00"), [Decimal("1"), Decimal("1"), Decimal("1")])
    assert sum(parts) == Decimal("10.00")
    assert sorted(parts) == [Decimal("3.33"), Decimal("3.33"), Decimal("3.34")]


def test_allocate_proportionally_zero_weights():
    assert allocate_proportionally(Decimal("5"), [Decimal("0"), Decimal("0")]) == [0, 0]
    assert allocate_proportionally(Decimal("5"), []) == []
