"""End-to-end order flow through the service: place (allocate + reserve), ship, cancel."""

import pytest

from inventory import InventoryError, Order, OrderLine

STOCK = {
    # sku: {warehouse: eaches}
    "BOLT-M6": {"EAST": 1000, "WEST": 600, "SOUTH": 400},
    "NUT-M6": {"EAST": 1200, "WEST": 800, "SOUTH": 400},
    "DRILL-18V": {"EAST": 10, "WEST": 20, "SOUTH": 8},
    "GLOVE-L": {"EAST": 36, "WEST": 24, "SOUTH": 60},
}


@pytest.fixture
def stocked(service):
    """Service with every SKU received in two deliveries and partly put away."""
    for sku, per_wh in STOCK.items():
        for wh, qty in per_wh.items():
            first = qty // 2
            service.receive(sku, wh, first, reference=f"PO-{sku}-{wh}-1")
            service.put_away(sku, wh, "A-01-1", first)
            service.receive(sku, wh, qty - first, reference=f"PO-{sku}-{wh}-2")
    return service


def test_ship_order_consumes_reservation(stocked):
    stocked.place_order(Order("SO-1", [OrderLine("DRILL-18V", 4), OrderLine("GLOVE-L", 12)]))
    stocked.ship_order("SO-1")
    assert stocked.ledger.on_hand("DRILL-18V", "EAST") == 6
    assert stocked.ledger.on_hand("GLOVE-L", "EAST") == 24
    assert stocked.ledger.reservations.orders() == []
    with pytest.raises(InventoryError):
        stocked.ship_order("SO-1")


def test_cancel_releases_stock(stocked):
    stocked.place_order(Order("SO-1", [OrderLine("DRILL-18V", 10)]))
    assert stocked.ledger.available("DRILL-18V", "EAST") == 0
    stocked.cancel_order("SO-1")
    assert stocked.ledger.available("DRILL-18V", "EAST") == 10


def test_duplicate_order_id_rejected(stocked):
    stocked.place_order(Order("SO-1", [OrderLine("NUT-M6", 1)]))
    with pytest.raises(InventoryError):
        stocked.place_order(Order("SO-1", [OrderLine("NUT-M6", 1)]))


def test_large_order_is_split(stocked):
    plan = stocked.place_order(Order("SO-1", [OrderLine("DRILL-18V", 35)]))
    assert plan.is_split
    assert plan.quantity("DRILL-18V") == 35
    stocked.ship_order("SO-1")
    assert stocked.ledger.on_hand("DRILL-18V") == 3


def test_second_order_spills_to_next_warehouse(stocked):
    stocked.place_order(Order("SO-1", [OrderLine("DRILL-18V", 8)]))
    plan = stocked.place_order(Order("SO-2", [OrderLine("DRILL-18V", 5)]))
    assert plan.warehouses == ["WEST"]
    assert stocked.ledger.available("DRILL-18V", "EAST") == 2


def test_batch_of_orders_respects_reservations(stocked):
    orders = [
        Order(f"SO-{n}", [OrderLine("DRILL-18V", 1 + n % 4), OrderLine("GLOVE-L", 6),
                          OrderLine("BOLT-M6", 50 * (1 + n % 3))])
        for n in range(1, 13)
    ]
    for order in orders:
        stocked.place_order(order)
    for sku in STOCK:
        for wh in ("EAST", "WEST", "SOUTH"):
            assert stocked.ledger.available(sku, wh) >= 0
    for order in orders:
        stocked.ship_order(order.order_id)
    assert stocked.ledger.on_hand("DRILL-18V") == 38 - sum(1 + n % 4 for n in range(1, 13))
    assert stocked.ledger.on_hand("GLOVE-L") == 120 - 72
    stocked.verify_integrity()
