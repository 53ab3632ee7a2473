import pytest

from exprcalc.errors import LexError
from exprcalc.lexer import Lexer, Syntax, tokenize


def kinds(source, syntax=Syntax()):
    return [t.kind for t in tokenize(source, syntax)]


def test_simple_tokens():
    assert kinds("SUM(1, 2)") == ["NAME", "LPAREN", "NUMBER", "COMMA", "NUMBER", "RPAREN", "EOF"]


def test_integer_and_decimal_numbers():
    tokens = tokenize("42 3.25 .5")
    assert [t.value for t in tokens[:3]] == [42, 3.25, 0.5]
    assert isinstance(tokens[0].value, int)


def test_underscore_digit_separator():
    assert tokenize("1_000_000")[0].value == 1000000


def test_exponent_number():
    tokens = tokenize("1e3 2.5E+2")
    assert tokens[0].value == 1000.0
    assert tokens[1].value == 250.0


def test_number_followed_by_letters_is_an_error():
    with pytest.raises(LexError) as info:
        tokenize("12abc")
    assert "Invalid number literal" in info.value.message


def test_string_with_escaped_quote():
    token = tokenize('"say ""hi"""')[0]
    assert token.kind == "STRING"
    assert token.value == 'say "hi"'


def test_unterminated_string_reports_start():
    with pytest.raises(LexError) as info:
        tokenize('1 + "abc')
    assert info.value.position.column == 5


def test_two_character_operators():
    values = [t.value for t in tokenize("a <= b <> c >= d != e == f") if t.kind == "OP"]
    assert values == ["<=", "<>", ">=", "<>", "="]


def test_assign_token():
    assert kinds("x := 1") == ["NAME", "ASSIGN", "NUMBER", "EOF"]


def test_unit_annotation():
    tokens = tokenize("5[km/h]")
    assert tokens[1].kind == "UNIT"
    assert tokens[1].value == "km/h"


def test_unterminated_unit():
    with pytest.raises(LexError):
        tokenize("5[km")


def test_newline_only_outside_brackets():
    assert kinds("a := 1\nb := (1 +\n 2)") == [
        "NAME", "ASSIGN", "NUMBER", "NEWLINE", "NAME", "ASSIGN",
        "LPAREN", "NUMBER", "OP", "NUMBER", "RPAREN", "EOF",
    ]


def test_comments_are_skipped():
    assert kinds("1 + 2 // total") == ["NUMBER", "OP", "NUMBER", "EOF"]


def test_dotted_function_name():
    token = tokenize("ERROR.TYPE(1)")[0]
    assert token.value == "ERROR.TYPE"


def test_unexpected_character():
    with pytest.raises(LexError) as info:
        tokenize("1 $ 2")
    assert "Unexpected character '$'" in info.value.message
    assert info.value.position.column == 3


def test_positions_are_one_based():
    tokens = tokenize("a +\n  b", Syntax())
    b = [t for t in tokens if t.value == "b"][0]
    assert (b.position.line, b.position.column) == (2, 3)


def test_semicolon_token():
    assert kinds("f(1;2)") == ["NAME", "LPAREN", "NUMBER", "SEMICOLON", "NUMBER", "RPAREN", "EOF"]


def test_lexer_keeps_source_text():
    tokens = Lexer("ROUND( 1.50 , 1)").tokenize()
    assert tokens[2].text == "1.50"
