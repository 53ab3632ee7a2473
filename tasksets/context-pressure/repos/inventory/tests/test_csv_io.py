from decimal import Decimal

import pytest

from inventory import Catalog, ImportFormatError
from inventory.csv_io import export_products, export_stock, import_products, read_receipts

V2_FILE = """sku,name,category,unit_cost,price,units_per_case,lead_time_days
bolt-m8,Hex bolt M8x40,hardware,0.11,0.35,100,5
DRILL-24V,Cordless drill 24V,tools,79.50,169.00,4,21
"""

V1_FILE = """ArtikelNr;Bezeichnung;Warengruppe;EK_Preis;VK_Preis;VE;WBZ_Tage
ART-00004711;Schraube M4;hardware;0,02;0,09;500;3
00000815;Akkuschrauber;tools;1.049,50;1.899,00;2;30
"""


def test_import_current_format():
    catalog = Catalog()
    products = import_products(V2_FILE, catalog)
    assert [p.sku for p in products] == ["BOLT-M8", "DRILL-24V"]
    drill = catalog.product("drill-24v")
    assert drill.price == Decimal("169.00")
    assert drill.unit_cost == Decimal("79.50")
    assert drill.units_per_case == 4
    assert drill.lead_time_days == 21


def test_import_v1_export():
    products = import_products(V1_FILE)
    assert [p.sku for p in products] == ["4711", "815"]
    assert products[0].price == Decimal("0.09")
    assert products[1].unit_cost == Decimal("1049.50")
    assert products[1].price == Decimal("1899.00")
    assert products[1].lead_time_days == 30


def test_optional_columns_default():
    products = import_products("sku,name,price\nX-1,Thing,2.50\n")
    assert products[0].category == "general"
    assert products[0].units_per_case == 1
    assert products[0].unit_cost == Decimal("0.00")


def test_missing_required_column():
    with pytest.raises(ImportFormatError, match="line 1: missing column\\(s\\): price"):
        import_products("sku,name\nX-1,Thing\n")


def test_bad_row_reports_line_number():
    text = "sku,name,price\nX-1,Thing,2.50\n\nX-2,Other,cheap\n"
    with pytest.raises(ImportFormatError) as err:
        import_products(text)
    assert err.value.line == 4


def test_duplicate_sku_rejected():
    with pytest.raises(ImportFormatError, match="duplicate SKU"):
        import_products("sku,name,price\nX-1,Thing,2.50\nx-1,Again,3\n")


def test_empty_file():
    with pytest.raises(ImportFormatError):
        import_products("")


def test_export_then_import_roundtrip(catalog):
    text = export_products(catalog.products())
    again = import_products(text)
    assert [(p.sku, p.price, p.unit_cost, p.units_per_case) for p in again] == [
        (p.sku, p.price, p.unit_cost, p.units_per_case) for p in catalog.products()
    ]


def test_supplier_price_list_with_thousands_separators():
    text = (
        "sku,name,category,unit_cost,price,units_per_case\n"
        "GEN-5K,Generator 5kW,tools,\"1,040\",\"1,899\",1\n"
        "SAW-TBL,Table saw,tools,\"612.40\",\"1,249.00\",1\n"
    )
    gen, saw = import_products(text)
    assert gen.unit_cost == Decimal("1040.00")
    assert gen.price == Decimal("1899.00")
    assert saw.price == Decimal("1249.00")


def test_v1_whole_euro_prices_with_thousands_separator():
    text = "ArtikelNr;Bezeichnung;EK_Preis;VK_Preis\n00000901;Kompressor;\"2,150\";\"3,490\"\n"
    (compressor,) = import_products(text)
    assert compressor.price == Decimal("3490.00")


def test_read_receipts():
    text = "sku,warehouse,quantity,uom,bin,reference\nnut-m6,east,2,CS,A-01-1,PO-77\nBOLT-M6,WEST,150,,,\n"
    r1, r2 = read_receipts(text)
    assert (r1.sku, r1.warehouse, r1.quantity, r1.uom, r1.bin_code, r1.reference) == (
        "NUT-M6", "EAST", 2, "CS", "A-01-1", "PO-77")
    assert (r2.uom, r2.bin_code) == ("EA", None)


def test_read_receipts_rejects_non_positive():
    with pytest.raises(ImportFormatError) as err:
        read_receipts("sku,warehouse,quantity\nNUT-M6,EAST,0\n")
    assert err.value.line == 2


def test_export_stock(service):
    service.receive("NUT-M6", "EAST", 10)
    service.receive("NUT-M6", "EAST", 5, bin_code="A-01-2")
    text = export_stock(service.ledger, service.catalog)
    assert text.splitlines() == [
        "sku,name,warehouse,bin,on_hand,available",
        "NUT-M6,Hex nut M6,EAST,A-01-2,5,15",
        "NUT-M6,Hex nut M6,EAST,RCV-00-0,10,15",
    ]
