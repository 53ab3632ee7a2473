from datetime import timedelta

import pytest

from inventory import LedgerIntegrityError, MovementKind
from inventory.audit import AuditLog, replay, signed_quantity
from inventory.models import Movement


def _m(kind, qty, sku="NUT-M6", wh="EAST", bin_code="RCV-00-0", ts=None, clock=None):
    return Movement(kind, sku, wh, bin_code, qty, ts or clock())


def test_signed_quantity(clock):
    assert signed_quantity(_m(MovementKind.RECEIVE, 5, clock=clock)) == 5
    assert signed_quantity(_m(MovementKind.PICK, 5, clock=clock)) == -5
    assert signed_quantity(_m(MovementKind.ADJUST, -3, clock=clock)) == -3
    assert signed_quantity(_m(MovementKind.TRANSFER_OUT, 2, clock=clock)) == -2


def test_replay_drops_zero_balances(clock):
    moves = [_m(MovementKind.RECEIVE, 5, clock=clock), _m(MovementKind.PICK, 5, clock=clock),
             _m(MovementKind.RECEIVE, 2, sku="BOLT-M6", clock=clock)]
    assert replay(moves) == {("BOLT-M6", "EAST", "RCV-00-0"): 2}


def test_log_queries(clock):
    log = AuditLog()
    start = clock.now
    log.record(_m(MovementKind.RECEIVE, 5, clock=clock))
    clock.advance(days=1)
    log.record(Movement(MovementKind.PICK, "NUT-M6", "EAST", "RCV-00-0", 1, clock(), "SO-1"))
    assert len(log) == 2
    assert [e.sequence for e in log] == [1, 2]
    assert len(log.for_sku("nut-m6")) == 2
    assert log.between(start, start + timedelta(hours=1))[0].kind is MovementKind.RECEIVE
    assert log.for_reference("SO-1")[0].quantity == 1


def test_service_integrity_after_mixed_movements(service):
    service.receive("BOLT-M6", "EAST", 5, uom="CS")
    service.put_away("BOLT-M6", "EAST", "A-01-1", 300)
    service.transfer("BOLT-M6", "EAST", "WEST", 150)
    service.adjust("BOLT-M6", "WEST", -1, reason="damaged in transit, counted")
    service.verify_integrity()


def test_integrity_check_detects_drift(service):
    service.receive("NUT-M6", "EAST", 10)
    service.ledger._balances[("NUT-M6", "EAST", "RCV-00-0")] = 9  # simulate a lost write
    with pytest.raises(LedgerIntegrityError, match="ledger=9 audit=10"):
        service.verify_integrity()
