"""The deprecated 1.x tokenizer must keep producing exactly the old tokens."""

import pytest

from textkit.legacy import tokenizer as legacy


def test_warns():
    with pytest.deprecated_call():
        legacy.word_tokenize("x")


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
class TestLegacyTokens:
    def test_contractions_not_split(self):
        assert legacy.word_tokenize("Don't stop") == ["Don't", "stop"]

    def test_decimals(self):
        assert legacy.word_tokenize("pi is 3.14") == ["pi", "is", "3.14"]

    def test_hyphens_split(self):
        assert legacy.word_tokenize("well-known") == ["well", "-", "known"]

    def test_lowercase(self):
        assert legacy.word_tokenize("A B", lowercase=True) == ["a", "b"]

    def test_tokenize_lines(self):
        assert legacy.tokenize_lines(["a b", "C."], lowercase=True) == [["a", "b"], ["c", "."]]
