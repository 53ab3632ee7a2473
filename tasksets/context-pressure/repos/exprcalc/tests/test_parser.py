import pytest

from exprcalc.errors import ParseError
from exprcalc.nodes import Assign, Binary, Call, FunctionDef, ListLiteral, free_names
from exprcalc.parser import parse, parse_program, parse_statement


def norm(source):
    return str(parse(source))


@pytest.mark.parametrize(
    "source, expected",
    [
        ("1+2*3", "1 + 2 * 3"),
        ("(1+2)*3", "(1 + 2) * 3"),
        ("2^3^2", "2^3^2"),
        ("(2^3)^2", "(2^3)^2"),
        ("-x^2", "-x^2"),
        ("a-b-c", "a - b - c"),
        ("a-(b-c)", "a - (b - c)"),
        ("\"a\"&b&1", '"a" & b & 1'),
        ("x>=1", "x >= 1"),
        ("50%*2", "50% * 2"),
        ("5[km] to [mi]", "5[km] to [mi]"),
    ],
    ids=["mul", "parens", "pow_right", "pow_left_paren", "neg_pow", "sub_left",
         "sub_paren", "concat", "compare", "percent", "convert"],
)
def test_normalized_form(source, expected):
    assert norm(source) == expected


def test_power_is_right_associative():
    node = parse("2^3^2")
    assert isinstance(node, Binary) and node.op == "^"
    assert isinstance(node.right, Binary)


def test_leading_equals_is_ignored():
    assert norm("=1+1") == "1 + 1"


def test_call_arguments():
    node = parse("IF(a > 1, \"big\", \"small\")")
    assert isinstance(node, Call)
    assert len(node.args) == 3


def test_empty_call_and_list():
    assert parse("PI()").args == ()
    assert parse("{}").items == ()


def test_list_literal():
    node = parse("{1, 2, {3, 4}}")
    assert isinstance(node, ListLiteral)
    assert isinstance(node.items[2], ListLiteral)


def test_missing_closing_paren_mentions_opener():
    with pytest.raises(ParseError) as info:
        parse("1 + (2 * 3")
    assert "Expected ')' to close '(' opened at line 1, column 5" in info.value.message


def test_unclosed_call():
    with pytest.raises(ParseError) as info:
        parse("SUM(1, 2")
    assert "call to SUM" in info.value.message


def test_missing_argument():
    with pytest.raises(ParseError) as info:
        parse("SUM(1,,2)")
    assert "Missing argument 2 in call to SUM" in info.value.message


def test_missing_operator():
    with pytest.raises(ParseError) as info:
        parse("2 x")
    assert "Missing operator before name 'x'" in info.value.message


def test_chained_comparison_rejected():
    with pytest.raises(ParseError) as info:
        parse("1 < x < 3")
    assert "AND(" in info.value.message


def test_unexpected_end():
    with pytest.raises(ParseError) as info:
        parse("1 +")
    assert "Unexpected end of formula" in info.value.message


def test_unmatched_paren():
    with pytest.raises(ParseError) as info:
        parse("1 + 2)")
    assert "Unmatched ')'" in info.value.message


def test_assignment_statement():
    node = parse_statement("total := a + b")
    assert isinstance(node, Assign)
    assert node.name == "total"


def test_function_definition():
    node = parse_statement("area(w, h) := w * h")
    assert isinstance(node, FunctionDef)
    assert node.params == ("w", "h")
    assert free_names(node) == set()


def test_duplicate_parameter():
    with pytest.raises(ParseError):
        parse_statement("f(x, X) := x")


def test_assign_inside_expression_rejected():
    with pytest.raises(ParseError) as info:
        parse("1 + x := 2")
    assert "':='" in info.value.message


def test_program_statements():
    nodes = parse_program("a := 1\nb := a + 1\n\nb * 2")
    assert len(nodes) == 3


def test_to_requires_unit():
    with pytest.raises(ParseError) as info:
        parse("5[km] to mi")
    assert "Expected a unit in brackets" in info.value.message


def test_newline_in_single_expression():
    with pytest.raises(ParseError) as info:
        parse("1\n2")
    assert "Calculator.run()" in info.value.message
