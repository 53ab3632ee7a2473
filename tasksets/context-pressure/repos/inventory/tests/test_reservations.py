from datetime import datetime, timedelta, timezone

import pytest

from inventory import ReservationError
from inventory.reservations import Reservation, ReservationBook

T0 = datetime(2024, 3, 1, 12, 0, tzinfo=timezone.utc)


def test_reserved_sums_across_orders():
    book = ReservationBook()
    book.add(Reservation("SO-1", "NUT-M6", "EAST", 5, created_at=T0))
    book.add(Reservation("SO-2", "NUT-M6", "EAST", 3, created_at=T0))
    book.add(Reservation("SO-2", "NUT-M6", "WEST", 7, created_at=T0))
    assert book.reserved("NUT-M6", "EAST") == 8
    assert book.reserved("NUT-M6", "WEST") == 7
    assert book.orders() == ["SO-1", "SO-2"]


def test_zero_reservation_rejected():
    with pytest.raises(ReservationError):
        ReservationBook().add(Reservation("SO-1", "NUT-M6", "EAST", 0, created_at=T0))


def test_consume_partially_then_fully():
    book = ReservationBook()
    book.add(Reservation("SO-1", "NUT-M6", "EAST", 5, created_at=T0))
    book.consume("SO-1", "NUT-M6", "EAST", 2)
    assert book.reserved("NUT-M6", "EAST") == 3
    with pytest.raises(ReservationError):
        book.consume("SO-1", "NUT-M6", "EAST", 4)
    book.consume("SO-1", "NUT-M6", "EAST", 3)
    assert book.for_order("SO-1") == []
    with pytest.raises(ReservationError):
        book.consume("SO-1", "NUT-M6", "EAST", 1)


def test_release_unknown_order():
    with pytest.raises(ReservationError):
        ReservationBook().release("SO-404")


def test_expire_after_ttl():
    book = ReservationBook()
    book.add(Reservation("SO-1", "NUT-M6", "EAST", 5, created_at=T0, ttl=timedelta(hours=2)))
    book.add(Reservation("SO-2", "NUT-M6", "EAST", 1, created_at=T0))
    assert book.expire(T0 + timedelta(hours=1)) == []
    expired = book.expire(T0 + timedelta(hours=2))
    assert [r.order_id for r in expired] == ["SO-1"]
    assert book.orders() == ["SO-2"]


def test_service_releases_expired_reservations_before_allocating(service, clock):
    service.receive("DRILL-18V", "EAST", 2)
    from inventory import Order, OrderLine

    service.place_order(Order("SO-1", [OrderLine("DRILL-18V", 2)]))
    clock.advance(hours=25)
    plan = service.place_order(Order("SO-2", [OrderLine("DRILL-18V", 2)]))
    assert plan.warehouses == ["EAST"]
    assert service.ledger.reservations.orders() == ["SO-2"]
