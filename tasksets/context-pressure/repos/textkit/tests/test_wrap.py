"""Tests for textkit.wrap."""

import pytest

from textkit.wrap import dedent, fill, indent, justify, justify_line, shorten, wrap

FOX = "The quick brown fox jumps over the lazy dog"


def test_wrap_basic():
    assert wrap(FOX, 15) == ["The quick brown", "fox jumps over", "the lazy dog"]


def test_wrap_exact_width_fits():
    assert wrap("aaaa bbbb", 9) == ["aaaa bbbb"]
    assert wrap("aaaa bbbb", 8) == ["aaaa", "bbbb"]


def test_wrap_collapses_whitespace():
    assert wrap("a  b\n\nc\td", 70) == ["a b c d"]


def test_wrap_empty():
    assert wrap("", 10) == []
    assert wrap("   ", 10) == []


def test_wrap_initial_indent():
    assert wrap(FOX, 16, initial_indent="* ") == [
        "* The quick", "brown fox jumps", "over the lazy", "dog",
    ]


def test_wrap_hanging_indent():
    assert wrap(FOX, 16, initial_indent="1. ", subsequent_indent="   ") == [
        "1. The quick", "   brown fox", "   jumps over", "   the lazy dog",
    ]


def test_wrap_breaks_long_words():
    assert wrap("abcdefghijkl xy", 5) == ["abcde", "fghij", "kl xy"]


def test_wrap_long_word_without_breaking():
    assert wrap("a abcdefghij b", 5, break_long_words=False) == ["a", "abcdefghij", "b"]


def test_wrap_rejects_bad_width():
    with pytest.raises(ValueError):
        wrap("x", 0)
    with pytest.raises(ValueError):
        wrap("x", 4, initial_indent="    ")


def test_fill_joins_lines():
    assert fill(FOX, 15) == "The quick brown\nfox jumps over\nthe lazy dog"


def test_fill_initial_indent():
    assert fill("one two three", 9, initial_indent="> ") == "> one two\nthree"


def test_fill_single_line():
    assert fill("short", 70, subsequent_indent="  ") == "short"


def test_justify_line():
    assert justify_line("a bb c", 10) == "a   bb   c"
    assert justify_line("a b c d", 10) == "a  b  c  d"
    assert justify_line("a b c", 10) == "a    b   c"
    assert justify_line("single", 10) == "single"
    assert justify_line("  a b", 7) == "  a   b"


def test_justify_paragraphs():
    text = FOX + "\n\n" + "Pack my box with five dozen liquor jugs"
    assert justify(text, 16) == (
        "The  quick brown\n"
        "fox  jumps  over\n"
        "the lazy dog\n"
        "\n"
        "Pack my box with\n"
        "five       dozen\n"
        "liquor jugs"
    )


def test_shorten():
    assert shorten("Hello  world!", 12) == "Hello world!"
    assert shorten("Hello world!", 11) == "Hello [...]"
    assert shorten("Hello world!", 6) == "[...]"


def test_shorten_custom_placeholder():
    assert shorten(FOX, 20, placeholder="...") == "The quick brown..."


def test_indent_and_dedent():
    text = "a\n\n  b\n"
    assert indent(text, "> ") == "> a\n\n>   b\n"
    assert indent(text, "> ", blank_lines=True) == "> a\n> \n>   b\n"
    assert dedent("    x\n      y\n\n    z\n") == "x\n  y\n\nz\n"
