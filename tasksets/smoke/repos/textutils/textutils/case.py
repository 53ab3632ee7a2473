"""Case conversion for identifiers and titles."""

import re

# Splits "parseHTTPResponse2XX" into parse / HTTP / Response / 2 / XX.
_IDENTIFIER_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")

# A word for title casing; an apostrophe inside a word does not end it.
_TITLE_WORD = re.compile(r"[A-Za-z]+")

# Short words kept lowercase in titles unless they come first or last.
SMALL_WORDS = frozenset(
    "a an and as at but by for in nor of on or per the to via vs".split()
)


def split_identifier(name):
    """Split an identifier in any common case style into lowercase words.

    >>> split_identifier("parseHTTPResponse")
    ['parse', 'http', 'response']
    """
    return [part.lower() for part in _IDENTIFIER_PART.findall(name)]


def to_snake_case(name):
    """``"userID"`` -> ``"user_id"``"""
    return "_".join(split_identifier(name))


def to_kebab_case(name):
    """``"userID"`` -> ``"user-id"``"""
    return "-".join(split_identifier(name))


def to_camel_case(name):
    """``"user_id"`` -> ``"userId"``"""
    words = split_identifier(name)
    if not words:
        return ""
    return words[0] + "".join(word.capitalize() for word in words[1:])


def to_pascal_case(name):
    """``"user_id"`` -> ``"UserId"``"""
    return "".join(word.capitalize() for word in split_identifier(name))


def to_title_case(text):
    """Title-case a headline, keeping small words lowercase.

    >>> to_title_case("the lord of the rings")
    'The Lord of the Rings'

    Words that are already all caps (acronyms such as "NASA") are kept.
    """
    matches = list(_TITLE_WORD.finditer(text))
    last = len(matches) - 1

    def fix(index, match):
        word = match.group(0)
        if word.isupper() and len(word) > 1:
            return word
        if 0 < index < last and word.lower() in SMALL_WORDS:
            return word.lower()
        return word[0].upper() + word[1:].lower()

    pieces = []
    position = 0
    for index, match in enumerate(matches):
        pieces.append(text[position : match.start()])
        pieces.append(fix(index, match))
        position = match.end()
    pieces.append(text[position:])
    return "".join(pieces)
