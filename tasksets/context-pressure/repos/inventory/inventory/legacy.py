"""Compatibility helpers for files produced by the old ERP (v1).

The v1 system exported semicolon-separated files with German-style column
names and free-form number formats.  Supplier price lists still arrive in a
mix of US and European notation, so :mod:`inventory.csv_io` uses the
lenient parsers in here for every import, not only for v1 files.

New code should use :mod:`inventory.money` and :mod:`inventory.tax`.
"""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

# v1 column name -> current column name
LEGACY_COLUMNS = {
    "artikelnr": "sku",
    "bezeichnung": "name",
    "warengruppe": "category",
    "ek_preis": "unit_cost",
    "vk_preis": "price",
    "ve": "units_per_case",
    "wbz_tage": "lead_time_days",
    "steuerklasse": "tax_class",
}

# v1 tax classes, kept so old files can still be checked against the new rules.
LEGACY_TAX_CLASSES = {
    "1": Decimal("0.19"),   # standard
    "2": Decimal("0.07"),   # reduced (food, books)
    "0": Decimal("0"),      # exempt
}

_CURRENCY_MARKS = "$€£"


def detect_format(header: list[str]) -> str:
    """Return ``"v1"`` when a header uses the old ERP column names, else ``"v2"``."""
    names = {h.strip().lower() for h in header}
    return "v1" if "artikelnr" in names else "v2"


def translate_header(header: list[str]) -> list[str]:
    """Rename v1 columns; unknown columns pass through lower-cased."""
    return [LEGACY_COLUMNS.get(h.strip().lower(), h.strip().lower()) for h in header]


def normalize_sku(raw: str) -> str:
    """v1 article numbers were zero-padded to eight digits and sometimes
    prefixed with ``ART-``; current SKUs drop both."""
    sku = raw.strip().upper()
    if sku.startswith("ART-"):
        sku = sku[4:]
    if sku.isdigit():
        sku = sku.lstrip("0") or "0"
    return sku


def parse_price(text: str) -> Decimal:
    """Parse a price in US or European notation.

    Accepted: ``"12.50"``, ``"12,50"``, ``"1,299.00"``, ``"1.299,00"``,
    ``"1,299"`` (thousands), ``"€ 4,95"``.  With only one kind of separator,
    a comma followed by exactly three digits is a thousands separator;
    otherwise a comma is the decimal mark.
    """
    s = text.strip()
    for mark in _CURRENCY_MARKS:
        s = s.replace(mark, "")
    s = s.replace(" ", "").replace("\u00a0", "")
    if not s:
        raise ValueError(f"empty price: {text!r}")

    if "," in s and "." in s:
        if s.rfind(",") > s.rfind("."):      # 1.299,00
            s = s.replace(".", "").replace(",", ".")
        else:                                # 1,299.00
            s = s.replace(",", "")
    elif "," in s:
        _, _, tail = s.rpartition(",")
        if len(tail) <= 3:
            s = s.replace(",", ".")          # 12,50
        else:
            s = s.replace(",", "")           # 1,299
    try:
        return Decimal(s)
    except InvalidOperation:
        raise ValueError(f"invalid price: {text!r}") from None


def parse_int(text: str, default: int | None = None) -> int:
    """Integers as v1 wrote them: ``"12"``, ``"12,0"``, ``" 12 "``; blank -> default."""
    s = text.strip()
    if not s:
        if default is None:
            raise ValueError("missing integer")
        return default
    if "," in s:
        whole, _, frac = s.partition(",")
        if frac.strip("0"):
            raise ValueError(f"not a whole number: {text!r}")
        s = whole
    return int(s)


def parse_bool(text: str) -> bool:
    value = text.strip().lower()
    if value in {"1", "j", "ja", "y", "yes", "true", "x"}:
        return True
    if value in {"", "0", "n", "nein", "no", "false"}:
        return False
    raise ValueError(f"not a yes/no value: {text!r}")


def tax_rate_for(tax_class: str) -> Decimal:
    """Rate of a v1 tax class (``"1"`` standard, ``"2"`` reduced, ``"0"`` exempt)."""
    try:
        return LEGACY_TAX_CLASSES[tax_class.strip()]
    except KeyError:
        raise ValueError(f"unknown v1 tax class {tax_class!r}") from None
