import pytest

from inventory import AllocationError, Order, OrderLine
from inventory.allocation import allocate
from inventory.stock import StockLedger


@pytest.fixture
def ledger(catalog, clock):
    return StockLedger(catalog, clock=clock)


def test_whole_order_from_single_warehouse(ledger, catalog):
    ledger.receive("NUT-M6", "EAST", 100)
    ledger.receive("BOLT-M6", "EAST", 100)
    ledger.receive("NUT-M6", "WEST", 100)
    plan = allocate(Order("SO-1", [OrderLine("NUT-M6", 20), OrderLine("BOLT-M6", 20)]),
                    ledger, catalog.warehouses())
    assert plan.warehouses == ["EAST"]
    assert not plan.is_split


def test_prefers_same_region(ledger, catalog):
    for wh in ("EAST", "WEST", "SOUTH"):
        ledger.receive("GLOVE-L", wh, 10)
    plan = allocate(Order("SO-1", [OrderLine("GLOVE-L", 3)], region="US-TX"),
                    ledger, catalog.warehouses())
    assert plan.warehouses == ["SOUTH"]


def test_prefers_warehouse_that_has_everything(ledger, catalog):
    ledger.receive("NUT-M6", "EAST", 100)
    ledger.receive("NUT-M6", "WEST", 100)
    ledger.receive("BOLT-M6", "WEST", 100)
    plan = allocate(Order("SO-1", [OrderLine("NUT-M6", 20), OrderLine("BOLT-M6", 20)]),
                    ledger, catalog.warehouses())
    assert plan.warehouses == ["WEST"]


def test_split_when_no_single_warehouse_suffices(ledger, catalog):
    ledger.receive("DRILL-18V", "EAST", 3)
    ledger.receive("DRILL-18V", "WEST", 2)
    ledger.receive("DRILL-18V", "SOUTH", 5)
    plan = allocate(Order("SO-1", [OrderLine("DRILL-18V", 7)]), ledger, catalog.warehouses())
    assert plan.is_split
    assert plan.quantity("DRILL-18V", "EAST") == 3
    assert plan.quantity("DRILL-18V", "WEST") == 2
    assert plan.quantity("DRILL-18V", "SOUTH") == 2


def test_duplicate_lines_are_merged(ledger, catalog):
    ledger.receive("NUT-M6", "WEST", 10)
    plan = allocate(Order("SO-1", [OrderLine("NUT-M6", 4), OrderLine("nut-m6", 5)]),
                    ledger, catalog.warehouses())
    assert plan.allocations[0].quantity == 9


def test_short_everywhere(ledger, catalog):
    ledger.receive("DRILL-18V", "EAST", 1)
    with pytest.raises(AllocationError, match="short 1 x DRILL-18V"):
        allocate(Order("SO-1", [OrderLine("DRILL-18V", 2)]), ledger, catalog.warehouses())


def test_inactive_warehouses_are_skipped(ledger, catalog):
    ledger.receive("DRILL-18V", "EAST", 5)
    ledger.receive("DRILL-18V", "WEST", 5)
    catalog.warehouse("EAST").active = False
    plan = allocate(Order("SO-1", [OrderLine("DRILL-18V", 2)]), ledger, catalog.warehouses())
    assert plan.warehouses == ["WEST"]
