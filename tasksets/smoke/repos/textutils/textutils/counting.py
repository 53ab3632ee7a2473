"""Word, sentence and frequency counts."""

import math
import re
from collections import Counter

# A word is a run of letters/digits; an apostrophe inside a word does not end it.
_WORD = re.compile(r"[^\W_]+")
_SENTENCE_END = re.compile(r"[.!?]+(?=\s|$)")

DEFAULT_WORDS_PER_MINUTE = 230


def words(text):
    """Return the words of ``text`` in order."""
    return _WORD.findall(text)


def count_words(text):
    """Number of words in ``text``.

    >>> count_words("Hello, world!")
    2
    """
    return len(words(text))


def word_frequencies(text, ignore_case=True, top=None):
    """Return ``(word, count)`` pairs, most frequent first.

    Ties keep the order in which words first appear.  With ``ignore_case``
    (the default) words are lowercased before counting.  ``top`` limits the
    number of pairs returned.
    """
    found = words(text)
    if ignore_case:
        found = [word.lower() for word in found]
    return Counter(found).most_common(top)


def count_sentences(text):
    """Number of sentences, counted by terminal punctuation.

    Text that does not end in punctuation still counts as a final sentence.
    """
    stripped = text.strip()
    if not stripped:
        return 0
    endings = len(_SENTENCE_END.findall(stripped))
    if stripped[-1] not in ".!?":
        endings += 1
    return endings


def reading_time(text, words_per_minute=DEFAULT_WORDS_PER_MINUTE):
    """Estimated reading time in whole minutes (at least 1 for non-empty text)."""
    if words_per_minute <= 0:
        raise ValueError("words_per_minute must be positive")
    total = count_words(text)
    if total == 0:
        return 0
    return math.ceil(total / words_per_minute)
