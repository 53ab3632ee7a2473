from decimal import Decimal

import pytest

from inventory.tax import TaxRule, TaxTable, standard_us_table


def test_state_rule_beats_country_rule():
    table = TaxTable([TaxRule("US", Decimal("0.05"), "US"),
                      TaxRule("California", Decimal("0.0725"), "US-CA")])
    assert table.rate_for("US-CA", "tools") == Decimal("0.0725")
    assert table.rate_for("us-nv", "tools") == Decimal("0.05")


def test_region_prefix_must_end_at_a_dash():
    rule = TaxRule("US", Decimal("0.05"), "US")
    assert rule.matches("US-CA", "tools")
    assert rule.matches("US", "tools")
    assert not rule.matches("USVI", "tools")


def test_unmatched_sale_uses_default_rate():
    table = TaxTable([TaxRule("California", Decimal("0.0725"), "US-CA")], default_rate="0.06")
    assert table.rate_for("US-WA", "tools") == Decimal("0.06")
    assert table.rule_for("US-WA", "tools") is None


def test_category_only_rule():
    table = TaxTable([TaxRule("books exempt", Decimal("0"), None, "books")], default_rate="0.06")
    assert table.rate_for("US-WA", "books") == Decimal("0")
    assert table.rate_for("US-WA", "tools") == Decimal("0.06")


def test_category_rule_does_not_leak_to_other_categories():
    table = TaxTable([TaxRule("TX groceries", Decimal("0"), "US-TX", "grocery")], default_rate="0.0625")
    assert table.rate_for("US-TX", "hardware") == Decimal("0.0625")


def test_rate_must_be_a_fraction():
    with pytest.raises(ValueError):
        TaxRule("oops", Decimal("7.25"), "US-CA")


def test_tax_on_amount():
    table = TaxTable([TaxRule("California", Decimal("0.0725"), "US-CA")])
    assert table.tax_on(Decimal("100"), "US-CA", "tools") == Decimal("7.25")


def test_standard_table_basics():
    table = standard_us_table()
    assert table.rate_for("US-CA", "tools") == Decimal("0.0725")
    assert table.rate_for("US-OR", "tools") == Decimal("0")
    assert table.rate_for("US-TX", "tools") == Decimal("0.0625")
    assert table.rate_for("US-MT", "tools") == Decimal("0")
