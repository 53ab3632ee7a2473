"""Reading OpenAI chat-format messages: the text of a message's content, a tool call's JSON arguments,
and where a conversation's opening ends.

Every part of ctxbench that reads a message list (the wire formats, the History reading, the
providers, the simulator, the gateway) reads it through these, so that one text is the same text
everywhere (the simulator's draws are seeded by what it reads).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

__all__ = ["TEXT_PARTS", "text_parts", "content_text", "message_text", "join_texts", "parse_arguments",
           "read_arguments", "SYSTEM_ROLES", "Opening", "read_opening"]

TEXT_PARTS: tuple[str, ...] = ("text",)
"""The content parts that hold text in the chat format (and Anthropic's text blocks)."""
SYSTEM_ROLES = ("system", "developer")
"""Roles of the messages that instruct the model (OpenAI's newer models name the system `developer`)."""


def join_texts(texts: Iterable[str]) -> str:
    """The one way several texts of one message become one: joined by a newline."""
    return "\n".join(texts)


def text_parts(content: Any, kinds: Collection[str] = TEXT_PARTS) -> Iterator[dict[str, Any]]:
    """The text parts of a message's content: a string is one `text` part; of a list of parts, those
    whose `type` is one of `kinds` (images, documents, tool blocks... are left out)."""
    if isinstance(content, str):
        yield {"type": "text", "text": content}
    elif isinstance(content, list):
        yield from (p for p in content if isinstance(p, dict) and p.get("type") in kinds)


def content_text(content: Any, kinds: Collection[str] = TEXT_PARTS) -> str:
    """The text of a message's content: a string as it is, the text of its parts of `kinds` joined
    (`join_texts`), or "" for anything else."""
    if isinstance(content, str):
        return content
    return join_texts(p["text"] if isinstance(p.get("text"), str) else "" for p in text_parts(content, kinds))


def message_text(message: dict[str, Any]) -> str:
    """A chat message's text (`content_text` of its content)."""
    return content_text(message.get("content"))


def parse_arguments(raw: str) -> dict[str, Any]:
    """A tool call's raw JSON arguments as an object, strictly (empty arguments are `{}`): for the
    tools, which answer bad arguments with an invalid-action observation.

    Raises:
        ValueError: they are not JSON, or not a JSON object.
    """
    value = json.loads(raw or "{}")
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    return value


def read_arguments(raw: Any) -> dict[str, Any]:
    """A tool call's arguments as an object, leniently: JSON text that is an object, an object as it is,
    `{}` for anything else (for readers of a conversation, which take a call as the agent made it)."""
    if isinstance(raw, dict):
        return raw
    if not isinstance(raw, str):
        return {}
    try:
        return parse_arguments(raw)
    except ValueError:
        return {}


@dataclass(frozen=True)
class Opening:
    """A conversation's opening: the messages before its first assistant message."""

    end: int
    """The index of the first assistant message (the number of messages when there is none)."""
    system: tuple[int, ...]
    """The indices of its system (and developer) messages: the system prompt."""
    user: tuple[int, ...]
    """The indices of its user messages: the task, as the agent wrapped it."""

    @property
    def task_end(self) -> int:
        """The index after the opening's first user message. In a context a strategy built (system
        prompt, task, then whatever the strategy put after them), everything from here on is
        after the task statement."""
        return self.user[0] + 1 if self.user else self.end


def read_opening(messages: list[dict[str, Any]]) -> Opening:
    """Where `messages` open: their system and user messages before the first assistant message (any
    other message there, a stray tool result, belongs to neither)."""
    end = next((i for i, m in enumerate(messages) if m.get("role") == "assistant"), len(messages))
    roles = [m.get("role") for m in messages[:end]]
    return Opening(end, tuple(i for i, r in enumerate(roles) if r in SYSTEM_ROLES),
                   tuple(i for i, r in enumerate(roles) if r == "user"))
