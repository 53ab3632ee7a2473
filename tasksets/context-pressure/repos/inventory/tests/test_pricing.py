from decimal import Decimal

import pytest

from inventory import InventoryError, Order, OrderLine, Product
from inventory.pricing import DiscountCode, PriceBook
from inventory.tax import standard_us_table


@pytest.fixture
def book(catalog):
    return PriceBook(catalog, standard_us_table())


def test_volume_breaks(book, catalog):
    bolt = catalog.product("BOLT-M6")
    assert book.unit_price(bolt, 9) == Decimal("0.25")
    assert book.unit_price(bolt, 10) == Decimal("0.24")   # 5 % off, rounded
    assert book.unit_price(bolt, 50) == Decimal("0.23")   # 10 % off, rounded


def test_quote_with_tax(book):
    q = book.quote(Order("Q-1", [OrderLine("DRILL-18V", 2)], region="US-CA"))
    line = q.lines[0]
    assert line.gross == Decimal("238.00")
    assert line.tax == Decimal("17.26")
    assert q.total == Decimal("255.26")


def test_percent_code_only_for_its_categories(book):
    book.add_discount(DiscountCode("TOOLS10", percent=Decimal("10"), categories=frozenset({"tools"})))
    q = book.quote(Order("Q-1", [OrderLine("DRILL-18V", 1), OrderLine("NUT-M6", 5)],
                         region="US-OR", discount_code="tools10"))
    assert [l.discount for l in q.lines] == [Decimal("11.90"), Decimal("0")]
    assert q.total == Decimal("107.60")


def test_amount_off_is_spread_before_tax(book):
    book.add_discount(DiscountCode("FIVER", amount_off=Decimal("5")))
    q = book.quote(Order("Q-1", [OrderLine("DRILL-18V", 1), OrderLine("GLOVE-L", 2)],
                         region="US-CA", discount_code="FIVER"))
    assert q.discount_total == Decimal("5.00")
    assert q.subtotal - q.discount_total == Decimal("127.00")
    assert q.tax_total == sum(l.tax for l in q.lines)
    assert q.lines[0].discount == Decimal("4.51")


def test_min_subtotal_not_reached(book):
    book.add_discount(DiscountCode("BIG", percent=Decimal("20"), min_subtotal=Decimal("500")))
    q = book.quote(Order("Q-1", [OrderLine("DRILL-18V", 1)], region="US-OR", discount_code="BIG"))
    assert q.discount_total == 0
    assert q.warnings and "BIG" in q.warnings[0]


def test_unknown_discount_code(book):
    with pytest.raises(InventoryError):
        book.quote(Order("Q-1", [OrderLine("NUT-M6", 1)], discount_code="NOPE"))


def test_percent_discount_rounds_half_cent_up(book, catalog):
    catalog.add_product(Product("LEVEL-60", "Spirit level 60cm", "tools", Decimal("1.90"),
                                Decimal("4.05")))
    book.add_discount(DiscountCode("HALF", percent=Decimal("50")))
    q = book.quote(Order("Q-1", [OrderLine("LEVEL-60", 1)], region="US-OR", discount_code="HALF"))
    assert q.lines[0].discount == Decimal("2.03")
    assert q.lines[0].net == Decimal("2.02")
