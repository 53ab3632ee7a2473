from datetime import date, timedelta
from decimal import Decimal

from inventory import Product, reports


def test_movement_summary_per_sku(service, clock):
    service.receive("NUT-M6", "EAST", 100)
    service.ledger.pick("NUT-M6", "EAST", 30)
    service.transfer("NUT-M6", "EAST", "WEST", 20)
    service.adjust("NUT-M6", "WEST", -1, reason="count")
    summary = service.movement_summary()
    row = summary["NUT-M6"]
    assert (row.inbound, row.outbound, row.adjusted) == (120, 50, -1)
    assert row.net == service.ledger.on_hand("NUT-M6")


def test_movement_summary_time_window(service, clock):
    service.receive("NUT-M6", "EAST", 100)
    start = clock.advance(days=1)
    service.ledger.pick("NUT-M6", "EAST", 30)
    summary = service.movement_summary(start=start, end=start + timedelta(days=1))
    assert summary["NUT-M6"].inbound == 0
    assert summary["NUT-M6"].outbound == 30


def test_valuation(service):
    service.receive("DRILL-18V", "EAST", 3)
    service.receive("BOLT-M6", "WEST", 250)
    lines, total = service.valuation()
    assert [(l.sku, l.value) for l in lines] == [("BOLT-M6", Decimal("20.00")),
                                                 ("DRILL-18V", Decimal("162.00"))]
    assert total == Decimal("182.00")
    _, east = service.valuation("EAST")
    assert east == Decimal("162.00")


def test_valuation_rounds_half_cent_up(service, catalog):
    catalog.add_product(Product("WASHER-M6", "Washer M6", "hardware", Decimal("0.0125"),
                                Decimal("0.05"), units_per_case=1000))
    service.receive("WASHER-M6", "EAST", 2)
    service.receive("WASHER-M6", "WEST", 1, uom="CS")
    lines, total = service.valuation("EAST")
    assert lines[0].value == Decimal("0.03")
    _, total = service.valuation()
    assert total == Decimal("12.53")


def test_render_valuation(service):
    service.receive("DRILL-18V", "EAST", 20)
    text = reports.render_valuation(*service.valuation())
    assert "1,080.00 USD" in text.splitlines()[1]
    assert text.splitlines()[-1].startswith("TOTAL")


def test_days_of_cover(service, clock):
    service.receive("GLOVE-L", "EAST", 100)
    for _ in range(10):
        service.ledger.pick("GLOVE-L", "EAST", 2)
        clock.advance(days=1)
    last_pick = (clock.now - timedelta(days=1)).date()
    cover = reports.days_of_cover(service.ledger, service.catalog, as_of=last_pick, days=10)
    assert cover["GLOVE-L"] == Decimal("40.0")
    assert cover["DRILL-18V"] is None


def test_low_stock(service):
    service.receive("DRILL-18V", "EAST", 1)
    service.receive("DRILL-18V", "WEST", 5)
    rows = reports.low_stock(service.ledger, service.catalog)
    assert ("DRILL-18V", "EAST", 1, 2) in rows
    assert ("BOLT-M6", "SOUTH", 0, 200) in rows
    assert not any(r[0] == "DRILL-18V" and r[1] == "WEST" for r in rows)


def test_daily_activity(service, clock):
    service.receive("NUT-M6", "EAST", 10)
    service.receive("NUT-M6", "WEST", 10)
    clock.advance(days=1)
    service.ledger.pick("NUT-M6", "EAST", 1)
    activity = reports.daily_activity(service.ledger.audit.movements())
    assert activity == {date(2024, 3, 1): {"receive": 2}, date(2024, 3, 2): {"pick": 1}}


def test_average_daily_usage_counts_quiet_days(service, clock):
    service.receive("NUT-M6", "EAST", 100)
    service.ledger.pick("NUT-M6", "EAST", 30)
    usage = reports.average_daily_usage(service.ledger.audit.movements(), "NUT-M6", days=10,
                                        as_of=clock.now.date())
    assert usage == Decimal("3")
