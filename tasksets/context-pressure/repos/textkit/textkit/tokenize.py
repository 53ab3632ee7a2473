"""Word and sentence tokenisation.

The word tokenizer is rule based and works on a single compiled regular
expression.  At every position the alternatives are tried from left to
right, so more specific shapes (URLs, e-mail addresses, numbers) win over
plain words and punctuation.  Clitics are split off words the way the Penn
Treebank does it: ``"don't"`` becomes ``["do", "n't"]`` and ``"we're"``
becomes ``["we", "'re"]``.

The sentence splitter is independent of the word tokenizer: it looks for
terminal punctuation followed by whitespace and an upper-case letter, and
refuses to split after known abbreviations and single initials.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Iterator, Sequence, TypeVar

__all__ = [
    "ABBREVIATIONS",
    "Token",
    "ngrams",
    "span_tokenize",
    "split_sentences",
    "word_tokenize",
]

T = TypeVar("T")

_TOKEN_RE = re.compile(
    r"""
      (?P<url>https?://[^\s<>"]*[^\s<>".,;:!?)\]'])
    | (?P<email>[\w.+-]+@[\w-]+(?:\.[\w-]+)+)
    | (?P<number>\d+(?:,\d{3})*%?)
    | (?P<word>\w+(?:['\u2019-]\w+)*)
    | (?P<punct>\.\.\.|--|[^\w\s])
    """,
    re.VERBOSE,
)

# Suffixes split off a word as separate tokens (Penn Treebank convention).
_CLITICS = ("'s", "'re", "'ve", "'ll", "'d", "'m")


@dataclass(frozen=True)
class Token:
    """A token with its character offsets in the source text.

    ``end`` is exclusive, so ``text[token.start:token.end] == token.text``.
    """

    text: str
    start: int
    end: int
    kind: str

    def __len__(self) -> int:
        return self.end - self.start


def _split_clitics(word: str, start: int) -> list[Token]:
    """Split a trailing clitic (``n't``, ``'s``, ...) off *word*."""
    normalized = word.replace("\u2019", "'")
    lower = normalized.lower()
    if lower.endswith("n't") and len(word) > 3:
        cut = len(word) - 3
    else:
        cut = None
        for clitic in _CLITICS:
            if lower.endswith(clitic) and len(word) > len(clitic):
                cut = len(word) - len(clitic)
                break
    if cut is None:
        return [Token(word, start, start + len(word), "word")]
    return [
        Token(word[:cut], start, start + cut, "word"),
        Token(word[cut:], start + cut, start + len(word), "clitic"),
    ]


def span_tokenize(text: str) -> Iterator[Token]:
    """Yield :class:`Token` objects for *text*, left to right."""
    for match in _TOKEN_RE.finditer(text):
        kind = match.lastgroup or "punct"
        value = match.group()
        if kind == "word" and "'" in value.replace("\u2019", "'"):
            yield from _split_clitics(value, match.start())
        else:
            yield Token(value, match.start(), match.end(), kind)


def word_tokenize(text: str, *, lowercase: bool = False) -> list[str]:
    """Split *text* into word, number and punctuation tokens.

    >>> word_tokenize("Don't panic, it's 1,000 miles!")
    ['Do', "n't", 'panic', ',', 'it', "'s", '1,000', 'miles', '!']
    """
    tokens = [token.text for token in span_tokenize(text)]
    if lowercase:
        tokens = [token.lower() for token in tokens]
    return tokens


# Abbreviations after which a full stop does not end a sentence.  Stored
# without the trailing dot, in lower case.
ABBREVIATIONS = frozenset(
    {
        "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "rev",
        "gen", "col", "lt", "sgt", "capt", "gov", "sen", "rep",
        "inc", "ltd", "co", "corp", "bros",
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept",
        "oct", "nov", "dec",
        "e.g", "i.e", "etc", "vs", "cf", "al", "approx", "no", "fig", "vol",
        "pp", "ed", "eds", "dept", "est",
    }
)

_BOUNDARY_RE = re.compile(r"""([.!?]+)(["'\u201d\u2019)\]]*)(\s+)(?=["'\u201c\u2018(\[]?[A-Z0-9])""")
_LAST_WORD_RE = re.compile(r"([\w.]+)$")


def _is_abbreviation(prefix: str, abbreviations: frozenset[str]) -> bool:
    match = _LAST_WORD_RE.search(prefix)
    if not match:
        return False
    word = match.group(1).lower().rstrip(".")
    if len(word) == 1 and word.isalpha():
        return True  # an initial, as in "J. R. R. Tolkien"
    return word in abbreviations


def split_sentences(
    text: str, *, abbreviations: Iterable[str] | None = None
) -> list[str]:
    """Split *text* into sentences.

    A sentence ends at ``.``, ``!`` or ``?`` (possibly followed by closing
    quotes or brackets) when whitespace and an upper-case letter or digit
    follow.  A full stop directly after an abbreviation or an initial does
    not end a sentence.

    >>> split_sentences("Dr. Who arrived. He left!  Then? Nothing.")
    ['Dr. Who arrived.', 'He left!', 'Then?', 'Nothing.']
    """
    abbrevs = ABBREVIATIONS if abbreviations is None else frozenset(
        a.lower().rstrip(".") for a in abbreviations
    )
    sentences: list[str] = []
    start = 0
    for match in _BOUNDARY_RE.finditer(text):
        end = match.end(2)
        if match.group(1) == "." and _is_abbreviation(text[start:match.start(1)], abbrevs):
            continue
        sentence = text[start:end].strip()
        if sentence:
            sentences.append(sentence)
        start = match.end(3)
    tail = text[start:].strip()
    if tail:
        sentences.append(tail)
    return sentences


def ngrams(items: Sequence[T], n: int) -> list[tuple[T, ...]]:
    """Return the contiguous *n*-grams of *items*.

    >>> ngrams(["a", "b", "c"], 2)
    [('a', 'b'), ('b', 'c')]
    """
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    return [tuple(items[i:i + n]) for i in range(len(items) - n + 1)]
