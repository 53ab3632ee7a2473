"""The textkit 1.x tokenizer (deprecated).

This module is the original whitespace-and-punctuation tokenizer that
shipped before :mod:`textkit.tokenize`.  It does not split clitics, does
not know about URLs or e-mail addresses and reports no offsets.  It is
kept because some downstream indexes were built with it and need
byte-for-byte identical tokens to keep matching.

Use :func:`textkit.tokenize.word_tokenize` instead.
"""

from __future__ import annotations

import re
import warnings

__all__ = ["TOKEN_RE", "word_tokenize", "tokenize_lines"]

# A number (with optional decimal part), a word, or one punctuation mark.
TOKEN_RE = re.compile(r"\d+(?:\.\d+)?|\w+(?:'\w+)?|[^\w\s]")


def _warn(name: str) -> None:
    warnings.warn(
        f"textkit.legacy.tokenizer.{name} is deprecated; "
        "use textkit.tokenize.word_tokenize instead",
        DeprecationWarning,
        stacklevel=3,
    )


def word_tokenize(text: str, lowercase: bool = False) -> list[str]:
    """Split *text* into tokens the 1.x way.

    >>> import warnings; warnings.simplefilter("ignore")
    >>> word_tokenize("It's 3.5 km.")
    ["It's", '3.5', 'km', '.']
    """
    _warn("word_tokenize")
    tokens = TOKEN_RE.findall(text)
    if lowercase:
        tokens = [token.lower() for token in tokens]
    return tokens


def tokenize_lines(lines, lowercase: bool = False) -> list[list[str]]:
    """Tokenize every line of *lines* separately."""
    _warn("tokenize_lines")
    return [TOKEN_RE.findall(line.lower() if lowercase else line) for line in lines]
