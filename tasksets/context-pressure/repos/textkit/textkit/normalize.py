"""Text normalisation: Unicode forms, accents, quotes, whitespace and case.

Each helper does one thing and can be used on its own; :func:`normalize`
chains them in the order that is usually wanted before indexing or
comparing text.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = [
    "casefold",
    "normalize",
    "normalize_quotes",
    "normalize_unicode",
    "normalize_whitespace",
    "remove_control_chars",
    "strip_accents",
]

_FORMS = ("NFC", "NFD", "NFKC", "NFKD")

# Runs of whitespace, as Unicode defines it (tabs, no-break spaces, the
# typographic spaces U+2000..U+200A, ideographic space, line separators...).
_WS_RE = re.compile(r"[ \t\n\r\f\v]+")

# Characters that are invisible but not whitespace; they are dropped.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff"))

_QUOTES = str.maketrans(
    {
        "\u2018": "'",  # left single quotation mark
        "\u2019": "'",  # right single quotation mark
        "\u201a": "'",  # single low-9 quotation mark
        "\u201b": "'",  # single high-reversed-9 quotation mark
        "\u2032": "'",  # prime
        "\u201c": '"',  # left double quotation mark
        "\u201d": '"',  # right double quotation mark
        "\u201e": '"',  # double low-9 quotation mark
        "\u201f": '"',  # double high-reversed-9 quotation mark
        "\u2033": '"',  # double prime
        "\u00ab": '"',  # left-pointing double angle quotation mark
        "\u00bb": '"',  # right-pointing double angle quotation mark
    }
)


def normalize_unicode(text: str, form: str = "NFC") -> str:
    """Return *text* in the Unicode normal *form* (NFC, NFD, NFKC, NFKD)."""
    form = form.upper()
    if form not in _FORMS:
        raise ValueError(f"unknown normalization form {form!r}; expected one of {_FORMS}")
    return unicodedata.normalize(form, text)


def strip_accents(text: str) -> str:
    """Remove combining marks: ``"Crème Brûlée"`` -> ``"Creme Brulee"``.

    Letters that are not composed with a combining mark (``ø``, ``ß``,
    ``ł``) are left alone; see :func:`textkit.slugify.transliterate` for
    those.
    """
    decomposed = unicodedata.normalize("NFD", text)
    stripped = "".join(ch for ch in decomposed if not unicodedata.combining(ch))
    return unicodedata.normalize("NFC", stripped)


def normalize_quotes(text: str) -> str:
    """Replace typographic quotes and primes with their ASCII forms."""
    return text.translate(_QUOTES)


def remove_control_chars(text: str, *, keep: str = "\n\t") -> str:
    """Drop C0/C1 control characters and invisible format characters.

    Characters listed in *keep* survive (newlines and tabs by default).
    """
    text = text.translate(_INVISIBLE)
    return "".join(
        ch for ch in text
        if ch in keep or unicodedata.category(ch) not in ("Cc", "Cf")
    )


def normalize_whitespace(text: str, *, keep_newlines: bool = False) -> str:
    """Collapse every run of whitespace to a single space and trim the ends.

    With ``keep_newlines=True`` line structure is preserved: each line is
    collapsed and trimmed on its own, and runs of blank lines shrink to a
    single empty line (a paragraph break).

    >>> normalize_whitespace("  a \\t b\\n c ")
    'a b c'
    """
    if not keep_newlines:
        return _WS_RE.sub(" ", text).strip()
    lines = [_WS_RE.sub(" ", line).strip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:
        if line or (out and out[-1]):
            out.append(line)
    while out and not out[-1]:
        out.pop()
    return "\n".join(out)


def casefold(text: str) -> str:
    """Aggressive lower-casing for caseless matching (``"Straße"`` -> ``"strasse"``)."""
    return text.casefold()


def normalize(
    text: str,
    *,
    form: str = "NFKC",
    lowercase: bool = True,
    accents: bool = True,
    quotes: bool = True,
    whitespace: bool = True,
) -> str:
    """Normalise *text* for comparison or indexing.

    Steps, in order: Unicode *form*, control characters removed, quotes
    straightened (*quotes*), accents removed (unless *accents* is true),
    case folded (*lowercase*), whitespace collapsed (*whitespace*).
    """
    text = normalize_unicode(text, form)
    text = remove_control_chars(text)
    if quotes:
        text = normalize_quotes(text)
    if not accents:
        text = strip_accents(text)
    if lowercase:
        text = casefold(text)
    if whitespace:
        text = normalize_whitespace(text)
    return text
