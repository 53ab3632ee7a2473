"""textutils: everyday text helpers with no third-party dependencies.

* :mod:`textutils.slug` -- URL slugs and accent stripping
* :mod:`textutils.case` -- identifier case conversion and title case
* :mod:`textutils.wrap` -- greedy word wrapping and truncation
* :mod:`textutils.counting` -- word, sentence and frequency counts
"""

from textutils.case import to_camel_case, to_kebab_case, to_pascal_case, to_snake_case, to_title_case
from textutils.counting import count_sentences, count_words, reading_time, word_frequencies
from textutils.slug import slugify, strip_accents
from textutils.wrap import fill, truncate, wrap

__all__ = [
    "count_sentences",
    "count_words",
    "fill",
    "reading_time",
    "slugify",
    "strip_accents",
    "to_camel_case",
    "to_kebab_case",
    "to_pascal_case",
    "to_snake_case",
    "to_title_case",
    "truncate",
    "word_frequencies",
    "wrap",
]

__version__ = "1.2.0"
