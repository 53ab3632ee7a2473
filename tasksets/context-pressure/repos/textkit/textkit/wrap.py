"""Word wrapping, filling and justification.

:func:`wrap` returns a list of lines; :func:`fill` returns them joined by
newlines.  :func:`justify` additionally pads every line but the last so
both margins are straight.  Widths count characters (code points), not
display cells.
"""

from __future__ import annotations

import re

__all__ = ["dedent", "fill", "indent", "justify", "justify_line", "shorten", "wrap"]

_WORD_RE = re.compile(r"\S+")


def _check_width(width: int, *indents: str) -> None:
    if width < 1:
        raise ValueError(f"width must be positive, got {width}")
    for prefix in indents:
        if len(prefix) >= width:
            raise ValueError(f"indent {prefix!r} leaves no room within width {width}")


def _chunks(word: str, size: int) -> list[str]:
    return [word[i:i + size] for i in range(0, len(word), size)]


def wrap(
    text: str,
    width: int = 70,
    *,
    initial_indent: str = "",
    subsequent_indent: str = "",
    break_long_words: bool = True,
) -> list[str]:
    """Wrap *text* into lines of at most *width* characters.

    Whitespace (including newlines) between words is collapsed.  The first
    line starts with *initial_indent*, later lines with *subsequent_indent*;
    both count towards *width*.  Words longer than the available room are
    split when *break_long_words* is true, otherwise they overflow on a
    line of their own.

    >>> wrap("The quick brown fox jumps over the lazy dog", 15)
    ['The quick brown', 'fox jumps over', 'the lazy dog']
    """
    _check_width(width, initial_indent, subsequent_indent)
    words = _WORD_RE.findall(text)
    lines: list[str] = []
    current: list[str] = []
    length = 0
    prefix = initial_indent

    def flush() -> None:
        nonlocal current, length, prefix
        lines.append(prefix + " ".join(current))
        current, length = [], 0
        prefix = subsequent_indent

    for word in words:
        room = width - len(prefix)
        needed = len(word) if not current else length + 1 + len(word)
        if needed <= room:
            current.append(word)
            length = needed
            continue
        if current:
            flush()
            room = width - len(prefix)
        if len(word) <= room:
            current, length = [word], len(word)
        elif break_long_words:
            pieces = _chunks(word, room)
            for piece in pieces[:-1]:
                current = [piece]
                flush()
            current, length = [pieces[-1]], len(pieces[-1])
        else:
            current = [word]
            flush()
    if current:
        flush()
    return lines


def fill(
    text: str,
    width: int = 70,
    *,
    initial_indent: str = "",
    subsequent_indent: str = "",
    break_long_words: bool = True,
) -> str:
    """Like :func:`wrap`, but return a single string with newlines."""
    return "\n".join(
        wrap(
            text,
            width,
            initial_indent=initial_indent,
            break_long_words=break_long_words,
        )
    )


def justify_line(line: str, width: int) -> str:
    """Pad the gaps between the words of *line* so it is *width* long.

    Extra spaces go to the leftmost gaps first.  A line with a single word
    is left-aligned; leading indentation is preserved.
    """
    stripped = line.lstrip(" ")
    lead = line[:len(line) - len(stripped)]
    words = stripped.split()
    if len(words) < 2:
        return line
    room = width - len(lead) - sum(len(w) for w in words)
    gaps = len(words) - 1
    if room < gaps:
        return line
    base, extra = divmod(room, gaps)
    parts = []
    for i, word in enumerate(words[:-1]):
        parts.append(word)
        parts.append(" " * (base + (1 if i < extra else 0)))
    parts.append(words[-1])
    return lead + "".join(parts)


def justify(text: str, width: int = 70) -> str:
    """Wrap *text* and justify all lines but the last of each paragraph.

    Paragraphs are separated by blank lines and stay separated by exactly
    one blank line in the output.
    """
    paragraphs = [p for p in re.split(r"\n\s*\n", text) if p.strip()]
    out = []
    for paragraph in paragraphs:
        lines = wrap(paragraph, width)
        body = [justify_line(line, width) for line in lines[:-1]]
        out.append("\n".join(body + lines[-1:]))
    return "\n\n".join(out)


def shorten(text: str, width: int, *, placeholder: str = " [...]") -> str:
    """Collapse whitespace and truncate *text* to fit in *width* characters.

    Whole words are dropped from the end and *placeholder* is appended when
    anything was removed.

    >>> shorten("Hello  world!", width=12)
    'Hello world!'
    >>> shorten("Hello world!", width=11)
    'Hello [...]'
    """
    words = _WORD_RE.findall(text)
    collapsed = " ".join(words)
    if len(collapsed) <= width:
        return collapsed
    if len(placeholder.lstrip()) > width:
        raise ValueError("placeholder too large for max width")
    kept: list[str] = []
    length = 0
    for word in words:
        needed = length + (1 if kept else 0) + len(word)
        if needed + len(placeholder) > width:
            break
        kept.append(word)
        length = needed
    if not kept:
        return placeholder.lstrip()
    return " ".join(kept) + placeholder


def indent(text: str, prefix: str, *, blank_lines: bool = False) -> str:
    """Prefix every line of *text*; blank lines only if *blank_lines*."""
    return "".join(
        prefix + line if (blank_lines or line.strip()) else line
        for line in text.splitlines(keepends=True)
    )


def dedent(text: str) -> str:
    """Remove the longest common leading whitespace from all non-blank lines."""
    lines = text.splitlines(keepends=True)
    margins = [len(l) - len(l.lstrip(" \t")) for l in lines if l.strip()]
    if not margins:
        return text
    margin = min(margins)
    return "".join(l[margin:] if l.strip() else l.lstrip(" \t") for l in lines)
