"""Allocation of customer orders to warehouses.

Strategy, in order of preference:

1. Ship the whole order from one warehouse (one parcel).  Among the
   warehouses that can, pick the one with the best priority, preferring
   warehouses in the customer's region.
2. Otherwise split: walk the lines and take what each warehouse can give,
   in the same preference order, until every line is covered.

Allocation only *plans*; the service turns the plan into reservations.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from .errors import AllocationError
from .models import Order, Warehouse
from .stock import StockLedger

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Allocation:
    sku: str
    warehouse: str
    quantity: int


@dataclass
class AllocationPlan:
    order_id: str
    allocations: list[Allocation]

    @property
    def warehouses(self) -> list[str]:
        return sorted({a.warehouse for a in self.allocations})

    @property
    def is_split(self) -> bool:
        return len(self.warehouses) > 1

    def quantity(self, sku: str, warehouse: str | None = None) -> int:
        return sum(
            a.quantity for a in self.allocations
            if a.sku == sku and (warehouse is None or a.warehouse == warehouse)
        )


def _preference(order: Order, warehouses: list[Warehouse]) -> list[Warehouse]:
    """Active warehouses, same-region first, then by priority and code."""
    active = [w for w in warehouses if w.active]
    return sorted(active, key=lambda w: (w.region != order.region, w.priority, w.code))


def _can_ship_whole(order: Order, ledger: StockLedger, warehouse: Warehouse) -> bool:
    for line in order.lines:
        if ledger.on_hand(line.sku, warehouse.code) < order.quantity_of(line.sku):
            return False
    return True


def allocate(order: Order, ledger: StockLedger, warehouses: list[Warehouse]) -> AllocationPlan:
    """Plan where each unit of ``order`` ships from, or raise AllocationError."""
    candidates = _preference(order, warehouses)
    if not candidates:
        raise AllocationError(f"order {order.order_id}: no active warehouses")

    for wh in candidates:
        if _can_ship_whole(order, ledger, wh):
            log.debug("order %s: %s can ship the whole order", order.order_id, wh.code)
            merged: dict[str, int] = {}
            for line in order.lines:
                merged[line.sku] = merged.get(line.sku, 0) + line.quantity
            return AllocationPlan(
                order.order_id, [Allocation(sku, wh.code, qty) for sku, qty in merged.items()]
            )
        log.debug("order %s: %s cannot ship the whole order", order.order_id, wh.code)

    allocations: list[Allocation] = []
    promised: dict[tuple[str, str], int] = {}
    for line in order.lines:
        remaining = line.quantity
        for wh in candidates:
            free = ledger.available(line.sku, wh.code) - promised.get((line.sku, wh.code), 0)
            if free <= 0:
                continue
            take = min(free, remaining)
            allocations.append(Allocation(line.sku, wh.code, take))
            promised[(line.sku, wh.code)] = promised.get((line.sku, wh.code), 0) + take
            remaining -= take
            log.debug("order %s: %d x %s from %s (%d still open)",
                      order.order_id, take, line.sku, wh.code, remaining)
            if remaining == 0:
                break
        if remaining:
            raise AllocationError(
                f"order {order.order_id}: short {remaining} x {line.sku} across all warehouses"
            )
    return AllocationPlan(order.order_id, allocations)
