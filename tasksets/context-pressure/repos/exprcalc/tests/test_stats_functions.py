import pytest

from exprcalc.errors import DivisionByZero, NotAvailable, NumError

# Aggregates over lists, as they come from a sheet column: zeros are real
# values, blanks and text are skipped.
AGGREGATE_CASES = [
    ("sum_basic", "SUM({1, 2, 3})", 6),
    ("sum_skips_text", 'SUM({1, "x", 2})', 3),
    ("sum_direct_args", "SUM(1, 2, {3, 4})", 10),
    ("average_basic", "AVERAGE({2, 4, 9})", 5),
    ("average_with_zero_score", "AVERAGE(scores)", 56.666666666666664),
    ("average_all_zero", "AVERAGE({0, 0})", 0),
    ("average_zero_and_blank", "AVERAGE({0, blank, 4})", 2),
    ("min_with_zero", "MIN({0, 5, 3})", 0),
    ("max_negatives_and_zero", "MAX({-2, 0, -5})", 0),
    ("min_direct_zero", "MIN(0, 5)", 0),
    ("median_with_zeros", "MEDIAN({0, 0, 5})", 0),
    ("product_with_zero", "PRODUCT({2, 0, 3})", 0),
    ("stdevp_with_zero", "STDEVP({0, 2})", 1),
    ("var_with_zero", "VAR({0, 2, 4})", 4),
    ("count_with_zero", "COUNT({0, 1, 2})", 3),
    ("counta_basic", 'COUNTA({1, "a", blank})', 2),
    ("large_with_zero", "LARGE({-1, 0, -3}, 1)", 0),
    ("small_with_zero", "SMALL({4, 0, 7}, 1)", 0),
    ("percentile_with_zero", "PERCENTILE({0, 10}, 0.5)", 5),
    ("averagea_text_counts", 'AVERAGEA({1, "x", 2})', 1),
]


@pytest.mark.parametrize(
    "formula, expected",
    [case[1:] for case in AGGREGATE_CASES],
    ids=[case[0] for case in AGGREGATE_CASES],
)
def test_aggregate_table(calc, formula, expected):
    calc.set("scores", [80, 0, 90])
    calc.set("blank", None)
    assert calc.evaluate(formula) == pytest.approx(expected)


def test_average_of_nothing_is_div0(ev):
    with pytest.raises(DivisionByZero):
        ev('AVERAGE({"a", "b"})')


def test_mode(ev):
    assert ev("MODE({1, 2, 2, 3, 3})") == 2
    with pytest.raises(NotAvailable):
        ev("MODE({1, 2, 3})")


def test_stdev(ev):
    assert ev("STDEV({2, 4, 4, 4, 5, 5, 7, 9})") == pytest.approx(2.138089935)


def test_quartile(ev):
    assert ev("QUARTILE({1, 2, 3, 4, 5}, 1)") == 2
    with pytest.raises(NumError):
        ev("QUARTILE({1, 2}, 5)")


def test_rank(ev):
    assert ev("RANK(7, {3, 7, 9, 7})") == 2
    assert ev("RANK(7, {3, 7, 9, 7}, TRUE)") == 2
    assert ev("RANK(9, {3, 7, 9, 7})") == 1


def test_sumif_and_countif(calc):
    calc.set("region", ["North", "South", "north", "East"])
    calc.set("sales", [100, 200, 50, 75])
    assert calc.evaluate('SUMIF(region, "North", sales)') == 150
    assert calc.evaluate('SUMIF(sales, ">=75")') == 375
    assert calc.evaluate('COUNTIF(region, "*th")') == 3
    assert calc.evaluate('COUNTIF(region, "<>East")') == 3


def test_sumifs_countifs(calc):
    calc.set("region", ["North", "South", "North", "East"])
    calc.set("sales", [100, 200, 50, 75])
    assert calc.evaluate('SUMIFS(sales, region, "North", sales, ">60")') == 100
    assert calc.evaluate('COUNTIFS(region, "North", sales, "<60")') == 1


def test_averageif(ev):
    assert ev('AVERAGEIF({1, 5, 10}, ">2")') == 7.5


def test_geomean_harmean(ev):
    assert ev("GEOMEAN({1, 4})") == pytest.approx(2)
    assert ev("HARMEAN({1, 4})") == pytest.approx(1.6)


def test_regression(ev):
    assert ev("SLOPE({2, 4, 6}, {1, 2, 3})") == pytest.approx(2)
    assert ev("INTERCEPT({3, 5, 7}, {1, 2, 3})") == pytest.approx(1)
    assert ev("FORECAST(4, {2, 4, 6}, {1, 2, 3})") == pytest.approx(8)
    assert ev("CORREL({1, 2, 3}, {2, 4, 6})") == pytest.approx(1)


def test_sum_of_quantities(ev):
    result = ev("SUM({1[km], 500[m]})")
    assert result.unit.symbol == "km"
    assert result.value == pytest.approx(1.5)
