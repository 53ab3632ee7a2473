"""CSV import and export.

Product files come in two layouts: the current one (comma-separated, English
headers) and the v1 export of the old ERP (semicolon-separated, German
headers, see :mod:`inventory.legacy`).  Both are read by
:func:`import_products`.  Numbers go through the lenient legacy parsers
because supplier files mix US and European notation.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Iterable, TextIO

from . import legacy
from .errors import ImportFormatError
from .models import Catalog, Product
from .money import round_money
from .stock import StockLedger

PRODUCT_COLUMNS = ["sku", "name", "category", "unit_cost", "price", "units_per_case",
                   "lead_time_days", "safety_stock"]
REQUIRED_PRODUCT_COLUMNS = {"sku", "name", "price"}


def _sniff_delimiter(first_line: str) -> str:
    return ";" if first_line.count(";") > first_line.count(",") else ","


def _reader(source: TextIO | str) -> tuple[list[str], Iterable[tuple[int, list[str]]], str]:
    text = source if isinstance(source, str) else source.read()
    lines = text.splitlines()
    if not lines or not lines[0].strip():
        raise ImportFormatError("file is empty", line=1)
    delimiter = _sniff_delimiter(lines[0])
    rows = csv.reader(io.StringIO(text), delimiter=delimiter)
    header = next(rows)
    numbered = ((n, row) for n, row in enumerate(rows, start=2) if any(c.strip() for c in row))
    return header, numbered, delimiter


def import_products(source: TextIO | str, catalog: Catalog | None = None) -> list[Product]:
    """Read products from CSV text or a file object; add them to ``catalog`` if given.

    Raises :class:`ImportFormatError` with the line number on the first bad row.
    """
    header, rows, _ = _reader(source)
    fmt = legacy.detect_format(header)
    columns = legacy.translate_header(header) if fmt == "v1" else [h.strip().lower() for h in header]
    missing = REQUIRED_PRODUCT_COLUMNS - set(columns)
    if missing:
        raise ImportFormatError(f"missing column(s): {', '.join(sorted(missing))}", line=1)

    products: list[Product] = []
    seen: set[str] = set()
    for line_no, row in rows:
        record = dict(zip(columns, (c.strip() for c in row)))
        try:
            sku = legacy.normalize_sku(record["sku"]) if fmt == "v1" else record["sku"]
            if sku.upper() in seen:
                raise ValueError(f"duplicate SKU {sku}")
            product = Product(
                sku=sku,
                name=record["name"],
                category=record.get("category") or "general",
                unit_cost=round_money(legacy.parse_price(record.get("unit_cost") or "0")),
                price=round_money(legacy.parse_price(record["price"])),
                units_per_case=legacy.parse_int(record.get("units_per_case", ""), default=1),
                lead_time_days=legacy.parse_int(record.get("lead_time_days", ""), default=7),
                safety_stock=legacy.parse_int(record.get("safety_stock", ""), default=0),
            )
        except (ValueError, KeyError) as exc:
            raise ImportFormatError(str(exc), line=line_no) from exc
        seen.add(product.sku)
        products.append(product)

    if catalog is not None:
        for product in products:
            catalog.add_product(product)
    return products


def export_products(products: Iterable[Product]) -> str:
    """Write products in the current layout."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(PRODUCT_COLUMNS)
    for p in products:
        writer.writerow([p.sku, p.name, p.category, f"{p.unit_cost:.2f}", f"{p.price:.2f}",
                         p.units_per_case, p.lead_time_days, p.safety_stock])
    return out.getvalue()


@dataclass(frozen=True)
class ReceiptLine:
    sku: str
    warehouse: str
    quantity: int
    uom: str
    bin_code: str | None
    reference: str


def read_receipts(source: TextIO | str) -> list[ReceiptLine]:
    """Parse a goods-receipt file: ``sku,warehouse,quantity[,uom][,bin][,reference]``."""
    header, rows, _ = _reader(source)
    columns = [h.strip().lower() for h in header]
    for needed in ("sku", "warehouse", "quantity"):
        if needed not in columns:
            raise ImportFormatError(f"missing column: {needed}", line=1)
    receipts = []
    for line_no, row in rows:
        record = dict(zip(columns, (c.strip() for c in row)))
        try:
            qty = legacy.parse_int(record["quantity"])
            if qty <= 0:
                raise ValueError(f"quantity must be positive, got {qty}")
        except ValueError as exc:
            raise ImportFormatError(str(exc), line=line_no) from exc
        receipts.append(ReceiptLine(record["sku"].upper(), record["warehouse"].upper(), qty,
                                    record.get("uom") or "EA", record.get("bin") or None,
                                    record.get("reference", "")))
    return receipts


def export_stock(ledger: StockLedger, catalog: Catalog) -> str:
    """One row per (sku, warehouse, bin) with on-hand and the warehouse's available."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["sku", "name", "warehouse", "bin", "on_hand", "available"])
    for (sku, wh, bin_code), qty in sorted(ledger.balances().items()):
        writer.writerow([sku, catalog.product(sku).name, wh, bin_code, qty,
                         ledger.available(sku, wh)])
    return out.getvalue()
