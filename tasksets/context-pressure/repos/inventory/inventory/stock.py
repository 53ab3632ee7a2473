"""The stock ledger: per-bin balances and the movements that change them.

Every public mutator validates its input, updates the balances and appends a
:class:`~inventory.models.Movement` to the audit log, in that order, so a
failed call never leaves a half-written movement behind.
"""

from __future__ import annotations

from datetime import datetime
from typing import Callable

from .audit import AuditLog
from .errors import InsufficientStockError, ReservationError
from .models import (
    DEFAULT_BIN,
    Bin,
    Catalog,
    Movement,
    MovementKind,
    utcnow,
)
from .reservations import Reservation, ReservationBook
from .units import to_eaches

Key = tuple[str, str, str]  # (sku, warehouse, bin code)


class StockLedger:
    def __init__(
        self,
        catalog: Catalog,
        audit: AuditLog | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self.catalog = catalog
        self.audit = audit if audit is not None else AuditLog()
        self.reservations = ReservationBook()
        self._balances: dict[Key, int] = {}
        self._clock = clock

    # ------------------------------------------------------------------ queries
    def on_hand(self, sku: str, warehouse: str | None = None) -> int:
        """Physical units of ``sku`` in one warehouse, or in all of them."""
        sku = sku.upper()
        wh = warehouse.upper() if warehouse else None
        return sum(
            qty for (s, w, _), qty in self._balances.items() if s == sku and (wh is None or w == wh)
        )

    def available(self, sku: str, warehouse: str) -> int:
        """On hand minus what open reservations hold; what can still be promised."""
        sku, warehouse = sku.upper(), warehouse.upper()
        return self.on_hand(sku, warehouse) - self.reservations.reserved(sku, warehouse)

    def bins_for(self, sku: str, warehouse: str) -> dict[str, int]:
        sku, warehouse = sku.upper(), warehouse.upper()
        return {
            b: qty for (s, w, b), qty in sorted(self._balances.items()) if s == sku and w == warehouse
        }

    def balances(self) -> dict[Key, int]:
        return dict(self._balances)

    def skus_in(self, warehouse: str) -> list[str]:
        warehouse = warehouse.upper()
        return sorted({s for (s, w, _), q in self._balances.items() if w == warehouse and q > 0})

    # ---------------------------------------------------------------- internals
    def _validate(self, sku: str, warehouse: str, quantity: int) -> tuple[str, str]:
        product = self.catalog.product(sku)
        wh = self.catalog.warehouse(warehouse)
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        return product.sku, wh.code

    def _bin_code(self, warehouse: str, bin_code: str | None) -> str:
        if bin_code is None:
            return DEFAULT_BIN.code
        b = Bin.parse(bin_code)
        wh = self.catalog.warehouse(warehouse)
        if b not in wh.bins:
            raise ValueError(f"bin {b.code} does not exist in warehouse {wh.code}")
        return b.code

    def _apply(self, kind: MovementKind, sku: str, wh: str, bin_code: str, qty: int,
               delta: int, reference: str = "", reason: str = "") -> Movement:
        key = (sku, wh, bin_code)
        new = self._balances.get(key, 0) + delta
        if new < 0:
            raise InsufficientStockError(
                f"{kind.value} of {abs(delta)} x {sku} from {wh}/{bin_code} "
                f"would leave {new} on hand"
            )
        if new == 0:
            self._balances.pop(key, None)
        else:
            self._balances[key] = new
        movement = Movement(kind, sku, wh, bin_code, qty, self._clock(), reference, reason)
        self.audit.record(movement)
        return movement

    def _take_from_bins(self, kind: MovementKind, sku: str, wh: str, quantity: int,
                        reference: str, reason: str = "") -> list[Movement]:
        """Remove ``quantity`` from a warehouse, emptying the smallest bins first.

        The receiving dock is drawn from last so that put-away stock moves first.
        """
        bins = self.bins_for(sku, wh)
        total = sum(bins.values())
        if total < quantity:
            raise InsufficientStockError(
                f"cannot {kind.value} {quantity} x {sku} at {wh}: only {total} on hand"
            )
        ordered = sorted(bins.items(), key=lambda kv: (kv[0] == DEFAULT_BIN.code, kv[1], kv[0]))
        movements = []
        remaining = quantity
        for bin_code, qty in ordered:
            if remaining == 0:
                break
            take = min(qty, remaining)
            movements.append(self._apply(kind, sku, wh, bin_code, take, -take, reference, reason))
            remaining -= take
        return movements

    # ----------------------------------------------------------------- mutators
    def receive(self, sku: str, warehouse: str, quantity: int, *, uom: str = "EA",
                bin_code: str | None = None, reference: str = "") -> Movement:
        """Book goods in. ``quantity`` is in ``uom``; the ledger stores eaches."""
        sku, wh = self._validate(sku, warehouse, quantity)
        eaches = to_eaches(quantity, uom, self.catalog.product(sku))
        return self._apply(MovementKind.RECEIVE, sku, wh, self._bin_code(wh, bin_code),
                           eaches, eaches, reference)

    def pick(self, sku: str, warehouse: str, quantity: int, *, reference: str = "",
             order_id: str | None = None) -> list[Movement]:
        """Take stock out for shipping.

        Without ``order_id`` only unreserved stock may be picked; with it the
        order's reservation is consumed.
        """
        sku, wh = self._validate(sku, warehouse, quantity)
        if order_id is None and quantity > self.available(sku, wh):
            raise InsufficientStockError(
                f"cannot pick {quantity} x {sku} at {wh}: only {self.available(sku, wh)} unreserved"
            )
        movements = self._take_from_bins(MovementKind.PICK, sku, wh, quantity, reference or (order_id or ""))
        if order_id is not None:
            self.reservations.consume(order_id, sku, wh, quantity)
        return movements

    def transfer(self, sku: str, source: str, destination: str, quantity: int, *,
                 reference: str = "") -> list[Movement]:
        """Move unreserved stock between warehouses; it lands on the destination dock."""
        sku, src = self._validate(sku, source, quantity)
        _, dst = self._validate(sku, destination, quantity)
        if src == dst:
            raise ValueError("source and destination warehouse are the same")
        if quantity > self.available(sku, src):
            raise InsufficientStockError(
                f"cannot transfer {quantity} x {sku} from {src}: "
                f"only {self.available(sku, src)} unreserved"
            )
        out = self._take_from_bins(MovementKind.TRANSFER_OUT, sku, src, quantity, reference)
        inbound = self._apply(MovementKind.TRANSFER_IN, sku, dst, DEFAULT_BIN.code,
                              quantity, quantity, reference)
        return out + [inbound]

    def put_away(self, sku: str, warehouse: str, to_bin: str, quantity: int,
                 from_bin: str | None = None) -> list[Movement]:
        """Move stock between bins of one warehouse (dock to shelf by default)."""
        sku, wh = self._validate(sku, warehouse, quantity)
        src = self._bin_code(wh, from_bin)
        dst = self._bin_code(wh, to_bin)
        out = self._apply(MovementKind.TRANSFER_OUT, sku, wh, src, quantity, -quantity, "putaway")
        inbound = self._apply(MovementKind.TRANSFER_IN, sku, wh, dst, quantity, quantity, "putaway")
        return [out, inbound]

    def adjust(self, sku: str, warehouse: str, delta: int, *, bin_code: str | None = None,
               reason: str) -> Movement:
        """Correct a bin after a count. ``delta`` is signed; a reason is mandatory."""
        if not reason.strip():
            raise ValueError("adjustments need a reason")
        if delta == 0:
            raise ValueError("adjustment of zero")
        sku, wh = self._validate(sku, warehouse, abs(delta))
        return self._apply(MovementKind.ADJUST, sku, wh, self._bin_code(wh, bin_code),
                           delta, delta, reason=reason)

    def scrap(self, sku: str, warehouse: str, quantity: int, *, reason: str,
              bin_code: str | None = None) -> list[Movement]:
        """Write off damaged or expired units."""
        sku, wh = self._validate(sku, warehouse, quantity)
        if bin_code is not None:
            code = self._bin_code(wh, bin_code)
            return [self._apply(MovementKind.SCRAP, sku, wh, code, quantity, -quantity, reason=reason)]
        return self._take_from_bins(MovementKind.SCRAP, sku, wh, quantity, "", reason)

    # ------------------------------------------------------------- reservations
    def reserve(self, order_id: str, sku: str, warehouse: str, quantity: int) -> Reservation:
        sku, wh = self._validate(sku, warehouse, quantity)
        free = self.available(sku, wh)
        if quantity > free:
            raise ReservationError(
                f"cannot reserve {quantity} x {sku} at {wh} for order {order_id}: "
                f"only {free} available"
            )
        return self.reservations.add(
            Reservation(order_id, sku, wh, quantity, created_at=self._clock())
        )
