"""URL slugs: ``"Crème Brûlée & Co."`` -> ``"creme-brulee-and-co"``."""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable

from .normalize import strip_accents

__all__ = ["slugify", "transliterate", "unique_slug"]

# Letters that do not decompose into base letter + combining mark.
_TRANSLITERATIONS = str.maketrans(
    {
        "ß": "ss", "ẞ": "SS",
        "æ": "ae", "Æ": "AE",
        "œ": "oe", "Œ": "OE",
        "ø": "o", "Ø": "O",
        "ł": "l", "Ł": "L",
        "đ": "d", "Đ": "D",
        "ð": "d", "Ð": "D",
        "þ": "th", "Þ": "Th",
        "ı": "i",
    }
)

_ASCII_RUN_RE = re.compile(r"[^a-zA-Z0-9]+")
_UNICODE_RUN_RE = re.compile(r"[^\w]+|_+")


def transliterate(text: str) -> str:
    """Reduce *text* to ASCII letters where a sensible mapping exists."""
    text = strip_accents(text).translate(_TRANSLITERATIONS)
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def _truncate(slug: str, separator: str, max_length: int) -> str:
    """Cut *slug* to *max_length* characters without splitting a word."""
    if len(slug) <= max_length:
        return slug
    cut = slug[:max_length + 1]
    if separator and separator in cut:
        cut = cut[:cut.rindex(separator)]
    else:
        cut = slug[:max_length]
    return cut.strip(separator) if separator else cut


def slugify(
    text: str,
    separator: str = "-",
    *,
    max_length: int | None = None,
    lowercase: bool = True,
    stopwords: Iterable[str] = (),
    allow_unicode: bool = False,
) -> str:
    """Turn *text* into a URL slug.

    ``&`` is spelled out as ``and``; every run of characters other than
    letters and digits becomes one *separator*.  Words in *stopwords* are
    dropped (compared case-insensitively).  With *max_length* the slug is
    cut at a word boundary where possible.

    >>> slugify("Hello, World!")
    'hello-world'
    >>> slugify("Crème Brûlée & Co.", max_length=12)
    'creme-brulee'
    """
    if max_length is not None and max_length < 1:
        raise ValueError("max_length must be positive")
    text = unicodedata.normalize("NFKC", text).replace("&", " and ")
    if allow_unicode:
        words = _UNICODE_RUN_RE.split(text)
    else:
        words = _ASCII_RUN_RE.split(transliterate(text))
    stop = {word.casefold() for word in stopwords}
    words = [w for w in words if w and w.casefold() not in stop]
    slug = separator.join(words)
    if lowercase:
        slug = slug.lower()
    if max_length is not None:
        slug = _truncate(slug, separator, max_length)
    return slug


def unique_slug(text: str, existing: Iterable[str], separator: str = "-", **kwargs) -> str:
    """Slugify *text* and append ``-2``, ``-3``... until it is not in *existing*."""
    taken = set(existing)
    base = slugify(text, separator, **kwargs)
    if base not in taken:
        return base
    n = 2
    while f"{base}{separator}{n}" in taken:
        n += 1
    return f"{base}{separator}{n}"
