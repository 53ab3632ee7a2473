"""Units of measure.

Stock is always kept in eaches (``EA``).  Suppliers ship in cases (``CS``)
whose size is ``Product.units_per_case``; some customers buy inner packs
(``PK``) of a fixed size per product family.
"""

from __future__ import annotations

import math

from .models import Product

EACH = "EA"
CASE = "CS"
PACK = "PK"

PACK_SIZE = 6
"""Inner-pack size; the same for every SKU in the current catalog."""

_ALIASES = {
    "EA": EACH, "EACH": EACH, "PC": EACH, "PCS": EACH, "UNIT": EACH,
    "CS": CASE, "CASE": CASE, "CTN": CASE, "CARTON": CASE,
    "PK": PACK, "PACK": PACK,
}


def normalize_uom(uom: str | None) -> str:
    """Map the many spellings found in supplier files onto EA / CS / PK."""
    if uom is None or not uom.strip():
        return EACH
    try:
        return _ALIASES[uom.strip().upper()]
    except KeyError:
        raise ValueError(f"unknown unit of measure {uom!r}") from None


def to_eaches(quantity: int, uom: str | None, product: Product) -> int:
    """Convert a quantity expressed in ``uom`` into eaches."""
    unit = normalize_uom(uom)
    if unit == CASE:
        return quantity * product.units_per_case
    if unit == PACK:
        return quantity * PACK_SIZE
    return quantity


def cases_needed(eaches: int, product: Product) -> int:
    """Whole cases needed to cover ``eaches`` (never negative)."""
    if eaches <= 0:
        return 0
    return math.ceil(eaches / product.units_per_case)
