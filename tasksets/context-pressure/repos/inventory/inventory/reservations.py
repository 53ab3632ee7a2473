"""Reservations hold stock for an order between allocation and picking.

A reservation is per (order, SKU, warehouse).  Reserved stock stays on hand
but is no longer *available* to other orders.  Reservations expire so that
abandoned checkouts do not lock stock forever.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .errors import ReservationError
from .models import utcnow

DEFAULT_TTL = timedelta(hours=24)


@dataclass
class Reservation:
    order_id: str
    sku: str
    warehouse: str
    quantity: int
    created_at: datetime = field(default_factory=utcnow)
    ttl: timedelta = DEFAULT_TTL

    @property
    def expires_at(self) -> datetime:
        return self.created_at + self.ttl

    def is_expired(self, now: datetime) -> bool:
        return now >= self.expires_at


class ReservationBook:
    """All open reservations, indexed by order."""

    def __init__(self) -> None:
        self._by_order: dict[str, list[Reservation]] = {}

    def add(self, reservation: Reservation) -> Reservation:
        if reservation.quantity <= 0:
            raise ReservationError(
                f"reservation for {reservation.sku} must be positive, got {reservation.quantity}"
            )
        self._by_order.setdefault(reservation.order_id, []).append(reservation)
        return reservation

    def for_order(self, order_id: str) -> list[Reservation]:
        return list(self._by_order.get(order_id, []))

    def reserved(self, sku: str, warehouse: str) -> int:
        """Units of ``sku`` held at ``warehouse`` by all open reservations."""
        return sum(
            r.quantity
            for rs in self._by_order.values()
            for r in rs
            if r.sku == sku and r.warehouse == warehouse
        )

    def release(self, order_id: str) -> list[Reservation]:
        """Drop every reservation of an order and return them."""
        try:
            return self._by_order.pop(order_id)
        except KeyError:
            raise ReservationError(f"no reservations for order {order_id!r}") from None

    def consume(self, order_id: str, sku: str, warehouse: str, quantity: int) -> None:
        """Reduce a reservation after its stock has been picked."""
        for r in self._by_order.get(order_id, []):
            if r.sku == sku and r.warehouse == warehouse:
                if quantity > r.quantity:
                    raise ReservationError(
                        f"order {order_id} picked {quantity} x {sku} at {warehouse} "
                        f"but only reserved {r.quantity}"
                    )
                r.quantity -= quantity
                if r.quantity == 0:
                    self._by_order[order_id].remove(r)
                if not self._by_order[order_id]:
                    del self._by_order[order_id]
                return
        raise ReservationError(f"order {order_id} holds no reservation for {sku} at {warehouse}")

    def expire(self, now: datetime | None = None) -> list[Reservation]:
        """Remove and return reservations whose TTL has run out."""
        now = now or utcnow()
        expired: list[Reservation] = []
        for order_id in list(self._by_order):
            keep = []
            for r in self._by_order[order_id]:
                (expired if r.is_expired(now) else keep).append(r)
            if keep:
                self._by_order[order_id] = keep
            else:
                del self._by_order[order_id]
        return expired

    def orders(self) -> list[str]:
        return sorted(self._by_order)
