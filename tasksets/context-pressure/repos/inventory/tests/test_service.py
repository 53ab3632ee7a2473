from datetime import timedelta
from decimal import Decimal

import pytest

from inventory import InventoryService, Order, OrderLine, Product, UnknownProductError, Warehouse


def test_receive_file_converts_units(service):
    moves = service.receive_file(
        "sku,warehouse,quantity,uom,bin,reference\n"
        "NUT-M6,EAST,2,CS,A-01-1,PO-1\n"
        "GLOVE-L,WEST,3,PK,,PO-1\n"
    )
    assert [m.quantity for m in moves] == [400, 18]
    assert service.ledger.bins_for("NUT-M6", "EAST") == {"A-01-1": 400}


def test_receive_unknown_sku(service):
    with pytest.raises(UnknownProductError):
        service.receive("NOPE", "EAST", 1)


def test_import_products_through_service(service):
    service.import_products("sku,name,price\nTAPE-5M,Tape measure 5m,9.95\n")
    assert service.catalog.product("TAPE-5M").price == Decimal("9.95")


def test_quote_through_service(service):
    q = service.quote(Order("Q-9", [OrderLine("NUT-M6", 50)], region="US-OR"))
    assert q.total == Decimal("4.50")


def test_reorder_suggestions_through_service(service, clock):
    service.receive("NUT-M6", "WEST", 400)
    for _ in range(28):
        service.ledger.pick("NUT-M6", "WEST", 10)
        clock.advance(days=1)
    suggestions = service.reorder_suggestions(as_of=(clock.now - timedelta(days=1)).date())
    assert not [s for s in suggestions if s.sku == "NUT-M6"]   # 120 on hand, point 50
    service.adjust("NUT-M6", "WEST", -80, reason="cycle count")
    suggestions = service.reorder_suggestions(as_of=(clock.now - timedelta(days=1)).date())
    nuts = [s for s in suggestions if s.sku == "NUT-M6"]
    assert [(s.warehouse, s.reorder_point, s.position, s.cases) for s in nuts] == [("WEST", 50, 40, 1)]


def test_fresh_service_has_empty_catalog():
    svc = InventoryService()
    svc.add_warehouse(Warehouse("HUB"))
    svc.add_product(Product("A-1", "A"))
    svc.receive("A-1", "HUB", 1)
    assert svc.export_stock().splitlines()[1] == "A-1,A,HUB,RCV-00-0,1,1"
    svc.verify_integrity()
