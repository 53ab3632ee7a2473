"""Order pricing: list prices, volume breaks, discount codes and tax.

Per line the order of operations is

1. unit price (list price, reduced by the best volume break reached),
2. percentage discount from the order's discount code, if it applies,
3. the order-level fixed amount off, spread over the lines pro rata,
4. tax on what is left, at the line's rate.

Every amount on a :class:`QuoteLine` is rounded to cents.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from .errors import InventoryError
from .models import Catalog, Order, Product
from .money import ZERO, allocate_proportionally, round_money, to_decimal
from .tax import TaxTable

HUNDRED = Decimal("100")


@dataclass(frozen=True)
class DiscountCode:
    """A promotion. ``percent`` is 0-100; ``amount_off`` is taken off the order."""

    code: str
    percent: Decimal = ZERO
    amount_off: Decimal = ZERO
    min_subtotal: Decimal = ZERO
    categories: frozenset[str] = field(default_factory=frozenset)

    def applies_to(self, product: Product) -> bool:
        return not self.categories or product.category in self.categories


@dataclass
class QuoteLine:
    sku: str
    quantity: int
    unit_price: Decimal
    gross: Decimal
    discount: Decimal
    net: Decimal
    tax_rate: Decimal
    tax: Decimal

    @property
    def total(self) -> Decimal:
        return self.net + self.tax


@dataclass
class Quote:
    order_id: str
    lines: list[QuoteLine]
    discount_code: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def subtotal(self) -> Decimal:
        return sum((l.gross for l in self.lines), ZERO)

    @property
    def discount_total(self) -> Decimal:
        return sum((l.discount for l in self.lines), ZERO)

    @property
    def tax_total(self) -> Decimal:
        return sum((l.tax for l in self.lines), ZERO)

    @property
    def total(self) -> Decimal:
        return sum((l.total for l in self.lines), ZERO)


class PriceBook:
    # quantity threshold -> percent off the list price
    DEFAULT_BREAKS = {10: Decimal("5"), 50: Decimal("10")}

    def __init__(self, catalog: Catalog, taxes: TaxTable,
                 volume_breaks: dict[int, Decimal] | None = None) -> None:
        self.catalog = catalog
        self.taxes = taxes
        self.volume_breaks = dict(self.DEFAULT_BREAKS if volume_breaks is None else volume_breaks)
        self._codes: dict[str, DiscountCode] = {}

    def add_discount(self, code: DiscountCode) -> None:
        self._codes[code.code.upper()] = code

    def discount(self, code: str) -> DiscountCode:
        try:
            return self._codes[code.upper()]
        except KeyError:
            raise InventoryError(f"unknown discount code {code!r}") from None

    def unit_price(self, product: Product, quantity: int) -> Decimal:
        """List price less the largest volume break the quantity reaches."""
        percent = ZERO
        for threshold, off in sorted(self.volume_breaks.items()):
            if quantity >= threshold:
                percent = off
        return round_money(product.price * (HUNDRED - percent) / HUNDRED)

    def quote(self, order: Order) -> Quote:
        code = self.discount(order.discount_code) if order.discount_code else None
        quote = Quote(order.order_id, [], code.code if code else None)

        products = [self.catalog.product(line.sku) for line in order.lines]
        for product, line in zip(products, order.lines):
            unit = self.unit_price(product, line.quantity)
            gross = unit * line.quantity
            discount = ZERO
            if code is not None and code.percent and code.applies_to(product):
                discount = round(gross * to_decimal(code.percent) / HUNDRED, 2)
            quote.lines.append(QuoteLine(product.sku, line.quantity, unit, gross, discount,
                                         gross - discount, ZERO, ZERO))

        if code is not None and code.min_subtotal and quote.subtotal < code.min_subtotal:
            quote.warnings.append(
                f"discount {code.code} needs a subtotal of {code.min_subtotal}; not applied"
            )
            for ql in quote.lines:
                ql.discount, ql.net = ZERO, ql.gross
        elif code is not None and code.amount_off:
            nets = [ql.net for ql in quote.lines]
            off = min(to_decimal(code.amount_off), sum(nets, ZERO))
            for ql, share in zip(quote.lines, allocate_proportionally(off, nets)):
                ql.discount += share
                ql.net -= share

        for product, ql in zip(products, quote.lines):
            ql.tax_rate = self.taxes.rate_for(order.region, product.category)
            ql.tax = round_money(ql.net * ql.tax_rate)
        return quote
