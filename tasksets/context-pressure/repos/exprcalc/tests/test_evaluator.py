import datetime as dt

import pytest

from exprcalc import Calculator
from exprcalc.errors import (
    ArgumentError,
    DivisionByZero,
    EvalError,
    NameNotFound,
    RecursionLimit,
)


def test_arithmetic_precedence(ev):
    assert ev("1 + 2 * 3") == 7
    assert ev("(1 + 2) * 3") == 9
    assert ev("-2^2") == -4
    assert ev("2^3^2") == 512


def test_integer_division_stays_integer(ev):
    assert ev("6 / 3") == 2
    assert isinstance(ev("6 / 3"), int)
    assert ev("7 / 2") == 3.5


def test_division_by_zero(ev):
    with pytest.raises(DivisionByZero) as info:
        ev("1 / (2 - 2)")
    assert info.value.code == "#DIV/0!"


def test_percent(ev):
    assert ev("200 * 15%") == 30


def test_text_concatenation(ev):
    assert ev('"Total: " & 12 & " items"') == "Total: 12 items"
    assert ev('"flag=" & TRUE') == "flag=TRUE"


def test_text_comparison_is_case_insensitive(ev):
    assert ev('"abc" = "ABC"') is True
    assert ev('"apple" < "Banana"') is True


def test_mixed_type_ordering(ev):
    assert ev('1 < "a"') is True
    assert ev('"z" < TRUE') is True


def test_numeric_text_in_arithmetic(ev):
    assert ev('"12.5" * 2') == 25


def test_non_numeric_text_in_arithmetic(ev):
    with pytest.raises(ArgumentError) as info:
        ev('"abc" + 1')
    assert "expects a number" in info.value.message


def test_variables_are_case_insensitive(calc):
    calc.set("Price", 10)
    assert calc.evaluate("price * PRICE") == 100


def test_temporary_variables_do_not_leak(calc):
    assert calc.evaluate("x + 1", x=1) == 2
    with pytest.raises(NameNotFound):
        calc.evaluate("x")


def test_unknown_variable_has_position(calc):
    with pytest.raises(NameNotFound) as info:
        calc.evaluate("1 + missing")
    assert info.value.position.column == 5


def test_unknown_function_suggestion(calc):
    with pytest.raises(NameNotFound) as info:
        calc.evaluate("SUMM(1, 2)")
    assert "did you mean SUM?" in info.value.message


def test_function_used_as_variable(calc):
    with pytest.raises(NameNotFound) as info:
        calc.evaluate("PI + 1")
    assert "call it with parentheses" in info.value.message


def test_wrong_argument_count(calc):
    with pytest.raises(ArgumentError) as info:
        calc.evaluate("LEFT()")
    assert "LEFT expects 1 or 2 arguments, got 0" in info.value.message


def test_user_function(calc):
    calc.define("area(w, h) := w * h")
    assert calc.evaluate("area(3, 4)") == 12


def test_user_function_closure_sees_globals(calc):
    calc.run("vat := 19%\ngross(x) := x * (1 + vat)")
    assert calc.evaluate("gross(100)") == pytest.approx(119)


def test_user_function_parameters_shadow_globals(calc):
    calc.run("x := 100\ndouble(x) := x * 2")
    assert calc.evaluate("double(3)") == 6
    assert calc.get("x") == 100


def test_recursive_user_function(calc):
    calc.define("fac(n) := IF(n <= 1, 1, n * fac(n - 1))")
    assert calc.evaluate("fac(10)") == 3628800


def test_recursion_limit():
    calc = Calculator(max_depth=50)
    calc.define("down(n) := down(n + 1)")
    with pytest.raises(RecursionLimit):
        calc.evaluate("down(1)")


def test_user_function_arity(calc):
    calc.define("f(a, b) := a + b")
    with pytest.raises(ArgumentError) as info:
        calc.evaluate("f(1)")
    assert "f expects 2 arguments, got 1" in info.value.message


def test_cannot_redefine_builtin(calc):
    with pytest.raises(EvalError):
        calc.define("sum(x) := x")


def test_list_broadcasting(ev):
    assert ev("{1, 2, 3} * 2") == [2, 4, 6]
    assert ev("{1, 2} + {10, 20}") == [11, 22]
    assert ev("{1, 5, 3} > 2") == [False, True, True]


def test_list_length_mismatch(ev):
    with pytest.raises(ArgumentError):
        ev("{1, 2} + {1, 2, 3}")


def test_date_arithmetic(ev):
    assert ev("DATE(2024, 2, 28) + 2") == dt.date(2024, 3, 1)
    assert ev("DATE(2024, 3, 1) - DATE(2024, 2, 1)") == 29


def test_lazy_if_skips_other_branch(ev):
    assert ev("IF(TRUE, 1, 1/0)") == 1


def test_run_returns_each_result(calc):
    results = calc.run("a := 2\nb := a * 3\n// a comment line\na + b")
    assert results == [2, 6, 8]


def test_check_reports_problems(calc):
    problems = calc.check("FOO(x) + LEFT()")
    assert "Unknown function 'FOO'" in problems
    assert "Undefined variable 'x'" in problems
    assert any("LEFT expects" in p for p in problems)


def test_dependencies(calc):
    assert calc.dependencies("a + SUM(b, C) * a") == {"a", "b", "c"}


def test_try_evaluate_returns_error(calc):
    err = calc.try_evaluate("1/0")
    assert isinstance(err, DivisionByZero)


def test_parse_cache_is_bounded(calc):
    for i in range(Calculator.CACHE_SIZE + 10):
        calc.evaluate(f"{i} + 1")
    assert len(calc._cache) == Calculator.CACHE_SIZE


def test_map_and_reduce_with_user_function(calc):
    calc.define("sq(x) := x * x")
    calc.define("add(a, b) := a + b")
    assert calc.evaluate('MAP({1, 2, 3}, "sq")') == [1, 4, 9]
    assert calc.evaluate('REDUCE(0, {1, 2, 3}, "add")') == 6


def test_let(ev):
    assert ev("LET(x, 2, y, x + 1, x * y)") == 6
