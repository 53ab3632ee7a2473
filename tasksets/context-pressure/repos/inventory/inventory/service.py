"""Service facade used by the HTTP API and the CLI.

The service wires catalog, ledger, pricing and reports together and logs
every operation (INFO) plus the resulting stock position (DEBUG), which the
operations team relies on when reconstructing incidents.
"""

from __future__ import annotations

import logging
from datetime import date, datetime
from typing import Callable, Mapping

from . import csv_io, reorder, reports
from .allocation import AllocationPlan, allocate
from .audit import replay
from .errors import InventoryError, LedgerIntegrityError, ReservationError
from .models import Catalog, Movement, Order, Product, Warehouse, utcnow
from .pricing import PriceBook, Quote
from .stock import StockLedger
from .tax import TaxTable, standard_us_table

log = logging.getLogger("inventory.service")


class InventoryService:
    def __init__(self, catalog: Catalog | None = None, taxes: TaxTable | None = None,
                 clock: Callable[[], datetime] = utcnow) -> None:
        self.catalog = catalog or Catalog()
        self.ledger = StockLedger(self.catalog, clock=clock)
        self.prices = PriceBook(self.catalog, taxes or standard_us_table())
        self.orders: dict[str, Order] = {}
        self.plans: dict[str, AllocationPlan] = {}
        self.shipped: set[str] = set()
        self._clock = clock

    # ------------------------------------------------------------------ helpers
    def _log_position(self, sku: str) -> None:
        for wh in self.catalog.warehouses():
            on_hand = self.ledger.on_hand(sku, wh.code)
            if on_hand or self.ledger.reservations.reserved(sku, wh.code):
                log.debug("  position %s @ %s: on_hand=%d available=%d bins=%s", sku, wh.code,
                          on_hand, self.ledger.available(sku, wh.code),
                          self.ledger.bins_for(sku, wh.code))

    # ------------------------------------------------------------ master data
    def add_product(self, product: Product) -> Product:
        log.info("product %s registered (%s, case of %d)", product.sku, product.name,
                 product.units_per_case)
        return self.catalog.add_product(product)

    def add_warehouse(self, warehouse: Warehouse) -> Warehouse:
        log.info("warehouse %s registered (region %s, priority %d)", warehouse.code,
                 warehouse.region, warehouse.priority)
        return self.catalog.add_warehouse(warehouse)

    def import_products(self, text: str) -> list[Product]:
        products = csv_io.import_products(text, self.catalog)
        for p in products:
            log.info("imported product %s price=%s cost=%s", p.sku, p.price, p.unit_cost)
        return products

    # -------------------------------------------------------------- movements
    def receive(self, sku: str, warehouse: str, quantity: int, *, uom: str = "EA",
                bin_code: str | None = None, reference: str = "") -> Movement:
        movement = self.ledger.receive(sku, warehouse, quantity, uom=uom, bin_code=bin_code,
                                       reference=reference)
        log.info("received %d %s of %s into %s/%s (%d eaches) ref=%r", quantity, uom,
                 movement.sku, movement.warehouse, movement.bin, movement.quantity, reference)
        self._log_position(movement.sku)
        return movement

    def receive_file(self, text: str) -> list[Movement]:
        lines = csv_io.read_receipts(text)
        log.info("receipt file with %d line(s)", len(lines))
        return [self.receive(r.sku, r.warehouse, r.quantity, uom=r.uom, bin_code=r.bin_code,
                             reference=r.reference) for r in lines]

    def transfer(self, sku: str, source: str, destination: str, quantity: int,
                 reference: str = "") -> list[Movement]:
        movements = self.ledger.transfer(sku, source, destination, quantity, reference=reference)
        log.info("transferred %d x %s %s -> %s", quantity, sku, source, destination)
        self._log_position(sku.upper())
        return movements

    def put_away(self, sku: str, warehouse: str, to_bin: str, quantity: int) -> list[Movement]:
        movements = self.ledger.put_away(sku, warehouse, to_bin, quantity)
        log.info("put away %d x %s at %s/%s", quantity, sku, warehouse, to_bin)
        return movements

    def adjust(self, sku: str, warehouse: str, delta: int, *, reason: str,
               bin_code: str | None = None) -> Movement:
        movement = self.ledger.adjust(sku, warehouse, delta, bin_code=bin_code, reason=reason)
        log.warning("adjusted %s @ %s/%s by %+d (%s)", movement.sku, movement.warehouse,
                    movement.bin, delta, reason)
        self._log_position(movement.sku)
        return movement

    def scrap(self, sku: str, warehouse: str, quantity: int, *, reason: str,
              bin_code: str | None = None) -> list[Movement]:
        movements = self.ledger.scrap(sku, warehouse, quantity, reason=reason, bin_code=bin_code)
        log.warning("scrapped %d x %s @ %s (%s)", quantity, sku, warehouse, reason)
        self._log_position(sku.upper())
        return movements

    # ----------------------------------------------------------------- orders
    def place_order(self, order: Order) -> AllocationPlan:
        """Allocate an order and reserve its stock; all-or-nothing."""
        if order.order_id in self.orders:
            raise InventoryError(f"order {order.order_id} already exists")
        expired = self.ledger.reservations.expire(self._clock())
        for r in expired:
            log.info("reservation of %d x %s @ %s for order %s expired", r.quantity, r.sku,
                     r.warehouse, r.order_id)
        log.info("placing order %s: %s", order.order_id,
                 ", ".join(f"{l.quantity} x {l.sku}" for l in order.lines))
        plan = allocate(order, self.ledger, self.catalog.warehouses())
        try:
            for a in plan.allocations:
                self.ledger.reserve(order.order_id, a.sku, a.warehouse, a.quantity)
                log.info("  reserved %d x %s @ %s for %s", a.quantity, a.sku, a.warehouse,
                         order.order_id)
        except ReservationError:
            log.error("order %s: reservation failed, rolling back", order.order_id)
            if self.ledger.reservations.for_order(order.order_id):
                self.ledger.reservations.release(order.order_id)
            raise
        for line in order.lines:
            self._log_position(line.sku)
        self.orders[order.order_id] = order
        self.plans[order.order_id] = plan
        return plan

    def ship_order(self, order_id: str) -> list[Movement]:
        plan = self.plans.get(order_id)
        if plan is None:
            raise InventoryError(f"unknown order {order_id!r}")
        if order_id in self.shipped:
            raise InventoryError(f"order {order_id} already shipped")
        movements: list[Movement] = []
        for a in plan.allocations:
            movements += self.ledger.pick(a.sku, a.warehouse, a.quantity, order_id=order_id)
            log.info("  picked %d x %s @ %s for %s", a.quantity, a.sku, a.warehouse, order_id)
        self.shipped.add(order_id)
        log.info("order %s shipped from %s", order_id, ", ".join(plan.warehouses))
        return movements

    def cancel_order(self, order_id: str) -> None:
        if order_id in self.shipped:
            raise InventoryError(f"order {order_id} already shipped")
        self.plans.pop(order_id, None)
        self.orders.pop(order_id, None)
        if self.ledger.reservations.for_order(order_id):
            self.ledger.reservations.release(order_id)
        log.info("order %s cancelled", order_id)

    def quote(self, order: Order) -> Quote:
        q = self.prices.quote(order)
        log.info("quote %s: subtotal=%s discount=%s tax=%s total=%s", order.order_id,
                 q.subtotal, q.discount_total, q.tax_total, q.total)
        return q

    # ---------------------------------------------------------------- checks
    def verify_integrity(self) -> None:
        """Rebuild balances from the audit log and compare with the ledger."""
        rebuilt = replay(self.ledger.audit.movements())
        live = self.ledger.balances()
        if rebuilt != live:
            diffs = []
            for key in sorted(set(rebuilt) | set(live)):
                if rebuilt.get(key, 0) != live.get(key, 0):
                    diffs.append(f"{'/'.join(key)}: ledger={live.get(key, 0)} "
                                 f"audit={rebuilt.get(key, 0)}")
            log.error("ledger integrity check failed for %d position(s)", len(diffs))
            for d in diffs:
                log.error("  %s", d)
            raise LedgerIntegrityError("; ".join(diffs))
        log.info("ledger integrity ok (%d positions, %d movements)", len(live),
                 len(self.ledger.audit))

    # ---------------------------------------------------------------- reports
    def reorder_suggestions(self, as_of: date,
                            on_order: Mapping[tuple[str, str], int] | None = None):
        suggestions = reorder.suggest_reorders(self.ledger, self.catalog, as_of=as_of,
                                               on_order=on_order)
        for s in suggestions:
            log.info("reorder %s @ %s: position %d <= point %d, order %d case(s)", s.sku,
                     s.warehouse, s.position, s.reorder_point, s.cases)
        return suggestions

    def valuation(self, warehouse: str | None = None):
        return reports.inventory_valuation(self.ledger, self.catalog, warehouse)

    def movement_summary(self, **kwargs):
        return reports.movement_summary(self.ledger.audit.movements(), **kwargs)

    def export_stock(self) -> str:
        return csv_io.export_stock(self.ledger, self.catalog)
