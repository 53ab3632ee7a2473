"""Tests for textkit.tokenize."""

import pytest

from textkit import word_tokenize
from textkit.tokenize import ABBREVIATIONS, Token, ngrams, span_tokenize, split_sentences


def test_words_and_punctuation():
    assert word_tokenize("Hello, world!") == ["Hello", ",", "world", "!"]


def test_clitics_are_split():
    assert word_tokenize("Don't panic, it's fine.") == [
        "Do", "n't", "panic", ",", "it", "'s", "fine", ".",
    ]


def test_more_clitics():
    assert word_tokenize("We're sure they'll say I'd've") == [
        "We", "'re", "sure", "they", "'ll", "say", "I'd", "'ve",
    ]


def test_curly_apostrophe_clitic():
    assert word_tokenize("can\u2019t") == ["ca", "n\u2019t"]


def test_hyphenated_words_stay_together():
    assert word_tokenize("a well-known state-of-the-art tool") == [
        "a", "well-known", "state-of-the-art", "tool",
    ]


def test_thousands_separators():
    assert word_tokenize("1,000,000 people") == ["1,000,000", "people"]


def test_percentages():
    assert word_tokenize("up 50% today") == ["up", "50%", "today"]


def test_list_of_integers_keeps_commas_as_tokens():
    assert word_tokenize("1, 2, 3") == ["1", ",", "2", ",", "3"]


def test_urls_and_emails():
    text = "See https://example.com/a?b=1, or mail info@example.co.uk."
    assert word_tokenize(text) == [
        "See", "https://example.com/a?b=1", ",", "or", "mail", "info@example.co.uk", ".",
    ]


def test_ellipsis_and_dashes():
    assert word_tokenize("Wait... no--yes") == ["Wait", "...", "no", "--", "yes"]


def test_lowercase_option():
    assert word_tokenize("The CAT", lowercase=True) == ["the", "cat"]


def test_empty_and_whitespace_only():
    assert word_tokenize("") == []
    assert word_tokenize(" \n\t ") == []


def test_unicode_letters():
    assert word_tokenize("Ærøskøbing naïve café") == ["Ærøskøbing", "naïve", "café"]


def test_span_offsets_round_trip():
    text = "He said: don't go to https://x.org now!"
    for token in span_tokenize(text):
        assert text[token.start:token.end] == token.text


def test_span_kinds():
    kinds = [(t.text, t.kind) for t in span_tokenize("I won't pay 20% to a@b.io")]
    assert kinds == [
        ("I", "word"), ("wo", "word"), ("n't", "clitic"), ("pay", "word"),
        ("20%", "number"), ("to", "word"), ("a@b.io", "email"),
    ]


def test_token_len():
    assert len(Token("abc", 4, 7, "word")) == 3


def test_split_sentences_basic():
    assert split_sentences("It rained. We stayed in! Did you? Yes.") == [
        "It rained.", "We stayed in!", "Did you?", "Yes.",
    ]


def test_split_sentences_abbreviations():
    text = "Dr. Smith met Mr. Jones at 5 p.m. yesterday. They talked."
    assert split_sentences(text) == [
        "Dr. Smith met Mr. Jones at 5 p.m. yesterday.", "They talked.",
    ]


def test_split_sentences_initials():
    assert split_sentences("J. R. R. Tolkien wrote it. It sold well.") == [
        "J. R. R. Tolkien wrote it.", "It sold well.",
    ]


def test_split_sentences_quotes():
    assert split_sentences('He said "Stop." Then he left.') == [
        'He said "Stop."', "Then he left.",
    ]


def test_split_sentences_no_split_before_lowercase():
    assert split_sentences("See fig. 3 and the notes. Done.") == [
        "See fig. 3 and the notes.", "Done.",
    ]


def test_split_sentences_custom_abbreviations():
    text = "Call Acct. Services today. Thanks."
    assert split_sentences(text) == ["Call Acct.", "Services today.", "Thanks."]
    assert split_sentences(text, abbreviations=["acct."]) == [
        "Call Acct. Services today.", "Thanks.",
    ]


def test_split_sentences_empty():
    assert split_sentences("") == []
    assert split_sentences("   ") == []


def test_abbreviations_are_lowercase_without_dots():
    assert all(a == a.lower() and not a.endswith(".") for a in ABBREVIATIONS)


def test_ngrams():
    assert ngrams(["a", "b", "c", "d"], 3) == [("a", "b", "c"), ("b", "c", "d")]
    assert ngrams(["a"], 2) == []


def test_ngrams_rejects_zero():
    with pytest.raises(ValueError):
        ngrams(["a"], 0)
