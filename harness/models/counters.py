"""The counters of a served model's own tokens: `EndpointCounter` (the server counts) and
`CalibratedCounter` (tiktoken fitted to the usage the endpoint reports); see `ctxbench.harness.tokens`
for the interface every counter keeps.

How `endpoint` counts one message. A server counts whole requests (the template renders the
conversation, then tokenizes it), while a strategy counts message by message and every message's
count must not depend on its neighbours (it is cached by content, and a ledger adds the counts of the
messages it kept). So each message is counted as the difference it makes to a fixed frame, a short
conversation of probe messages that puts it where it stands in a real request, with the request's
tools:

- a user message: `N(S, U, m) - N(S, U)`, where N is the server's count, S a probe system prompt,
  U a probe user message;
- an assistant message without calls: `N(S, U, m, U) - N(S, U, U)`;
- a tool result: `N(S, U, A2, r, m) - N(S, U, A2, r)`, A2 a probe call pair answered by probe
  result r: the result as one of several of one reply;
- an assistant message with calls: `N(S, U, m, r1..rk) - N(S, U) - sum(count of ri)`, r1..rk probe
  results of its calls: the call together with what its results cost beyond their own text (Qwen's
  template wraps the results of one reply in one user turn; that wrapper is the call's);
- the system prompt: `N(m, U) - count(U) - REPLY_PRIMING - count_tools(tools)`: it takes what the
  template adds once per request (the reply's opening, tools folded into the system turn and where
  they meet the prompt's text);
- the tools: `N(S, U) with them - N(S, U) without them`.

The sum of these over a request is the server's count of that request when the template renders
each message by itself (ChatML: Qwen, Hermes; Llama 3; Anthropic's and OpenAI's counting APIs):
the request opens with its system prompt, and each call is followed by its results, as every context
a strategy builds is (`ctxbench.harness.context.conversation_problems`). `EndpointCounter.residual`
says how far a request is from it. Each new message costs the server one or two frame counts, and
each frame count is cached by content, so a run asks the server about the messages a turn adds, not
about every message of every turn.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from ctxbench.harness.records import Usage
from ctxbench.harness.tokens import REPLY_PRIMING, TokenCounter, TokenizerError

__all__ = ["EndpointCounter", "CalibratedCounter", "PromptCounter", "CALIBRATION_MARGIN", "MARKUP", "message_key",
           "learn_from_reply"]

CALIBRATION_MARGIN = 1.25
"""`calibrated` before the endpoint has reported any prompt: its estimate times this, so that a first
budget errs on the safe side."""
MARKUP = {"message": 5, "call": 10, "result": 6, "tools": 75}
"""The tokens `calibrated` expects a chat template to add, unscaled: per message (ChatML's
`<|im_start|>role\n` and `<|im_end|>\n`), per tool call and per tool result (the `<tool_call>` and
`<tool_response>` wrapping of Qwen and Hermes), and once around the tool schemas (their preamble)."""


class PromptCounter(Protocol):
    """A server's own counting (`ctxbench.harness.models.served` asks llama.cpp, vLLM, Anthropic or
    OpenAI over HTTP)."""

    where: str
    """What is asked, for messages: e.g. `POST http://127.0.0.1:8080/v1/chat/completions/input_tokens`."""

    def count_prompt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        """The prompt tokens of a chat request with `messages` and `tools`, as the server would report
        them in `usage.prompt_tokens` (the reply's opening included)."""
        ...

    def count_text(self, text: str) -> int:
        """The tokens of `text` by itself."""
        ...


def message_key(message: dict[str, Any]) -> tuple[Any, ...]:
    """What a message's count depends on: its role, content, calls and what its result answers."""
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        content = json.dumps(content, sort_keys=True)
    calls = tuple((c.get("id"), c["function"]["name"], _arguments_text(c["function"].get("arguments")))
                  for c in message.get("tool_calls") or ())
    return message.get("role"), content, message.get("tool_call_id"), message.get("name"), calls


def _arguments_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


_PROBE_SYSTEM: dict[str, Any] = {"role": "system", "content": "You are a helpful assistant."}
_PROBE_USER: dict[str, Any] = {"role": "user", "content": "Go on."}
_PROBE_ID = "call_probe0"
_FAMILY_LOCK = threading.Lock()


def _probe_call(call_id: str, name: str = "probe") -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}}


