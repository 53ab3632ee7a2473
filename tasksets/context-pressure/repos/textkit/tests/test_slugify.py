"""Tests for textkit.slugify."""

import pytest

from textkit.slugify import slugify, transliterate, unique_slug


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Hello, World!", "hello-world"),
        ("  leading and trailing  ", "leading-and-trailing"),
        ("Crème Brûlée & Co.", "creme-brulee-and-co"),
        ("Straße in Łódź", "strasse-in-lodz"),
        ("C'est déjà l'été", "c-est-deja-l-ete"),
        ("100% pure", "100-pure"),
        ("ﬁnal ﬂight", "final-flight"),
        ("---", ""),
    ],
    ids=["punctuation", "trim", "accents", "transliteration", "apostrophes",
         "digits", "ligatures", "only_separators"],
)
def test_slugify(text, expected):
    assert slugify(text) == expected


def test_custom_separator():
    assert slugify("Hello big World", "_") == "hello_big_world"


def test_keep_case():
    assert slugify("Hello World", lowercase=False) == "Hello-World"


def test_stopwords():
    assert slugify("The Lord of the Rings", stopwords=["the", "of"]) == "lord-rings"


def test_allow_unicode():
    assert slugify("Привет, мир!", allow_unicode=True) == "привет-мир"
    assert slugify("Привет, мир!") == ""


def test_max_length_cuts_at_word_boundary():
    assert slugify("Crème Brûlée & Co.", max_length=12) == "creme-brulee"
    assert slugify("Crème Brûlée & Co.", max_length=15) == "creme-brulee"


def test_max_length_single_long_word():
    assert slugify("supercalifragilistic", max_length=5) == "super"


def test_max_length_must_be_positive():
    with pytest.raises(ValueError):
        slugify("x", max_length=0)


def test_transliterate():
    assert transliterate("Ærø Þór œuvre") == "AEro Thor oeuvre"


def test_unique_slug():
    assert unique_slug("Hello", []) == "hello"
    assert unique_slug("Hello", ["hello"]) == "hello-2"
    assert unique_slug("Hello", ["hello", "hello-2", "hello-3"]) == "hello-4"
