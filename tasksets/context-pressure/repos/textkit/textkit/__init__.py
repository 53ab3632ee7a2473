"""textkit: small, dependency-free text processing utilities.

The most used functions are re-exported here::

    >>> import textkit
    >>> textkit.word_tokenize("Hello, world!")
    ['Hello', ',', 'world', '!']
    >>> textkit.slugify("Hello, world!")
    'hello-world'
"""

__version__ = "2.3.1"

from .distance import damerau_levenshtein, jaro, jaro_winkler, levenshtein, similarity
from .markdown import render as markdown_to_text
from .normalize import casefold, normalize, normalize_whitespace, strip_accents
from .slugify import slugify
from .sniff import Dialect, sniff
from .stem import stem
from .table import read_table
from .tokenize import split_sentences, word_tokenize
from .wrap import fill, justify, shorten, wrap

__all__ = [
    "Dialect",
    "casefold",
    "damerau_levenshtein",
    "fill",
    "jaro",
    "jaro_winkler",
    "justify",
    "levenshtein",
    "markdown_to_text",
    "normalize",
    "normalize_whitespace",
    "read_table",
    "shorten",
    "similarity",
    "slugify",
    "sniff",
    "split_sentences",
    "stem",
    "strip_accents",
    "word_tokenize",
    "wrap",
]
