"""Read-only reports over the ledger and the audit log."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Iterable

from .models import Catalog, Movement, MovementKind
from .money import ZERO, format_money, round_money
from .stock import StockLedger

INBOUND = {MovementKind.RECEIVE, MovementKind.TRANSFER_IN}
OUTBOUND = {MovementKind.PICK, MovementKind.TRANSFER_OUT}


@dataclass
class MovementSummary:
    sku: str
    inbound: int = 0
    outbound: int = 0
    adjusted: int = 0

    @property
    def net(self) -> int:
        return self.inbound - self.outbound + self.adjusted


def movement_summary(movements: Iterable[Movement], *, start: datetime | None = None,
                     end: datetime | None = None,
                     warehouse: str | None = None) -> dict[str, MovementSummary]:
    """Inbound / outbound / adjusted units per SKU, optionally within ``[start, end)``."""
    summary: dict[str, MovementSummary] = {}
    for m in movements:
        if start is not None and m.timestamp < start:
            continue
        if end is not None and m.timestamp >= end:
            continue
        if warehouse is not None and m.warehouse != warehouse.upper():
            continue
        row = summary.setdefault(m.sku, MovementSummary(m.sku))
        if m.kind in INBOUND:
            row.inbound += m.quantity
        elif m.kind in OUTBOUND:
            row.outbound += m.quantity
        elif m.kind is MovementKind.ADJUST:
            row.adjusted += m.quantity
    return dict(sorted(summary.items()))


@dataclass
class ValuationLine:
    sku: str
    on_hand: int
    unit_cost: Decimal
    value: Decimal


def inventory_valuation(ledger: StockLedger, catalog: Catalog,
                        warehouse: str | None = None) -> tuple[list[ValuationLine], Decimal]:
    """Stock value at unit cost, per SKU and in total (each line rounded to cents)."""
    lines = []
    for product in catalog.products():
        qty = ledger.on_hand(product.sku, warehouse)
        if qty == 0:
            continue
        value = round(qty * product.unit_cost, 2)
        lines.append(ValuationLine(product.sku, qty, product.unit_cost, value))
    total = sum((line.value for line in lines), ZERO)
    return lines, total


def average_daily_usage(movements: Iterable[Movement], sku: str, *, days: int,
                        as_of: date) -> Decimal:
    """Units shipped per day over the last ``days`` days up to ``as_of``."""
    sku = sku.upper()
    start = as_of - timedelta(days=days - 1)
    shipped = sum(
        m.quantity for m in movements
        if m.kind is MovementKind.PICK and m.sku == sku and start <= m.timestamp.date() <= as_of
    )
    return Decimal(shipped) / days


def days_of_cover(ledger: StockLedger, catalog: Catalog, *, as_of: date,
                  days: int = 28) -> dict[str, Decimal | None]:
    """How many days current stock lasts at recent usage; None when nothing ships."""
    movements = ledger.audit.movements()
    cover: dict[str, Decimal | None] = {}
    for product in catalog.products():
        usage = average_daily_usage(movements, product.sku, days=days, as_of=as_of)
        on_hand = ledger.on_hand(product.sku)
        cover[product.sku] = None if usage == 0 else (Decimal(on_hand) / usage).quantize(Decimal("0.1"))
    return cover


def low_stock(ledger: StockLedger, catalog: Catalog) -> list[tuple[str, str, int, int]]:
    """(sku, warehouse, available, safety_stock) where available is below safety stock."""
    rows = []
    for wh in catalog.warehouses(active_only=True):
        for product in catalog.products():
            free = ledger.available(product.sku, wh.code)
            if free < product.safety_stock:
                rows.append((product.sku, wh.code, free, product.safety_stock))
    return rows


def daily_activity(movements: Iterable[Movement]) -> dict[date, dict[str, int]]:
    """Count of movements per UTC day and kind, for the activity chart."""
    days: dict[date, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for m in movements:
        days[m.timestamp.date()][m.kind.value] += 1
    return {d: dict(kinds) for d, kinds in sorted(days.items())}


def render_valuation(lines: list[ValuationLine], total: Decimal) -> str:
    """Plain-text valuation table for the CLI."""
    width = max([len(line.sku) for line in lines] + [3])
    out = [f"{'SKU':<{width}}  {'ON HAND':>8}  {'UNIT COST':>12}  {'VALUE':>16}"]
    for line in lines:
        out.append(f"{line.sku:<{width}}  {line.on_hand:>8}  {line.unit_cost:>12}  "
                   f"{format_money(line.value):>16}")
    out.append(f"{'TOTAL':<{width}}  {'':>8}  {'':>12}  {format_money(total):>16}")
    return "\n".join(out)
