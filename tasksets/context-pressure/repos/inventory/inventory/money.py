"""Money helpers.

All monetary amounts in the package are :class:`decimal.Decimal`. Finance
requires *half-up* rounding to whole cents everywhere an amount is shown or
stored (``2.025`` becomes ``2.03``), which is not what Python's built-in
``round`` does for decimals (it rounds half to even).
"""

from __future__ import annotations

import re
from decimal import ROUND_DOWN, ROUND_HALF_UP, Decimal, InvalidOperation

CENT = Decimal("0.01")
ZERO = Decimal("0")

_STRICT_PRICE = re.compile(r"^-?\$?(\d{1,3}(,\d{3})*|\d+)(\.\d+)?$")


def to_decimal(value: object) -> Decimal:
    """Convert ints, strings and decimals to Decimal; floats go through ``str``."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, float):
        return Decimal(str(value))
    try:
        return Decimal(value)  # type: ignore[arg-type]
    except (InvalidOperation, TypeError) as exc:
        raise ValueError(f"not a monetary amount: {value!r}") from exc


def round_money(amount: object) -> Decimal:
    """Round to cents, half away from zero (``2.025 -> 2.03``)."""
    return to_decimal(amount).quantize(CENT, rounding=ROUND_HALF_UP)


def parse_price(text: str) -> Decimal:
    """Parse a price typed into the API or the admin UI.

    Strict US notation only: an optional ``$``, optional comma thousands
    separators and a dot as decimal separator (``"$1,299.95"``).  Anything
    else raises :class:`ValueError`.
    """
    cleaned = text.strip()
    if not cleaned or not _STRICT_PRICE.match(cleaned):
        raise ValueError(f"invalid price: {text!r}")
    return round_money(cleaned.replace("$", "").replace(",", ""))


def format_money(amount: object, currency: str = "USD") -> str:
    """Render an amount for reports, e.g. ``"1,299.50 USD"``."""
    value = round_money(amount)
    return f"{value:,.2f} {currency}"


def allocate_proportionally(total: Decimal, weights: list[Decimal]) -> list[Decimal]:
    """Split ``total`` across ``weights`` in cents so that the parts add up exactly.

    Used to spread an order-level discount over its lines. The rounding
    remainder goes to the parts with the largest weights first.
    """
    if not weights:
        return []
    weight_sum = sum(weights, ZERO)
    if weight_sum == 0:
        return [ZERO for _ in weights]
    total = round_money(total)
    raw = [total * w / weight_sum for w in weights]
    parts = [r.quantize(CENT, rounding=ROUND_DOWN) for r in raw]
    remainder = int((total - sum(parts, ZERO)) / CENT)
    order = sorted(range(len(weights)), key=lambda i: weights[i], reverse=True)
    for i in order[:remainder]:
        parts[i] += CENT
    return parts
