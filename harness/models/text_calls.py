"""Tool calls a model wrote as text in its reply (`model.tool_calls: text`).

Small models served without a tool-call parser (llama.cpp's server passes Qwen's calls through as
text) write a call as JSON in the content, in one of these forms, possibly several per reply:

- `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Qwen, Hermes), the closing tag
  optional at the end of the reply;
- a fenced block holding that object (```` ```json ````, ```` ``` ````, or any other info string);
- that object (or a list of them) as the whole reply.

An object is a call when its `name` is one of the request's tools and its arguments (`arguments`, or
`parameters` as Llama writes them; an object, or a string of JSON) are a JSON object; OpenAI's
`{"function": {"name", "arguments"}}` shape is read too. Anything else stays text. A `<tool_call>`
block that is not such a call stays in the text and is reported as malformed, so that the agent can
be told; a reply with tagged blocks is read for those only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

__all__ = ["TextCall", "TextCalls", "read_text_calls"]

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|\Z)", re.S)
_FENCED = re.compile(r"^[ \t]*(`{3,})[^\n`]*\n(.*?)\n[ \t]*\1[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class TextCall:
    """One call read from a reply's text."""

    name: str
    """The tool's name (one the request offered)."""
    arguments: str
    """Its arguments as JSON text of an object."""


@dataclass(frozen=True)
class TextCalls:
    """What a reply's text holds."""

    calls: tuple[TextCall, ...]
    """The calls, in the order written."""
    text: str
    """The reply without the calls' blocks, stripped."""
    malformed: tuple[str, ...] = ()
    """`<tool_call>` blocks that are not a call of an offered tool, as written."""


def read_text_calls(content: str, offered: Collection[str]) -> TextCalls:
    """The tool calls written in `content`, among the tools named `offered`, and the text left around them."""
    calls: list[TextCall] = []
    malformed: list[str] = []
    spans: list[tuple[int, int]] = []
    for match in _TAGGED.finditer(content):
        found = _calls(match.group(1), offered)
        if found:
            calls += found
            spans.append(match.span())
        else:
            malformed.append(match.group(0).strip())
    if not spans and not malformed:
        for match in _FENCED.finditer(content):
            found = _calls(match.group(2), offered)
            if found:
                calls += found
                spans.append(match.span())
    if not spans and not malformed:
        found = _calls(content, offered)
        if found:
            return TextCalls(tuple(found), "")
    text = content
    for start, end in reversed(spans):
        text = text[:start] + text[end:]
    return TextCalls(tuple(calls), re.sub(r"\n{3,}", "\n\n", text).strip(), tuple(malformed))


def _calls(body: str, offered: Collection[str]) -> list[TextCall]:
    """The calls `body` is (one JSON object or a list of them, each a call of an offered tool); [] otherwise."""
    try:
        value = json.loads(body)
    except ValueError:
        return []
    items = value if isinstance(value, list) and value else [value]
    calls = [_call(item, offered) for item in items]
    return [c for c in calls if c is not None] if all(calls) else []


def _call(item: Any, offered: Collection[str]) -> TextCall | None:
    if isinstance(item, dict) and isinstance(item.get("function"), dict):
        item = item["function"]
    if not isinstance(item, dict) or item.get("name") not in offered:
        return None
    arguments = item.get("arguments", item.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return None
    if not isinstance(arguments, dict):
        return None
    return TextCall(str(item["name"]), json.dumps(arguments, ensure_ascii=False))
