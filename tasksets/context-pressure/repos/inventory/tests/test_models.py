from decimal import Decimal

import pytest

from inventory import Bin, Catalog, OrderLine, Product, UnknownProductError, Warehouse
from inventory.units import cases_needed, normalize_uom, to_eaches


def test_product_normalizes_sku():
    assert Product(" bolt-m8 ", "Bolt").sku == "BOLT-M8"


def test_product_validation():
    with pytest.raises(ValueError):
        Product("", "Nothing")
    with pytest.raises(ValueError):
        Product("X", "Bad case", units_per_case=0)


def test_bin_code_roundtrip():
    b = Bin.parse("c-7-3")
    assert b == Bin("C", 7, 3)
    assert b.code == "C-07-3"
    assert Bin.parse(b.code) == b
    with pytest.raises(ValueError):
        Bin.parse("C7")


def test_warehouse_always_has_receiving_dock():
    wh = Warehouse("north")
    assert wh.code == "NORTH"
    assert wh.bins[0].code == "RCV-00-0"
    wh.add_bin("A-01-1")
    wh.add_bin("A-01-1")
    assert len(wh.bins) == 2


def test_catalog_lookup_is_case_insensitive(catalog):
    assert catalog.product("bolt-m6").name == "Hex bolt M6x30"
    assert "nut-m6" in catalog
    with pytest.raises(UnknownProductError):
        catalog.product("NOPE")


def test_catalog_orders_warehouses_by_priority(catalog):
    catalog.warehouse("EAST").active = False
    assert [w.code for w in catalog.warehouses()] == ["EAST", "WEST", "SOUTH"]
    assert [w.code for w in catalog.warehouses(active_only=True)] == ["WEST", "SOUTH"]


def test_order_line_requires_positive_quantity():
    with pytest.raises(ValueError):
        OrderLine("BOLT-M6", 0)


@pytest.mark.parametrize("uom, expected", [("ea", "EA"), (None, "EA"), ("Carton", "CS"), ("pk", "PK")])
def test_normalize_uom(uom, expected):
    assert normalize_uom(uom) == expected


def test_unit_conversion(catalog):
    drill = catalog.product("DRILL-18V")
    assert to_eaches(3, "CS", drill) == 12
    assert to_eaches(2, "PK", drill) == 12
    assert to_eaches(5, "EA", drill) == 5
    assert cases_needed(5, drill) == 2
    assert cases_needed(0, drill) == 0
    with pytest.raises(ValueError):
        to_eaches(1, "PALLET", drill)


def test_empty_catalog():
    cat = Catalog()
    assert cat.products() == []
    assert cat.warehouses() == []
    assert Product("A", "a", unit_cost=Decimal("1")).unit_cost == Decimal("1")
