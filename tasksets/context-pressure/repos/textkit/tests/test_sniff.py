"""Tests for textkit.sniff."""

import pytest

from textkit.sniff import Dialect, detect_delimiter, detect_quotechar, sniff


@pytest.mark.parametrize(
    "sample,delimiter,name",
    [
        ("name,age\nAda,36\nAlan,41\n", ",", "csv"),
        ("name\tage\nAda\t36\nAlan\t41\n", "\t", "tsv"),
        ("name;age\nAda;36\nAlan;41\n", ";", "ssv"),
        ("name|age\nAda|36\nAlan|41\n", "|", "psv"),
    ],
    ids=["comma", "tab", "semicolon", "pipe"],
)
def test_sniff_delimiters(sample, delimiter, name):
    dialect = sniff(sample)
    assert dialect.delimiter == delimiter
    assert dialect.name == name


def test_delimiter_inside_quotes_is_ignored():
    sample = 'city;note\n"Paris";"big, old, pretty"\n"Oslo";"cold, dark"\n'
    assert sniff(sample).delimiter == ";"


def test_consistency_beats_frequency():
    # Commas appear more often in total, but semicolons appear on every line
    # the same number of times.
    sample = "a;b\n1,2,3,4;5\nx;y\n6;7,8\n"
    assert detect_delimiter(sample.splitlines()) == ";"


def test_tie_goes_to_first_candidate():
    assert detect_delimiter(["a,b;c", "d,e;f"]) == ","
    assert detect_delimiter(["a,b;c", "d,e;f"], delimiters=";,") == ";"


def test_detect_delimiter_nothing_found():
    assert detect_delimiter(["abc", "def"]) is None


def test_single_quotes():
    sample = "'name','city'\n'Ada','London, UK'\n"
    assert detect_quotechar(sample) == "'"
    assert sniff(sample).delimiter == ","


def test_header_detected_by_numeric_column():
    assert sniff("name,age\nAda,36\nAlan,41\n").has_header is True


def test_no_header_when_first_row_is_data():
    assert sniff("1,2\n3,4\n5,6\n").has_header is False
    assert sniff("Ada,London\nAlan,London\n").has_header is False


def test_header_detected_by_distinct_labels():
    assert sniff("first,last\nAda,Lovelace\nAlan,Turing\n").has_header is True


def test_skipinitialspace():
    dialect = sniff("a, b, c\n1, 2, 3\n")
    assert dialect.skipinitialspace is True
    assert sniff("a,b\n1,2\n").skipinitialspace is False


def test_dialect_csv_kwargs():
    assert Dialect(";").as_csv_kwargs() == {
        "delimiter": ";", "quotechar": '"', "skipinitialspace": False,
    }
