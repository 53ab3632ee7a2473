import pytest

from textutils import slugify, strip_accents


def test_basic():
    assert slugify("Hello, World!") == "hello-world"


def test_accents():
    assert strip_accents("Crème brûlée") == "Creme brulee"
    assert slugify("Straße in Łódź") == "strasse-in-lodz"


def test_custom_separator():
    assert slugify("  Many   spaces here ", separator="_") == "many_spaces_here"


def test_drops_non_latin():
    assert slugify("Tokyo 東京") == "tokyo"


def test_max_length_cuts_at_word():
    assert slugify("the quick brown fox", max_length=12) == "the-quick"


def test_max_length_single_long_word():
    assert slugify("supercalifragilistic", max_length=5) == "super"


def test_empty_separator_rejected():
    with pytest.raises(ValueError):
        slugify("x", separator="")
