"""URL slug generation."""

import re
import unicodedata

_NON_SLUG = re.compile(r"[^a-z0-9]+")

# Letters that NFKD does not decompose into ASCII base + combining mark.
_SPECIAL = str.maketrans({"ß": "ss", "æ": "ae", "Æ": "AE", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L"})


def strip_accents(text):
    """Remove diacritics: ``"Crème brûlée"`` becomes ``"Creme brulee"``."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_SPECIAL))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def slugify(text, separator="-", max_length=None):
    """Turn ``text`` into a lowercase ASCII slug suitable for URLs.

    Runs of anything other than ASCII letters and digits collapse into a
    single ``separator``; leading and trailing separators are removed.  With
    ``max_length`` the slug is cut at a separator boundary so no word is split.

    >>> slugify("Hello, World!")
    'hello-world'
    """
    if not separator:
        raise ValueError("separator must be a non-empty string")
    ascii_text = strip_accents(text).encode("ascii", "ignore").decode("ascii")
    slug = _NON_SLUG.sub(separator, ascii_text.lower()).strip(separator)
    if max_length is not None and len(slug) > max_length:
        cut = slug[: max_length + 1]
        if separator in cut:
            slug = cut[: cut.rindex(separator)]
        else:
            slug = slug[:max_length]
    return slug
