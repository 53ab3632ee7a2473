from __future__ import annotations

from datetime import datetime, timedelta, timezone
from decimal import Decimal

import pytest

from inventory import Catalog, InventoryService, Product, Warehouse


class FakeClock:
    """Deterministic, manually advanced UTC clock."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kwargs) -> datetime:
        self.now += timedelta(**kwargs)
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def catalog() -> Catalog:
    cat = Catalog()
    cat.add_product(Product("BOLT-M6", "Hex bolt M6x30", "hardware", Decimal("0.08"),
                            Decimal("0.25"), units_per_case=100, lead_time_days=5, safety_stock=200))
    cat.add_product(Product("NUT-M6", "Hex nut M6", "hardware", Decimal("0.03"),
                            Decimal("0.10"), units_per_case=200, lead_time_days=5))
    cat.add_product(Product("DRILL-18V", "Cordless drill 18V", "tools", Decimal("54.00"),
                            Decimal("119.00"), units_per_case=4, lead_time_days=14, safety_stock=2))
    cat.add_product(Product("GLOVE-L", "Work gloves, large", "apparel", Decimal("2.10"),
                            Decimal("6.50"), units_per_case=12, lead_time_days=10))
    cat.add_warehouse(Warehouse("EAST", "Newark DC", region="US-NJ", priority=1))
    cat.add_warehouse(Warehouse("WEST", "Reno DC", region="US-NV", priority=2))
    cat.add_warehouse(Warehouse("SOUTH", "Dallas DC", region="US-TX", priority=3))
    for wh in cat.warehouses():
        wh.add_bin("A-01-1")
        wh.add_bin("A-01-2")
        wh.add_bin("B-02-1")
    return cat


@pytest.fixture
def service(catalog: Catalog, clock: FakeClock) -> InventoryService:
    return InventoryService(catalog, clock=clock)
