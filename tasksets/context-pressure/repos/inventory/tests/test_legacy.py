from decimal import Decimal

import pytest

from inventory import legacy


@pytest.mark.parametrize(
    "text, expected",
    [
        ("12.50", "12.50"),
        ("12,50", "12.50"),
        ("4,9", "4.9"),
        ("1,299.00", "1299.00"),
        ("1.299,00", "1299.00"),
        ("€ 4,95", "4.95"),
        ("$ 7", "7"),
        ("12.345.678,90", "12345678.90"),
    ],
)
def test_parse_price_accepts_us_and_european(text, expected):
    assert legacy.parse_price(text) == Decimal(expected)


def test_parse_price_rejects_garbage():
    with pytest.raises(ValueError):
        legacy.parse_price("twelve")
    with pytest.raises(ValueError):
        legacy.parse_price(" € ")


def test_parse_int_v1_style():
    assert legacy.parse_int("12") == 12
    assert legacy.parse_int("12,0") == 12
    assert legacy.parse_int("", default=3) == 3
    with pytest.raises(ValueError):
        legacy.parse_int("12,5")
    with pytest.raises(ValueError):
        legacy.parse_int("")


def test_normalize_sku():
    assert legacy.normalize_sku("ART-00012345") == "12345"
    assert legacy.normalize_sku(" bolt-m6 ") == "BOLT-M6"
    assert legacy.normalize_sku("00000000") == "0"


def test_header_translation():
    header = ["ArtikelNr", "Bezeichnung", "VK_Preis", "Extra"]
    assert legacy.detect_format(header) == "v1"
    assert legacy.translate_header(header) == ["sku", "name", "price", "extra"]
    assert legacy.detect_format(["sku", "name"]) == "v2"


def test_parse_bool_and_tax_classes():
    assert legacy.parse_bool("Ja") is True
    assert legacy.parse_bool("") is False
    with pytest.raises(ValueError):
        legacy.parse_bool("maybe")
    assert legacy.tax_rate_for("2") == Decimal("0.07")
    with pytest.raises(ValueError):
        legacy.tax_rate_for("9")
