"""Tests for textkit.table."""

import pytest

from textkit.sniff import Dialect
from textkit.table import Table, iter_records, read_table, write_table


@pytest.fixture
def people_csv(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text("name,born,city\nAda,1815,London\nAlan,1912,London\n\n", encoding="utf-8")
    return path


def test_read_csv_with_header(people_csv):
    table = read_table(people_csv)
    assert table.header == ["name", "born", "city"]
    assert table.rows == [["Ada", "1815", "London"], ["Alan", "1912", "London"]]
    assert table.column("born") == ["1815", "1912"]


def test_read_tsv_from_string():
    table = read_table("a\tb\n1\t2\n3\t4\n")
    assert table.dialect.delimiter == "\t"
    assert table.header == ["a", "b"]
    assert table.width == 2


def test_read_with_bom(tmp_path):
    path = tmp_path / "bom.csv"
    path.write_bytes("\ufeffx;y\n1;2\n".encode("utf-8"))
    table = read_table(path)
    assert table.header == ["x", "y"]


def test_header_override():
    table = read_table("1,2\n3,4\n", header=True)
    assert table.header == ["1", "2"]
    assert table.rows == [["3", "4"]]


def test_explicit_dialect():
    table = read_table("a|b\n1|2\n", dialect=Dialect("|"), header=False)
    assert table.rows == [["a", "b"], ["1", "2"]]


def test_column_errors():
    table = Table(None, [["a"]])
    with pytest.raises(KeyError):
        table.column("x")
    assert table.column(3) == [""]


def test_read_single_column_file(tmp_path):
    path = tmp_path / "ids.txt"
    path.write_text("id\nA-17\nB-22\nC-05\n", encoding="utf-8")
    table = read_table(path)
    assert table.width == 1
    assert table.rows[-1] == ["C-05"]


def test_iter_records_single_column():
    records = list(iter_records("email\nada@example.com\nalan@example.com\n"))
    assert records == [{"email": "ada@example.com"}, {"email": "alan@example.com"}]


def test_iter_records_pads_short_rows():
    records = list(iter_records("a,b,c\n1,2\n"))
    assert records == [{"a": "1", "b": "2", "c": ""}]


def test_write_table_round_trip():
    table = read_table("name;note\nAda;\"x; y\"\n")
    assert write_table(table) == 'name;note\nAda;"x; y"\n'
    assert write_table(table, Dialect(",")) == "name,note\nAda,x; y\n"
