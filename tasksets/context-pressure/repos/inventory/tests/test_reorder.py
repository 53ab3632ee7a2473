from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from inventory import MovementKind, Product
from inventory.models import Movement
from inventory.reorder import average_daily_demand, reorder_point, suggest_reorders

AS_OF = datetime(2024, 3, 28, tzinfo=timezone.utc).date()


def _pick(day: int, qty: int, sku="NUT-M6", wh="EAST"):
    ts = datetime(2024, 3, day, 15, 0, tzinfo=timezone.utc)
    return Movement(MovementKind.PICK, sku, wh, "RCV-00-0", qty, ts)


def test_daily_demand_steady():
    moves = [_pick(d, 3) for d in range(1, 29)]
    assert average_daily_demand(moves, "nut-m6", as_of=AS_OF) == Decimal("3")


def test_daily_demand_ignores_other_skus_kinds_and_warehouses():
    moves = [_pick(d, 2) for d in range(1, 29)]
    moves += [_pick(5, 100, sku="BOLT-M6"), _pick(6, 100, wh="WEST")]
    moves.append(Movement(MovementKind.RECEIVE, "NUT-M6", "EAST", "RCV-00-0", 500, moves[0].timestamp))
    assert average_daily_demand(moves, "NUT-M6", as_of=AS_OF, warehouse="EAST") == Decimal("2")


def test_daily_demand_without_picks_is_zero():
    assert average_daily_demand([], "NUT-M6", as_of=AS_OF) == 0


def test_window_must_be_positive():
    with pytest.raises(ValueError):
        average_daily_demand([], "NUT-M6", as_of=AS_OF, window_days=0)


def test_reorder_point_rounds_up():
    p = Product("X", "x", lead_time_days=5, safety_stock=10)
    assert reorder_point(p, Decimal("2.1")) == 21
    assert reorder_point(p, Decimal("0")) == 10


def _steady_demand(service, clock, sku, wh, per_day, days=28):
    for _ in range(days):
        service.ledger.pick(sku, wh, per_day)
        clock.advance(days=1)


def test_suggests_whole_cases_when_below_reorder_point(service, clock):
    service.receive("DRILL-18V", "EAST", 60)
    _steady_demand(service, clock, "DRILL-18V", "EAST", 2)
    as_of = (clock.now - timedelta(days=1)).date()
    suggestions = [s for s in suggest_reorders(service.ledger, service.catalog, as_of=as_of)
                   if s.sku == "DRILL-18V" and s.warehouse == "EAST"]
    assert len(suggestions) == 1
    s = suggestions[0]
    # demand 2/day * 14 days lead time + 2 safety = 30; position 60 - 56 = 4
    assert (s.warehouse, s.position, s.reorder_point) == ("EAST", 4, 30)
    # cover 30 + 2 * 7 review days - 4 = 40 units = 10 cases of 4
    assert (s.cases, s.units) == (10, 40)


def test_open_purchase_orders_count_towards_position(service, clock):
    service.receive("DRILL-18V", "EAST", 60)
    _steady_demand(service, clock, "DRILL-18V", "EAST", 2)
    as_of = (clock.now - timedelta(days=1)).date()
    suggestions = suggest_reorders(service.ledger, service.catalog, as_of=as_of,
                                   on_order={("DRILL-18V", "EAST"): 40})
    assert not [s for s in suggestions if (s.sku, s.warehouse) == ("DRILL-18V", "EAST")]


def test_no_demand_only_safety_stock(service, clock):
    suggestions = suggest_reorders(service.ledger, service.catalog, as_of=clock.now.date())
    bolts = [s for s in suggestions if s.sku == "BOLT-M6"]
    assert [s.warehouse for s in bolts] == ["EAST", "WEST", "SOUTH"]
    assert all(s.reorder_point == 200 and s.cases == 2 for s in bolts)
    assert not [s for s in suggestions if s.sku == "NUT-M6"]
