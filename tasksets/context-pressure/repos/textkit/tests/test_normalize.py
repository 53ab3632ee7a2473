"""Tests for textkit.normalize."""

import pytest

from textkit.normalize import (
    casefold,
    normalize,
    normalize_quotes,
    normalize_unicode,
    normalize_whitespace,
    remove_control_chars,
    strip_accents,
)

# Every character that str.isspace() accepts, by name.  Text copied from
# word processors and web pages is full of these.
UNICODE_SPACES = {
    "space": " ",
    "tab": "\t",
    "newline": "\n",
    "carriage_return": "\r",
    "form_feed": "\f",
    "vertical_tab": "\v",
    "file_separator": "\x1c",
    "group_separator": "\x1d",
    "record_separator": "\x1e",
    "unit_separator": "\x1f",
    "next_line": "\x85",
    "no_break_space": "\u00a0",
    "ogham_space_mark": "\u1680",
    "en_quad": "\u2000",
    "em_quad": "\u2001",
    "en_space": "\u2002",
    "em_space": "\u2003",
    "three_per_em_space": "\u2004",
    "four_per_em_space": "\u2005",
    "six_per_em_space": "\u2006",
    "figure_space": "\u2007",
    "punctuation_space": "\u2008",
    "thin_space": "\u2009",
    "hair_space": "\u200a",
    "line_separator": "\u2028",
    "paragraph_separator": "\u2029",
    "narrow_no_break_space": "\u202f",
    "medium_mathematical_space": "\u205f",
    "ideographic_space": "\u3000",
}


@pytest.mark.parametrize("name", sorted(UNICODE_SPACES))
def test_normalize_whitespace_collapses_every_space(name):
    ch = UNICODE_SPACES[name]
    assert ch.isspace()
    text = f"{ch}Invoice{ch}{ch}No. 4471 {ch} due{ch}on delivery{ch}"
    assert normalize_whitespace(text) == "Invoice No. 4471 due on delivery"


@pytest.mark.parametrize("name", sorted(UNICODE_SPACES))
def test_normalize_whitespace_mixed_runs(name):
    ch = UNICODE_SPACES[name]
    text = f"Total: \t{ch} 12 {ch}\n items"
    assert normalize_whitespace(text) == "Total: 12 items"


def test_normalize_whitespace_basic():
    assert normalize_whitespace("  a \t b\n\n c  ") == "a b c"
    assert normalize_whitespace("") == ""


def test_normalize_whitespace_keep_newlines():
    text = "  first   line \n\n\n\n second\tline  \n\n"
    assert normalize_whitespace(text, keep_newlines=True) == "first line\n\nsecond line"


def test_normalize_whitespace_keep_newlines_leading_blank_lines():
    assert normalize_whitespace("\n\n a\n b", keep_newlines=True) == "a\nb"


def test_zero_width_space_is_not_whitespace():
    assert normalize_whitespace("a\u200bb") == "a\u200bb"


def test_normalize_unicode_forms():
    assert normalize_unicode("e\u0301") == "\u00e9"
    assert normalize_unicode("\u00e9", "nfd") == "e\u0301"
    assert normalize_unicode("\ufb01", "NFKC") == "fi"


def test_normalize_unicode_rejects_unknown_form():
    with pytest.raises(ValueError, match="unknown normalization form"):
        normalize_unicode("x", "NFX")


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Crème Brûlée", "Creme Brulee"),
        ("naïve façade", "naive facade"),
        ("Ångström", "Angstrom"),
        ("e\u0301", "e"),
        ("Søren Łódź", "Søren Łodz"),
        ("plain", "plain"),
    ],
    ids=["french", "diaeresis", "ring", "decomposed", "non_decomposable", "ascii"],
)
def test_strip_accents(text, expected):
    assert strip_accents(text) == expected


def test_normalize_quotes():
    assert normalize_quotes("\u201cHi\u201d, it\u2019s \u00abme\u00bb") == "\"Hi\", it's \"me\""


def test_remove_control_chars():
    assert remove_control_chars("a\x00b\x07c\u200bd\ne\tf") == "abcd\ne\tf"
    assert remove_control_chars("a\nb", keep="") == "ab"


def test_casefold():
    assert casefold("Straße") == "strasse"
    assert casefold("ΣΊΣΥΦΟΣ") == casefold("σίσυφος")


def test_normalize_pipeline_defaults():
    text = "  \u201cCAF\u00c9\u201d\u00a0\ufb01le \x00 "
    assert normalize(text) == '"café" file'


def test_normalize_pipeline_strip_accents():
    assert normalize("Crème  Brûlée", accents=False) == "creme brulee"


def test_normalize_pipeline_options_off():
    text = "A  \u2019B\u2019"
    assert normalize(text, lowercase=False, quotes=False, whitespace=False) == text
