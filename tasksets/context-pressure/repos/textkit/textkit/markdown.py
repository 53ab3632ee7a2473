"""Render a practical subset of Markdown as plain text.

Supported blocks: ATX headings (``#``..``######``), paragraphs, bullet and
ordered lists (nested by indentation), block quotes, fenced and indented
code blocks and thematic breaks.  Inline markup is reduced to its text:
emphasis markers and code backticks are removed, ``[text](url)`` becomes
``text (url)``, images become their alt text and HTML tags are dropped.

With a *width*, paragraphs, list items and quotes are wrapped; list item
continuation lines are indented to line up with the item text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .wrap import fill

__all__ = ["Block", "parse_blocks", "render", "render_inline"]

_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE_RE = re.compile(r"^(```|~~~)\s*([\w+-]*)\s*$")
_HR_RE = re.compile(r"^\s{0,3}([-*_])(\s*\1){2,}\s*$")
_BULLET_RE = re.compile(r"^(\s*)([-*+])\s+(.*)$")
_ORDERED_RE = re.compile(r"^(\s*)(\d{1,9})[.)]\s+(.*)$")
_QUOTE_RE = re.compile(r"^\s{0,3}>\s?(.*)$")

_IMAGE_RE = re.compile(r"!\[([^\]]*)\]\([^)]*\)")
_LINK_RE = re.compile(r"\[([^\]]+)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_AUTOLINK_RE = re.compile(r"<((?:https?|mailto):[^>\s]+)>")
_CODE_SPAN_RE = re.compile(r"(`+)(.+?)\1")
_STRONG_RE = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_EMPHASIS_RE = re.compile(r"(?<![\w*])([*_])(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_STRIKE_RE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_HTML_TAG_RE = re.compile(r"</?[A-Za-z][^>]*>")
_ESCAPE_RE = re.compile(r"\\([\\`*_{}\[\]()#+\-.!>~|])")

#: Underline characters for heading levels 1 and 2; deeper levels are plain.
HEADING_UNDERLINES = {1: "=", 2: "-"}


@dataclass
class Block:
    """A parsed block: *kind* is heading, paragraph, item, quote, code or rule."""

    kind: str
    text: str = ""
    level: int = 0
    marker: str = ""
    lines: list[str] = field(default_factory=list)


def render_inline(text: str) -> str:
    """Reduce inline Markdown in *text* to plain text.

    >>> render_inline("**Bold** and [a link](https://example.com)")
    'Bold and a link (https://example.com)'
    """
    spans: list[str] = []

    def protect(match: re.Match[str]) -> str:
        spans.append(match.group(2).strip())
        return f"\x00{len(spans) - 1}\x00"

    text = _CODE_SPAN_RE.sub(protect, text)
    escapes: list[str] = []

    def protect_escape(match: re.Match[str]) -> str:
        escapes.append(match.group(1))
        return f"\x01{len(escapes) - 1}\x01"

    text = _ESCAPE_RE.sub(protect_escape, text)
    text = _IMAGE_RE.sub(r"\1", text)

    def link(match: re.Match[str]) -> str:
        label, url = match.group(1), match.group(2)
        return label if label == url else f"{label} ({url})"

    text = _LINK_RE.sub(link, text)
    text = _AUTOLINK_RE.sub(r"\1", text)
    text = _HTML_TAG_RE.sub("", text)
    text = _STRONG_RE.sub(r"\2", text)
    text = _EMPHASIS_RE.sub(r"\2", text)
    text = _STRIKE_RE.sub(r"\1", text)
    text = re.sub("\x01(\\d+)\x01", lambda m: escapes[int(m.group(1))], text)
    return re.sub("\x00(\\d+)\x00", lambda m: spans[int(m.group(1))], text)


def _list_item(line: str) -> tuple[int, str, str] | None:
    """Return (indent, marker, text) if *line* starts a list item."""
    match = _BULLET_RE.match(line)
    if match:
        return len(match.group(1).expandtabs(4)), match.group(2), match.group(3)
    match = _ORDERED_RE.match(line)
    if match:
        return len(match.group(1).expandtabs(4)), match.group(2) + ".", match.group(3)
    return None


def parse_blocks(markdown: str) -> list[Block]:
    """Split *markdown* into a flat list of :class:`Block` objects."""
    lines = markdown.expandtabs(4).splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            i += 1
            continue
        fence = _FENCE_RE.match(stripped)
        if fence:
            body = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(fence.group(1)):
                body.append(lines[i])
                i += 1
            blocks.append(Block("code", lines=body, marker=fence.group(2)))
            i += 1  # skip the closing fence (or run off the end)
            continue
        if line.startswith("    ") and (not blocks or blocks[-1].kind != "item"):
            body = []
            while i < len(lines) and (lines[i].startswith("    ") or not lines[i].strip()):
                body.append(lines[i][4:])
                i += 1
            while body and not body[-1].strip():
                body.pop()
            blocks.append(Block("code", lines=body))
            continue
        heading = _HEADING_RE.match(stripped)
        if heading and line.startswith("#"):
            blocks.append(Block("heading", heading.group(2), level=len(heading.group(1))))
            i += 1
            continue
        if _HR_RE.match(line):
            blocks.append(Block("rule"))
            i += 1
            continue
        if _QUOTE_RE.match(line):
            quoted = []
            while i < len(lines) and _QUOTE_RE.match(lines[i]):
                quoted.append(_QUOTE_RE.match(lines[i]).group(1))
                i += 1
            blocks.append(Block("quote", " ".join(q.strip() for q in quoted if q.strip())))
            continue
        item = _list_item(line)
        if item:
            indent, marker, text = item
            parts = [text]
            i += 1
            # Lazy continuation lines belong to the item until a blank line,
            # a new item or another block starts.
            while i < len(lines) and lines[i].strip() and not _starts_block(lines[i]):
                parts.append(lines[i].strip())
                i += 1
            blocks.append(Block("item", " ".join(parts), level=indent // 2, marker=marker))
            continue
        parts = [stripped]
        i += 1
        while i < len(lines) and lines[i].strip() and not _starts_block(lines[i]):
            parts.append(lines[i].strip())
            i += 1
        blocks.append(Block("paragraph", " ".join(parts)))
    return blocks


def _starts_block(line: str) -> bool:
    stripped = line.strip()
    return bool(
        _FENCE_RE.match(stripped)
        or (line.startswith("#") and _HEADING_RE.match(stripped))
        or _HR_RE.match(line)
        or _QUOTE_RE.match(line)
        or _list_item(line)
    )


def _render_block(block: Block, width: int | None, rule_width: int) -> str:
    if block.kind == "heading":
        text = render_inline(block.text)
        underline = HEADING_UNDERLINES.get(block.level)
        return f"{text}\n{underline * len(text)}" if underline else text
    if block.kind == "rule":
        return "-" * rule_width
    if block.kind == "code":
        return "\n".join("    " + line if line else "" for line in block.lines)
    text = render_inline(block.text)
    if block.kind == "quote":
        if width:
            return fill(text, width, initial_indent="> ", subsequent_indent="> ")
        return "> " + text
    if block.kind == "item":
        lead = "  " * block.level
        bullet = "*" if block.marker in "-*+" else block.marker
        prefix = f"{lead}{bullet} "
        if width:
            hanging = lead + " " * len(bullet)
            return fill(text, width, initial_indent=prefix, subsequent_indent=hanging)
        return prefix + text
    return fill(text, width) if width else text


def render(markdown: str, width: int | None = None) -> str:
    """Render *markdown* as plain text, wrapped to *width* when given.

    Consecutive list items are kept together; every other block is
    separated from its neighbours by one blank line.
    """
    if width is not None and width < 10:
        raise ValueError("width must be at least 10")
    rule_width = width or 40
    out: list[str] = []
    previous: Block | None = None
    for block in parse_blocks(markdown):
        rendered = _render_block(block, width, rule_width)
        if out:
            tight = previous is not None and previous.kind == block.kind == "item"
            out.append("\n" if tight else "\n\n")
        out.append(rendered)
        previous = block
    return "".join(out)
