"""Reorder planning.

For each SKU and warehouse the planner estimates daily demand from recent
picks and compares the *inventory position* (available stock plus what is
already on order) with the reorder point::

    reorder point = ceil(daily demand * supplier lead time + safety stock)

When the position is at or below the reorder point, it suggests ordering
enough whole cases to cover the reorder point plus one review period.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Iterable, Mapping

from .models import Catalog, Movement, MovementKind, Product
from .stock import StockLedger
from .units import cases_needed

DEFAULT_WINDOW_DAYS = 28
REVIEW_PERIOD_DAYS = 7


def average_daily_demand(movements: Iterable[Movement], sku: str, *, as_of: date,
                         window_days: int = DEFAULT_WINDOW_DAYS,
                         warehouse: str | None = None) -> Decimal:
    """Mean units picked per calendar day over the ``window_days`` days ending
    on ``as_of`` (inclusive).  Days without picks count as zero demand."""
    if window_days <= 0:
        raise ValueError("window_days must be positive")
    sku = sku.upper()
    start = as_of - timedelta(days=window_days - 1)
    per_day: dict[date, int] = defaultdict(int)
    for m in movements:
        if m.kind is not MovementKind.PICK or m.sku != sku:
            continue
        if warehouse is not None and m.warehouse != warehouse.upper():
            continue
        day = m.timestamp.date()
        if start <= day <= as_of:
            per_day[day] += m.quantity
    if not per_day:
        return Decimal("0")
    return Decimal(sum(per_day.values())) / len(per_day)


def reorder_point(product: Product, daily_demand: Decimal) -> int:
    return math.ceil(daily_demand * product.lead_time_days + product.safety_stock)


@dataclass(frozen=True)
class ReorderSuggestion:
    sku: str
    warehouse: str
    position: int
    reorder_point: int
    daily_demand: Decimal
    cases: int
    units: int


def suggest_reorders(ledger: StockLedger, catalog: Catalog, *, as_of: date,
                     on_order: Mapping[tuple[str, str], int] | None = None,
                     window_days: int = DEFAULT_WINDOW_DAYS) -> list[ReorderSuggestion]:
    """Suggestions for every active product in every active warehouse that needs one."""
    on_order = on_order or {}
    movements = ledger.audit.movements()
    suggestions = []
    for wh in catalog.warehouses(active_only=True):
        for product in catalog.products():
            if not product.active:
                continue
            demand = average_daily_demand(movements, product.sku, as_of=as_of,
                                          window_days=window_days, warehouse=wh.code)
            point = reorder_point(product, demand)
            position = ledger.available(product.sku, wh.code) + on_order.get((product.sku, wh.code), 0)
            if point == 0 or position > point:
                continue
            target = point + math.ceil(demand * REVIEW_PERIOD_DAYS)
            cases = cases_needed(target - position, product)
            suggestions.append(ReorderSuggestion(product.sku, wh.code, position, point, demand,
                                                 cases, cases * product.units_per_case))
    return suggestions
