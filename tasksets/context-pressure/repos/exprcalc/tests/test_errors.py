from exprcalc import Calculator
from exprcalc.errors import ParseError, Position, locate, render_error


def test_locate():
    assert locate("ab\ncd", 4) == Position(4, 2, 2)
    assert locate("abc", 0) == Position(0, 1, 1)


def test_render_error_caret():
    text = render_error("1 + * 2", ParseError("Unexpected '*'", locate("1 + * 2", 4)))
    assert text.splitlines() == [
        "ParseError: Unexpected '*' (at line 1, column 5)",
        "  1 | 1 + * 2",
        "    |     ^",
    ]


def test_render_error_second_line():
    source = "x := 1\ny := (x +"
    calc = Calculator()
    try:
        calc.run(source)
    except ParseError as exc:
        text = render_error(source, exc)
    assert "  2 | y := (x +" in text


def test_explain_evaluation_error():
    text = Calculator().explain("10 / (5 - 5)")
    assert text.startswith("DivisionByZero: Division by zero")
    assert text.splitlines()[-1].endswith("^")


def test_error_codes():
    calc = Calculator()
    assert calc.try_evaluate("1/0").code == "#DIV/0!"
    assert calc.try_evaluate("nope").code == "#NAME?"
    assert calc.try_evaluate("SQRT(-1)").code == "#NUM!"
    assert calc.try_evaluate('MATCH(1, {2}, 0)').code == "#N/A"
