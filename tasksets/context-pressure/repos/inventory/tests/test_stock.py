import pytest

from inventory import InsufficientStockError, MovementKind, ReservationError, UnknownWarehouseError
from inventory.stock import StockLedger


@pytest.fixture
def ledger(catalog, clock):
    return StockLedger(catalog, clock=clock)


def test_receive_in_cases_books_eaches(ledger):
    m = ledger.receive("DRILL-18V", "EAST", 3, uom="CS")
    assert m.quantity == 12
    assert ledger.on_hand("DRILL-18V", "EAST") == 12
    assert ledger.bins_for("DRILL-18V", "EAST") == {"RCV-00-0": 12}


def test_receive_into_unknown_bin_fails(ledger):
    with pytest.raises(ValueError):
        ledger.receive("NUT-M6", "EAST", 5, bin_code="Z-99-9")
    assert ledger.on_hand("NUT-M6") == 0
    assert len(ledger.audit) == 0


def test_receive_unknown_warehouse(ledger):
    with pytest.raises(UnknownWarehouseError):
        ledger.receive("NUT-M6", "MOON", 5)


def test_pick_empties_smallest_bins_first_and_dock_last(ledger):
    ledger.receive("NUT-M6", "EAST", 50)
    ledger.receive("NUT-M6", "EAST", 30, bin_code="A-01-1")
    ledger.receive("NUT-M6", "EAST", 10, bin_code="A-01-2")
    moves = ledger.pick("NUT-M6", "EAST", 45)
    assert [(m.bin, m.quantity) for m in moves] == [("A-01-2", 10), ("A-01-1", 30), ("RCV-00-0", 5)]
    assert ledger.bins_for("NUT-M6", "EAST") == {"RCV-00-0": 45}


def test_pick_more_than_on_hand(ledger):
    ledger.receive("NUT-M6", "EAST", 5)
    with pytest.raises(InsufficientStockError):
        ledger.pick("NUT-M6", "EAST", 6)
    assert ledger.on_hand("NUT-M6", "EAST") == 5


def test_pick_cannot_take_reserved_stock(ledger):
    ledger.receive("NUT-M6", "EAST", 10)
    ledger.reserve("SO-1", "NUT-M6", "EAST", 8)
    with pytest.raises(InsufficientStockError):
        ledger.pick("NUT-M6", "EAST", 3)
    ledger.pick("NUT-M6", "EAST", 8, order_id="SO-1")
    assert ledger.on_hand("NUT-M6", "EAST") == 2
    assert ledger.reservations.orders() == []


def test_transfer_moves_stock_to_destination_dock(ledger):
    ledger.receive("BOLT-M6", "EAST", 300, bin_code="B-02-1")
    moves = ledger.transfer("BOLT-M6", "EAST", "WEST", 120, reference="TR-7")
    assert [m.kind for m in moves] == [MovementKind.TRANSFER_OUT, MovementKind.TRANSFER_IN]
    assert ledger.on_hand("BOLT-M6", "EAST") == 180
    assert ledger.bins_for("BOLT-M6", "WEST") == {"RCV-00-0": 120}
    assert ledger.on_hand("BOLT-M6") == 300


def test_transfer_to_same_warehouse_rejected(ledger):
    ledger.receive("BOLT-M6", "EAST", 10)
    with pytest.raises(ValueError):
        ledger.transfer("BOLT-M6", "EAST", "east", 1)


def test_put_away(ledger):
    ledger.receive("GLOVE-L", "WEST", 2, uom="CS")
    ledger.put_away("GLOVE-L", "WEST", "A-01-2", 20)
    assert ledger.bins_for("GLOVE-L", "WEST") == {"A-01-2": 20, "RCV-00-0": 4}


def test_adjust_requires_reason_and_keeps_sign(ledger):
    ledger.receive("GLOVE-L", "WEST", 10)
    with pytest.raises(ValueError):
        ledger.adjust("GLOVE-L", "WEST", -2, reason=" ")
    m = ledger.adjust("GLOVE-L", "WEST", -2, reason="cycle count")
    assert m.quantity == -2
    assert ledger.on_hand("GLOVE-L", "WEST") == 8
    with pytest.raises(InsufficientStockError):
        ledger.adjust("GLOVE-L", "WEST", -9, reason="cycle count")


def test_reserve_beyond_available(ledger):
    ledger.receive("DRILL-18V", "SOUTH", 4)
    ledger.reserve("SO-1", "DRILL-18V", "SOUTH", 3)
    assert ledger.available("DRILL-18V", "SOUTH") == 1
    with pytest.raises(ReservationError):
        ledger.reserve("SO-2", "DRILL-18V", "SOUTH", 2)


def test_every_movement_is_audited(ledger, clock):
    ledger.receive("NUT-M6", "EAST", 10)
    clock.advance(hours=1)
    ledger.pick("NUT-M6", "EAST", 4, reference="SO-9")
    assert [m.kind for m in ledger.audit.movements()] == [MovementKind.RECEIVE, MovementKind.PICK]
    assert ledger.audit.for_reference("SO-9")[0].timestamp == clock.now
