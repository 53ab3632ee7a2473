"""Greedy word wrapping and truncation."""


def wrap(text, width=70, break_long_words=True):
    """Wrap ``text`` into a list of lines of at most ``width`` characters.

    Whitespace (including newlines) is collapsed; words are joined by a
    single space.  A word longer than ``width`` is split across lines when
    ``break_long_words`` is true, otherwise it gets a line of its own.
    """
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    lines = []
    current = ""
    for word in text.split():
        while break_long_words and len(word) > width:
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:width])
            word = word[width:]
        if not word:
            continue
        if current and len(current) + len(word) > width:
            lines.append(current)
            current = word
        elif current:
            current = f"{current} {word}"
        else:
            current = word
    if current:
        lines.append(current)
    return lines


def fill(text, width=70, **kwargs):
    """Like :func:`wrap` but return a single string joined with newlines."""
    return "\n".join(wrap(text, width, **kwargs))


def truncate(text, length, suffix="…"):
    """Shorten ``text`` to at most ``length`` characters, ending in ``suffix``.

    The cut happens at the last space that fits, so words are not split,
    unless the first word alone is too long.
    """
    if len(text) <= length:
        return text
    if length <= len(suffix):
        return suffix[:length]
    room = length - len(suffix)
    cut = text[:room]
    if " " in cut and text[room] != " ":
        cut = cut[: cut.rindex(" ")]
    return cut.rstrip() + suffix
