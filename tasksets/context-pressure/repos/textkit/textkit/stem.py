"""The Porter stemming algorithm.

An implementation of M. F. Porter, "An algorithm for suffix stripping",
*Program* 14(3), 1980, with the two departures that Porter's own reference
implementation makes (step 2 maps ``bli -> ble`` instead of
``abli -> able``, and adds ``logi -> log``).

Terminology from the paper: a *consonant* is a letter other than a, e, i,
o, u, and other than y preceded by a consonant.  Any word can be written
``[C](VC){m}[V]`` where C and V are runs of consonants and vowels; *m* is
the *measure* of the word.  Rules have the form ``(condition) S1 -> S2``:
if the word ends with S1 and the stem before S1 satisfies the condition,
S1 is replaced by S2.  Within a step only the rule with the longest
matching S1 is considered.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Callable, Iterable

__all__ = ["PorterStemmer", "stem", "stem_words", "stem_text"]

Rule = tuple[str, str, Callable[[str], bool] | None]


def _is_consonant(word: str, i: int) -> bool:
    ch = word[i]
    if ch in "aeiou":
        return False
    if ch == "y":
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def measure(stem: str) -> int:
    """Return *m*, the number of vowel-consonant sequences in *stem*.

    >>> [measure(w) for w in ("tr", "trouble", "troubles", "private")]
    [0, 1, 2, 2]
    """
    m = 0
    previous_vowel = False
    # A VC sequence is at least two letters long, so the first letter can
    # never complete one; start looking from the second.
    for i in range(1, len(stem)):
        vowel = not _is_consonant(stem, i)
        if previous_vowel and not vowel:
            m += 1
        previous_vowel = vowel
    return m


def _has_vowel(stem: str) -> bool:
    """``*v*``: the stem contains a vowel."""
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _ends_double_consonant(word: str) -> bool:
    """``*d``: the word ends with a double consonant (e.g. -tt, -ss)."""
    return (
        len(word) >= 2
        and word[-1] == word[-2]
        and _is_consonant(word, len(word) - 1)
    )


def _ends_cvc(word: str) -> bool:
    """``*o``: the word ends consonant-vowel-consonant, the last not w, x or y.

    This is what makes ``hop`` keep its e in ``hoping -> hope`` but not
    ``hopping -> hop``.
    """
    if len(word) < 3:
        return False
    return (
        _is_consonant(word, len(word) - 3)
        and not _is_consonant(word, len(word) - 2)
        and _is_consonant(word, len(word) - 1)
        and word[-1] not in "wxy"
    )


def _m_gt0(stem: str) -> bool:
    return measure(stem) > 0


def _m_gt1(stem: str) -> bool:
    return measure(stem) > 1


def _m_gt1_and_s_or_t(stem: str) -> bool:
    return measure(stem) > 1 and stem[-1:] in ("s", "t")


# Step 2: double suffixes to single ones, when (m > 0).
STEP2_RULES: tuple[Rule, ...] = (
    ("ational", "ate", _m_gt0),
    ("tional", "tion", _m_gt0),
    ("enci", "ence", _m_gt0),
    ("anci", "ance", _m_gt0),
    ("izer", "ize", _m_gt0),
    ("bli", "ble", _m_gt0),
    ("alli", "al", _m_gt0),
    ("entli", "ent", _m_gt0),
    ("eli", "e", _m_gt0),
    ("ousli", "ous", _m_gt0),
    ("ization", "ize", _m_gt0),
    ("ation", "ate", _m_gt0),
    ("ator", "ate", _m_gt0),
    ("alism", "al", _m_gt0),
    ("iveness", "ive", _m_gt0),
    ("fulness", "ful", _m_gt0),
    ("ousness", "ous", _m_gt0),
    ("aliti", "al", _m_gt0),
    ("iviti", "ive", _m_gt0),
    ("biliti", "ble", _m_gt0),
    ("logi", "log", _m_gt0),
)

# Step 3: -ic-, -full, -ness etc., when (m > 0).
STEP3_RULES: tuple[Rule, ...] = (
    ("icate", "ic", _m_gt0),
    ("ative", "", _m_gt0),
    ("alize", "al", _m_gt0),
    ("iciti", "ic", _m_gt0),
    ("ical", "ic", _m_gt0),
    ("ful", "", _m_gt0),
    ("ness", "", _m_gt0),
)

# Step 4: strip the remaining derivational suffixes, when (m > 1).
# Order matters where one suffix ends another: "ement" before "ment"
# before "ent".
STEP4_RULES: tuple[Rule, ...] = (
    ("al", "", _m_gt1),
    ("ance", "", _m_gt1),
    ("ence", "", _m_gt1),
    ("er", "", _m_gt1),
    ("ic", "", _m_gt1),
    ("able", "", _m_gt1),
    ("ible", "", _m_gt1),
    ("ant", "", _m_gt1),
    ("ement", "", _m_gt1),
    ("ment", "", _m_gt1),
    ("ent", "", _m_gt1),
    ("ion", "", _m_gt1_and_s_or_t),
    ("ou", "", _m_gt1),
    ("ism", "", _m_gt1),
    ("ate", "", _m_gt1),
    ("iti", "", _m_gt1),
    ("ous", "", _m_gt1),
    ("ive", "", _m_gt1),
    ("ize", "", _m_gt1),
)


def _apply_rules(word: str, rules: Iterable[Rule]) -> str:
    """Apply the first rule whose suffix matches; stop there either way."""
    for suffix, replacement, condition in rules:
        if word.endswith(suffix):
            stem = word[: len(word) - len(suffix)]
            if condition is None or condition(stem):
                return stem + replacement
            return word
    return word


class PorterStemmer:
    """Stateless Porter stemmer; :meth:`stem` results are cached."""

    #: Words this short are returned unchanged (as in Porter's reference code).
    min_length = 3

    def __init__(self, exceptions: dict[str, str] | None = None) -> None:
        self.exceptions = dict(exceptions or {})
        self._cached = lru_cache(maxsize=8192)(self._stem)

    def stem(self, word: str) -> str:
        """Return the stem of *word* (lower-cased)."""
        return self._cached(word.lower())

    __call__ = stem

    def _stem(self, word: str) -> str:
        if word in self.exceptions:
            return self.exceptions[word]
        if len(word) < self.min_length or not word.isalpha():
            return word
        word = self.step1a(word)
        word = self.step1b(word)
        word = self.step1c(word)
        word = self.step2(word)
        word = self.step3(word)
        word = self.step4(word)
        word = self.step5a(word)
        word = self.step5b(word)
        return word

    @staticmethod
    def step1a(word: str) -> str:
        """Plurals: sses -> ss, ies -> i, ss -> ss, s -> ''."""
        if word.endswith("sses"):
            return word[:-2]
        if word.endswith("ies"):
            return word[:-2]
        if word.endswith("ss"):
            return word
        if word.endswith("s"):
            return word[:-1]
        return word

    @staticmethod
    def step1b(word: str) -> str:
        """Past tense and progressive: -eed, -ed, -ing."""
        if word.endswith("eed"):
            if measure(word[:-3]) > 0:
                return word[:-1]
            return word
        for suffix in ("ed", "ing"):
            if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
                return PorterStemmer._step1b_cleanup(word[: -len(suffix)])
        return word

    @staticmethod
    def _step1b_cleanup(stem: str) -> str:
        """Tidy a stem after -ed/-ing removal (conflat -> conflate, hopp -> hop)."""
        if stem.endswith(("at", "bl", "iz")):
            return stem + "e"
        if _ends_double_consonant(stem) and stem[-1] not in "lsz":
            return stem[:-1]
        if measure(stem) == 1 and _ends_cvc(stem):
            return stem + "e"
        return stem

    @staticmethod
    def step1c(word: str) -> str:
        """(*v*) y -> i: happy -> happi, but sky stays sky."""
        if word.endswith("y") and _has_vowel(word[:-1]):
            return word[:-1] + "i"
        return word

    @staticmethod
    def step2(word: str) -> str:
        return _apply_rules(word, STEP2_RULES)

    @staticmethod
    def step3(word: str) -> str:
        return _apply_rules(word, STEP3_RULES)

    @staticmethod
    def step4(word: str) -> str:
        return _apply_rules(word, STEP4_RULES)

    @staticmethod
    def step5a(word: str) -> str:
        """Remove a final -e: (m > 1) e -> '', (m = 1 and not *o) e -> ''."""
        if word.endswith("e"):
            stem = word[:-1]
            m = measure(stem)
            if m > 1 or (m == 1 and not _ends_cvc(stem)):
                return stem
        return word

    @staticmethod
    def step5b(word: str) -> str:
        """(m > 1 and *d and *L) single letter: controll -> control."""
        if measure(word) > 1 and _ends_double_consonant(word) and word.endswith("l"):
            return word[:-1]
        return word


_DEFAULT = PorterStemmer()
_WORD_RE = re.compile(r"[A-Za-z]+")


def stem(word: str) -> str:
    """Stem one word with the default :class:`PorterStemmer`.

    >>> stem("generalizations")
    'gener'
    """
    return _DEFAULT.stem(word)


def stem_words(words: Iterable[str]) -> list[str]:
    """Stem every word of *words*."""
    return [_DEFAULT.stem(w) for w in words]


def stem_text(text: str) -> str:
    """Replace every alphabetic word in *text* by its stem, keeping the rest."""
    return _WORD_RE.sub(lambda m: _DEFAULT.stem(m.group()), text)
