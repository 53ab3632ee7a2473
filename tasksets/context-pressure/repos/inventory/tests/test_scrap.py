"""Write-offs of damaged or expired stock (movement kind SCRAP)."""

import pytest

from inventory import InsufficientStockError, MovementKind

SKUS = ["BOLT-M6", "NUT-M6", "DRILL-18V", "GLOVE-L"]


def _busy_week(service, clock):
    """A week of receiving and shipping in all three warehouses."""
    for day in range(7):
        for i, sku in enumerate(SKUS):
            for wh in ("EAST", "WEST", "SOUTH"):
                service.receive(sku, wh, 2, uom="CS", reference=f"PO-{day}{i}")
                service.ledger.pick(sku, wh, 1 + day % 3, reference=f"SO-{day}{i}")
        clock.advance(days=1)


def test_scrap_takes_from_bins(service):
    service.receive("GLOVE-L", "EAST", 24)
    service.put_away("GLOVE-L", "EAST", "A-01-1", 20)
    moves = service.scrap("GLOVE-L", "EAST", 6, reason="water damage")
    assert [(m.bin, m.quantity) for m in moves] == [("A-01-1", 6)]
    assert all(m.kind is MovementKind.SCRAP for m in moves)
    assert service.ledger.on_hand("GLOVE-L", "EAST") == 18


def test_scrap_from_named_bin(service):
    service.receive("GLOVE-L", "EAST", 10, bin_code="B-02-1")
    service.scrap("GLOVE-L", "EAST", 3, reason="torn", bin_code="B-02-1")
    assert service.ledger.bins_for("GLOVE-L", "EAST") == {"B-02-1": 7}


def test_scrap_more_than_on_hand(service):
    service.receive("GLOVE-L", "EAST", 2)
    with pytest.raises(InsufficientStockError):
        service.scrap("GLOVE-L", "EAST", 3, reason="lost")


def test_integrity_holds_after_scrap(service, clock):
    _busy_week(service, clock)
    service.scrap("DRILL-18V", "WEST", 2, reason="dropped from forklift")
    service.scrap("BOLT-M6", "EAST", 50, reason="rusted")
    service.verify_integrity()


def test_movement_summary_counts_scrap_as_outbound(service, clock):
    _busy_week(service, clock)
    service.scrap("NUT-M6", "SOUTH", 120, reason="wrong thread")
    summary = service.movement_summary(warehouse="SOUTH")
    row = summary["NUT-M6"]
    assert row.net == service.ledger.on_hand("NUT-M6", "SOUTH")
    assert row.outbound == 120 + sum(1 + day % 3 for day in range(7))