def _probe_result(call_id: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": "done"}


class EndpointCounter(TokenCounter):
    """Counts as the server does (`model.tokenizer: endpoint`), message by message in fixed frames
    (the module's docstring says how), for requests that carry `tools`.

    Each text, message and frame is counted once (cached by content); one counter may serve the runs
    of a process in threads. `for_tools` gives the counter for requests with other tools (an external
    agent's own), one per distinct tool set, sharing the server and the frame cache; `count_prompt`
    counts a request with whichever tools it carries.
    """

    def __init__(self, server: PromptCounter, tools: list[dict[str, Any]] | None = None, *,
                 name: str = "endpoint", _frames: dict[bytes, int] | None = None,
                 _family: dict[str, EndpointCounter] | None = None) -> None:
        self.name = name
        self.server = server
        self.tools = list(tools or [])
        self._tools_key = json.dumps(self.tools, sort_keys=True)
        self._frames = {} if _frames is None else _frames
        self._family = {} if _family is None else _family
        """The counters of one server by tool set (this one's among them)."""
        self._family.setdefault(self._tools_key, self)
        self._cache: dict[str, int] = {}
        self._messages: dict[tuple[Any, ...], int] = {}
        self._lock = threading.Lock()
        self.encoded_tokens = 0
        self.counted_tokens = 0
        self.server_calls = 0
        """Frames the server counted (cache misses)."""

    def for_tools(self, tools: list[dict[str, Any]]) -> EndpointCounter:
        """The counter for requests with `tools`: this one for its own, else the one its server keeps for
        that tool set (made the first time, sharing this one's server and frame cache)."""
        if tools is self.tools:
            return self
        key = json.dumps(list(tools or []), sort_keys=True)
        with _FAMILY_LOCK:
            counter = self._family.get(key)
            if counter is None:
                counter = EndpointCounter(self.server, tools, name=self.name, _frames=self._frames,
                                          _family=self._family)
        return counter

    def count_prompt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        """A request's prompt tokens, counted with its own `tools` (by `for_tools(tools)`)."""
        counter = self.for_tools(tools)
        return counter.count_messages(messages) + counter._tools_count()

    def count(self, text: str) -> int:
        """Tokens of `text` by itself (the server's tokenizer, no template)."""
        n = self._cache.get(text)
        if n is None:
            n = self._cache[text] = self.server.count_text(text)
            self.encoded_tokens += n
        self.counted_tokens += n
        return n

    def count_message(self, message: dict[str, Any]) -> int:
        """Tokens one message adds to a request, its template included."""
        key = message_key(message)
        n = self._messages.get(key)
        if n is None:
            n = self._messages[key] = self._measure(message)
        self.counted_tokens += n
        return n

    def count_tools(self, tools: list[dict[str, Any]]) -> int:
        """Tokens the tool schemas add to a request, as the template renders them.

        Raises:
            TokenizerError: `tools` are not this counter's (its system prompt's count depends on them:
                take `for_tools(tools)`).
        """
        if tools is not self.tools and json.dumps(tools or [], sort_keys=True) != self._tools_key:
            raise TokenizerError(f"this {self.name} counter counts requests with its own {len(self.tools)} tools, "
                                 f"not these {len(tools or [])}: count with its for_tools(tools)")
        return self._tools_count()

    def count_request(self, messages: list[dict[str, Any]]) -> int:
        """The server's own count of one request with this counter's tools (one frame, cached)."""
        return self._n(messages)

    def residual(self, messages: list[dict[str, Any]]) -> int:
        """The server's count of a request minus this counter's (0 where the template renders each
        message by itself)."""
        return self.count_request(messages) - self.count_messages(messages) - self._tools_count()

    def _tools_count(self) -> int:
        if not self.tools:
            return 0
        base = [_PROBE_SYSTEM, _PROBE_USER]
        return self._n(base) - self._n(base, tools=False)

    def _measure(self, m: dict[str, Any]) -> int:
        s, u, role = _PROBE_SYSTEM, _PROBE_USER, m.get("role")
        if role in ("system", "developer"):
            return self._n([m, u]) - self.count_message(u) - REPLY_PRIMING - self._tools_count()
        if role == "tool":
            pair: dict[str, Any] = {"role": "assistant", "content": "", "tool_calls": [
                _probe_call(_PROBE_ID), _probe_call(str(m.get("tool_call_id") or ""), str(m.get("name") or "probe"))]}
            frame = [s, u, pair, _probe_result(_PROBE_ID)]
            return self._n([*frame, m]) - self._n(frame)
        if role == "assistant" and m.get("tool_calls"):
            results = [_probe_result(str(c.get("id") or "")) for c in m["tool_calls"]]
            return self._n([s, u, m, *results]) - self._n([s, u]) - sum(self.count_message(r) for r in results)
        if role == "assistant":
            return self._n([s, u, m, u]) - self._n([s, u, u])
        return self._n([s, u, m]) - self._n([s, u])

    def _n(self, messages: list[dict[str, Any]], tools: bool = True) -> int:
        """The server's count of a frame, cached by content (a digest of it: frames hold whole tool outputs)."""
        key = hashlib.blake2b(json.dumps([messages, self._tools_key if tools else None], sort_keys=True).encode(),
                              digest_size=16).digest()
        n = self._frames.get(key)
        if n is None:
            n = self._frames[key] = self.server.count_prompt(messages, self.tools if tools else [])
            with self._lock:
                self.server_calls += 1
        return n

    def encode(self, text: str) -> list[int]:
        raise TokenizerError(f"the {self.name} tokenizer counts on the server; it does not encode here")

    def decode(self, tokens: list[int]) -> str:
        raise TokenizerError(f"the {self.name} tokenizer counts on the server; it does not decode here")


_DIGITS = re.compile(r"\d+")


@dataclass
class _Fit:
    """One way of reading tiktoken's counts (digits split or not) fitted to what the server reported."""

    split_digits: bool
    served: float = 0.0
    """Tokens the server reported for the messages new in each request, less their expected markup."""
    text: float = 0.0
    """tiktoken's tokens of their text, read this way."""
    missed: float = 0.0
    """How far this fit's estimates of the new messages were from what the server then reported."""

    @property
    def ratio(self) -> float:
        return self.served / self.text if self.served > 0 and self.text > 0 else 1.0


class CalibratedCounter(TokenCounter):
    """tiktoken's counts fitted to the served model's (`model.tokenizer: calibrated`), for one run:
    `observe` each reply's reported prompt tokens.

    A message the server has not counted yet is estimated as `ratio * text + markup`: its text in
    tiktoken's tokens, its chat template's markup (MARKUP) unscaled. Two readings of the text are
    fitted side by side, digits as tiktoken groups them (by three: OpenAI's and Llama 3's tokenizers)
    and one token per digit (Qwen, DeepSeek, Mistral, Gemma); the one whose estimates of the messages
    each request added came closer is used, one digit a token until they differ. Before the first
    observation every estimate is padded by CALIBRATION_MARGIN. A request's report also fixes the
    counts of the messages new in it: they share the reported count, less what the messages already
    counted take, in proportion to their estimates, and keep that share; so a request of messages the
    server has counted before is counted as the server counted it.
    """

    def __init__(self, encoding_name: str = "cl100k_base", margin: float = CALIBRATION_MARGIN) -> None:
        super().__init__(encoding_name)
        self.name = "calibrated"
        self.encoding_name = encoding_name
        self.margin = margin
        self.observations = 0
        self._fits = (_Fit(split_digits=True), _Fit(split_digits=False))
        self._observing = threading.Lock()
        """One observation at a time (a gateway's conversations share one counter)."""
        self._given: dict[tuple[Any, ...] | str, int] = {}
        self._digits: dict[str, int] = {}

    @property
    def fit(self) -> _Fit:
        """The reading in use (the first of the closest)."""
        return min(self._fits, key=lambda f: f.missed)

    @property
    def ratio(self) -> float:
        """Served tokens per tiktoken token of text, as fitted so far."""
        return self.fit.ratio

    def count(self, text: str) -> int:
        """`text`'s tokens, estimated."""
        return round(self._estimate(self._text(text, self.fit), 0))

    def count_message(self, message: dict[str, Any]) -> int:
        """The count the server's report gave this message, or its estimate."""
        given = self._given.get(message_key(message))
        return given if given is not None else round(self._estimate(*self._parts(message, self.fit)))

    def count_tools(self, tools: list[dict[str, Any]]) -> int:
        if not tools:
            return 0
        text = self._tools_text(tools)
        given = self._given.get(text)
        return given if given is not None else round(self._estimate(self._text(text, self.fit), MARKUP["tools"]))

    def observe(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], reported: int) -> None:
        """Learn from a request the endpoint answered with `reported` prompt tokens (`usage.prompt_tokens`)."""
        if reported <= 0:
            return
        with self._observing:
            self._observe(messages, tools, reported)

    def _observe(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], reported: int) -> None:
        units: dict[tuple[Any, ...] | str, list[Any]] = {}  # key -> [message or tools text, occurrences]
        known = REPLY_PRIMING
        items: list[tuple[tuple[Any, ...] | str, Any]] = [(message_key(m), m) for m in messages]
        if tools:
            items.append((self._tools_text(tools), self._tools_text(tools)))
        for key, item in items:
            if key in self._given:
                known += self._given[key]
            else:
                units.setdefault(key, [item, 0])[1] += 1
        left = reported - known
        if not units:
            return
        for f in self._fits:
            parts = [(self._unit(item, f), n) for item, n in units.values()]
            text = sum(t * n for (t, _), n in parts)
            served = left - sum(m * n for (_, m), n in parts)
            if self.observations:
                f.missed += abs(f.ratio * text - served)
            f.served += served
            f.text += text
            if not self.observations:  # until estimates can be checked: the reading nearer a token per token
                f.missed = abs(f.served - f.text)
        self.observations += 1
        if left >= sum(n for _, n in units.values()):
            self._share(units, left, self.fit)

    def _share(self, units: dict[Any, list[Any]], left: int, fit: _Fit) -> None:
        """Give each new unit its share of `left`, in proportion to its estimate; the shares add up to it."""
        estimates = {key: max(1.0, fit.ratio * t + m) for key, (t, m) in
                     ((key, self._unit(item, fit)) for key, (item, _) in units.items())}
        total = sum(estimates[key] * n for key, (_, n) in units.items())
        shares = {key: left * estimates[key] / total for key in units}
        given = {key: max(1, int(share)) for key, share in shares.items()}
        missing = left - sum(given[key] * n for key, (_, n) in units.items())
        for key in sorted(units, key=lambda k: shares[k] - given[k], reverse=True):
            if missing >= units[key][1]:
                given[key] += 1
                missing -= units[key][1]
        self._given.update(given)

    def _estimate(self, text: float, markup: float) -> float:
        fit = self.fit
        return fit.ratio * text + markup if self.observations else self.margin * (text + markup)

    def _unit(self, item: Any, fit: _Fit) -> tuple[float, float]:
        """(text, markup) of a message or of the tools' text."""
        return (self._text(item, fit), MARKUP["tools"]) if isinstance(item, str) else self._parts(item, fit)

    def _parts(self, message: dict[str, Any], fit: _Fit) -> tuple[float, float]:
        """(text, markup) of a message: tiktoken's tokens of its content and calls read as `fit` reads
        them, and the markup its template adds."""
        calls = message.get("tool_calls") or ()
        text = self._text(message.get("content") or "", fit) + sum(
            self._text(c["function"]["name"], fit) + self._text(c["function"]["arguments"], fit) for c in calls)
        markup = MARKUP["message"] + MARKUP["call"] * len(calls)
        return text, markup + (MARKUP["result"] if message.get("role") == "tool" else 0)

    def _text(self, text: str, fit: _Fit) -> int:
        n = TokenCounter.count(self, text)
        if fit.split_digits:
            extra = self._digits.get(text)
            if extra is None:  # tiktoken makes a token of up to three digits
                extra = self._digits[text] = sum(len(run) - -(-len(run) // 3) for run in _DIGITS.findall(text))
            n += extra
        return n


def learn_from_reply(counter: TokenCounter, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                     usage: Usage) -> None:
    """What a reply to the request of `messages` and `tools` teaches the counter that counted it: a
    calibrated counter fits the prompt tokens the endpoint reported (not a usage estimated here, which
    is the counter's own count); the others count as they did."""
    if isinstance(counter, CalibratedCounter) and not usage.estimated:
        counter.observe(messages, tools, usage.prompt_tokens)
