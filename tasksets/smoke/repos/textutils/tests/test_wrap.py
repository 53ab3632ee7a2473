import pytest

from textutils import fill, truncate, wrap

TEXT = "The quick brown fox jumps over the lazy dog"


def test_wrap_respects_width():
    for width in range(5, 20):
        lines = wrap(TEXT, width=width)
        assert all(len(line) <= width for line in lines), (width, lines)


def test_wrap_word_that_just_fits():
    assert wrap("aaaa bbbbb cc", width=9) == ["aaaa", "bbbbb cc"]


def test_wrap_exact_lines():
    assert wrap(TEXT, width=15) == ["The quick brown", "fox jumps over", "the lazy dog"]


def test_wrap_breaks_long_words():
    assert wrap("abcdefghij", width=4) == ["abcd", "efgh", "ij"]


def test_wrap_keeps_long_words():
    assert wrap("a abcdefghij b", width=4, break_long_words=False) == ["a", "abcdefghij", "b"]


def test_wrap_invalid_width():
    with pytest.raises(ValueError):
        wrap("x", width=0)


def test_fill():
    assert fill("one two three", width=7) == "one two\nthree"


def test_truncate():
    assert truncate("short", 10) == "short"
    assert truncate("The quick brown fox", 12) == "The quick…"
    assert truncate("abcdefghij", 5) == "abcd…"
