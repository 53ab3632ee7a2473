"""Tests for textkit.distance."""

import pytest

from textkit.distance import (
    closest,
    damerau_levenshtein,
    hamming,
    jaro,
    jaro_winkler,
    levenshtein,
    similarity,
)


@pytest.mark.parametrize(
    "a,b,expected",
    [
        ("kitten", "sitting", 3),
        ("flaw", "lawn", 2),
        ("", "abc", 3),
        ("abc", "", 3),
        ("same", "same", 0),
        ("gumbo", "gambol", 2),
    ],
)
def test_levenshtein(a, b, expected):
    assert levenshtein(a, b) == expected
    assert levenshtein(b, a) == expected


def test_levenshtein_substitution_cost():
    assert levenshtein("abc", "abd", substitution_cost=2) == 2
    assert levenshtein("kitten", "sitting", substitution_cost=2) == 5


def test_damerau_levenshtein():
    assert damerau_levenshtein("ab", "ba") == 1
    assert levenshtein("ab", "ba") == 2
    assert damerau_levenshtein("CA", "ABC") == 3
    assert damerau_levenshtein("", "xy") == 2


def test_hamming():
    assert hamming("karolin", "kathrin") == 3
    with pytest.raises(ValueError, match="equal lengths"):
        hamming("a", "ab")


@pytest.mark.parametrize(
    "a,b,expected",
    [
        ("MARTHA", "MARHTA", 0.9444),
        ("DWAYNE", "DUANE", 0.8222),
        ("DIXON", "DICKSONX", 0.7667),
        ("CRATE", "TRACE", 0.7333),
        ("abc", "xyz", 0.0),
        ("", "", 1.0),
        ("a", "", 0.0),
    ],
)
def test_jaro(a, b, expected):
    assert jaro(a, b) == pytest.approx(expected, abs=1e-4)


@pytest.mark.parametrize(
    "a,b,expected",
    [
        ("MARTHA", "MARHTA", 0.9611),
        ("DWAYNE", "DUANE", 0.84),
        ("DIXON", "DICKSONX", 0.8133),
        ("CRATE", "TRACE", 0.7333),
    ],
)
def test_jaro_winkler(a, b, expected):
    assert jaro_winkler(a, b) == pytest.approx(expected, abs=1e-4)


def test_jaro_winkler_is_symmetric():
    assert jaro_winkler("MARTHA", "MARHTA") == jaro_winkler("MARHTA", "MARTHA")


def test_jaro_winkler_identical():
    assert jaro_winkler("textkit", "textkit") == 1.0


def test_jaro_winkler_rejects_large_scale():
    with pytest.raises(ValueError):
        jaro_winkler("a", "b", prefix_scale=0.3)


def test_similarity():
    assert similarity("", "") == 1.0
    assert similarity("abcd", "abcf") == 0.75


def test_closest():
    words = ["apple", "apply", "ample", "maple"]
    assert closest("appel", words) == "apple"
    assert closest("xyz", words, cutoff=0.9) is None
    assert closest("ampel", words, scorer=similarity) == "ample"
