import pytest

from exprcalc.errors import NotAvailable, RefError


@pytest.fixture
def table(calc):
    calc.set("rates", [[1, "low"], [10, "mid"], [100, "high"]])
    calc.set("names", ["ann", "Bob", "cy"])
    calc.set("ages", [31, 45, 27])
    return calc


def test_match_modes(ev):
    assert ev('MATCH("b", {"a", "B", "c"}, 0)') == 2
    assert ev("MATCH(15, {1, 10, 100})") == 2
    assert ev("MATCH(15, {100, 10, 1}, -1)") == 1
    with pytest.raises(NotAvailable):
        ev("MATCH(5, {10, 20}, 0)")


def test_index(table):
    assert table.evaluate("INDEX(rates, 2, 2)") == "mid"
    assert table.evaluate("INDEX(names, 3)") == "cy"
    assert table.evaluate("INDEX(rates, 0, 1)") == [1, 10, 100]
    with pytest.raises(RefError):
        table.evaluate("INDEX(names, 9)")


def test_vlookup(table):
    assert table.evaluate("VLOOKUP(50, rates, 2)") == "mid"
    assert table.evaluate("VLOOKUP(100, rates, 2, FALSE)") == "high"
    with pytest.raises(NotAvailable):
        table.evaluate("VLOOKUP(50, rates, 2, FALSE)")


def test_xlookup(table):
    assert table.evaluate('XLOOKUP("bob", names, ages)') == 45
    assert table.evaluate('XLOOKUP("zed", names, ages, -1)') == -1
    assert table.evaluate('XLOOKUP("c*", names, ages, "", 2)') == 27
    assert table.evaluate("XLOOKUP(30, ages, names, \"\", 1)") == "ann"


def test_hlookup_and_lookup(ev):
    assert ev('HLOOKUP("b", {{"a", "b"}, {1, 2}}, 2, FALSE)') == 2
    assert ev('LOOKUP(7, {1, 5, 10}, {"x", "y", "z"})') == "y"


def test_sort_unique(ev):
    assert ev('SORT({3, "b", 1, "A", TRUE})') == [1, 3, "A", "b", True]
    assert ev("SORT({3, 1, 2}, TRUE)") == [3, 2, 1]
    assert ev('UNIQUE({"a", "A", 1, 1, 2})') == ["a", 1, 2]
    assert ev('COUNTUNIQUE({"a", "A", "b"})') == 2


def test_sortby(table):
    assert table.evaluate("SORTBY(names, ages)") == ["cy", "ann", "Bob"]


def test_filter(table):
    assert table.evaluate("FILTER(names, ages > 30)") == ["ann", "Bob"]
    assert table.evaluate('FILTER(names, ages > 90, "none")') == "none"


def test_sequence_and_range(ev):
    assert ev("SEQUENCE(4, 10, 5)") == [10, 15, 20, 25]
    assert ev("RANGE(5)") == [0, 1, 2, 3, 4]
    assert ev("RANGE(10, 4, -3)") == [10, 7]


def test_take_drop_slice(ev):
    assert ev("TAKE({1, 2, 3, 4}, 2)") == [1, 2]
    assert ev("TAKE({1, 2, 3, 4}, -1)") == [4]
    assert ev("DROP({1, 2, 3, 4}, 3)") == [4]
    assert ev("SLICE({1, 2, 3, 4, 5}, 2, -2)") == [2, 3, 4]


def test_misc_list_functions(ev):
    assert ev("APPEND({1, 2}, 3, {4})") == [1, 2, 3, 4]
    assert ev("FLATTEN({1, {2, {3}}})") == [1, 2, 3]
    assert ev("FIRST({7, 8})") == 7
    assert ev("LAST({7, 8})") == 8
    assert ev("TRANSPOSE({{1, 2}, {3, 4}})") == [[1, 3], [2, 4]]
    assert ev("COLUMNS({{1, 2, 3}})") == 3
    assert ev('ISIN("B", {"a", "b"})') is True


def test_map_with_builtin(ev):
    assert ev('MAP({-1, 2}, "ABS")') == [1, 2]
