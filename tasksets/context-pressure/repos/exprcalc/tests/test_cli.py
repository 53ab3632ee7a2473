import io

from exprcalc.cli import main, repl
from exprcalc.calculator import Calculator


def run(*argv):
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def test_evaluate_formula():
    assert run("ROUND(10 / 4, 1)") == (0, "2.5\n", "")


def test_variables():
    code, out, _ = run("--var", "price=19.99", "--var", "qty=3", "price * qty")
    assert code == 0
    assert out.strip() == "59.97"


def test_error_is_rendered():
    code, _, err = run("1 + (2")
    assert code == 1
    assert "ParseError" in err
    assert "^" in err


def test_function_listing():
    code, out, _ = run("--functions", "logic")
    assert code == 0
    assert "IFERROR(value, value_if_error)" in out


def test_help_function():
    code, out, _ = run("--help-function", "xlookup")
    assert code == 0
    assert out.startswith("XLOOKUP(lookup_value")


def test_script(tmp_path):
    script = tmp_path / "budget.calc"
    script.write_text("rent := 1200\nfood := 450\nrent + food\n", encoding="utf-8")
    code, out, _ = run("--script", str(script), "--thousands")
    assert code == 0
    assert out.splitlines() == ["1,200", "450", "1,650"]


def test_repl():
    out = io.StringIO()
    repl(Calculator(), out=out, inp=io.StringIO("x := 2\nx * 21\n1 +\nquit\n"))
    lines = out.getvalue().splitlines()
    assert lines[0:2] == ["2", "42"]
    assert lines[2].startswith("ParseError")
