import pytest

from exprcalc.errors import ArgumentError, NotAvailable


def test_len_upper_lower(ev):
    assert ev('LEN("héllo")') == 5
    assert ev('UPPER("abc")') == "ABC"
    assert ev('LOWER("ÄBC")') == "äbc"


def test_proper(ev):
    assert ev('PROPER("o\'neil SMITH-jones")') == "O'Neil Smith-Jones"


def test_trim_and_clean(ev):
    assert ev('TRIM("  a   b  ")') == "a b"
    assert ev('CLEAN("a" & CHAR(9) & "b")') == "ab"


def test_left_right_mid(ev):
    assert ev('LEFT("spreadsheet", 6)') == "spread"
    assert ev('RIGHT("spreadsheet", 5)') == "sheet"
    assert ev('RIGHT("abc", 0)') == ""
    assert ev('MID("spreadsheet", 7, 3)') == "she"


def test_find_is_case_sensitive(ev):
    assert ev('FIND("S", "this is SPARTA")') == 9
    with pytest.raises(ArgumentError):
        ev('FIND("x", "abc")')


def test_search_wildcards(ev):
    assert ev('SEARCH("s*a", "this is SPARTA")') == 4
    assert ev('SEARCH("?b", "aab")') == 2


def test_substitute(ev):
    assert ev('SUBSTITUTE("a-b-c", "-", "+")') == "a+b+c"
    assert ev('SUBSTITUTE("a-b-c", "-", "+", 2)') == "a-b+c"


def test_replace_and_rept(ev):
    assert ev('REPLACE("abcdef", 2, 3, "X")') == "aXef"
    assert ev('REPT("ab", 3)') == "ababab"


def test_concat_textjoin(ev):
    assert ev('CONCAT("a", {1, 2}, TRUE)') == "a12TRUE"
    assert ev('TEXTJOIN(", ", TRUE, {"a", "", "b"})') == "a, b"
    with pytest.raises(ArgumentError):
        ev('CONCATENATE("a", {1, 2})')


def test_char_code(ev):
    assert ev("CHAR(65)") == "A"
    assert ev('CODE("a")') == 97
    assert ev("UNICHAR(8364)") == "€"
    assert ev('UNICODE("€")') == 8364


def test_value_and_numbervalue(ev):
    assert ev('VALUE("1,234.5")') == 1234.5
    assert ev('VALUE("25%")') == 0.25
    assert ev('NUMBERVALUE("1.234,5", ",", ".")') == 1234.5
    with pytest.raises(ArgumentError):
        ev('VALUE("abc")')


def test_textbefore_textafter(ev):
    assert ev('TEXTBEFORE("a.b.c", ".")') == "a"
    assert ev('TEXTAFTER("a.b.c", ".", -1)') == "c"
    with pytest.raises(NotAvailable):
        ev('TEXTAFTER("abc", ".")')


def test_textsplit(ev):
    assert ev('TEXTSPLIT("a,b,,c", ",", TRUE)') == ["a", "b", "c"]


def test_exact(ev):
    assert ev('EXACT("a", "A")') is False


def test_prefix_suffix_contains(ev):
    assert ev('STARTSWITH("Invoice-17", "invoice")') is True
    assert ev('ENDSWITH("report.PDF", ".pdf")') is True
    assert ev('CONTAINS("Hello", "ELL")') is True


def test_padding(ev):
    assert ev('PADLEFT("7", 3, "0")') == "007"
    assert ev('PADRIGHT("ab", 4, ".")') == "ab.."


def test_regex_functions(ev):
    assert ev('REGEXMATCH("order 66", "\\d+")') is True
    assert ev('REGEXEXTRACT("id=42;", "id=(\\d+)")') == "42"
    assert ev('REGEXREPLACE("2024-03-15", "(\\d+)-(\\d+)-(\\d+)", "$3.$2.$1")') == "15.03.2024"


def test_invalid_regex(ev):
    with pytest.raises(ArgumentError) as info:
        ev('REGEXMATCH("a", "(")')
    assert "invalid regular expression" in info.value.message


def test_splitwords_and_reverse(ev):
    assert ev('SPLITWORDS("it\'s a test")') == ["it's", "a", "test"]
    assert ev('REVERSE("abc")') == "cba"
