"""`anthropic`: a model behind an Anthropic Messages API endpoint (`POST /v1/messages`: api.anthropic.com,
or ctxbench's own `serve-sim` and `gateway`).

The context a strategy built (chat format) is sent as one Messages request: every system message's
text in `system`, tool results as `tool_result` blocks of user turns (before any text of the same
turn), tool calls as `tool_use` blocks; a part marked with `cache_control` keeps its mark. Sampling is
`temperature` (and `top_p` only when it is not 1: recent models refuse both), with no seed: the
Messages API takes none. A reply's text blocks are its text joined as any message's text parts are
(`ctxbench.harness.chat.join_texts`: by a newline).

The request is streamed and times out on silence, `model.idle_timeout_s`
(`ctxbench.harness.models.streaming`); its events are put together into the `message` the endpoint
would have answered unstreamed, which is read as any is.

Errors are mapped onto the typed errors of `ctxbench.harness.protocols`:

- 400 whose message says the prompt is too long -> ContextLengthExceeded;
- 401 / 403, 404, any other 4xx -> FatalModelError (the experiment stops);
- 408, 409, 429, 5xx (529: overloaded), connection errors, timeouts, and a 200 that is not a message
  (UnreadableReply) -> retried by the loop every endpoint's calls take
  (`ctxbench.harness.models.endpoint.call_with_retries`), then TransientModelError.

Every text taken from the endpoint is scrubbed of key values (`ctxbench.harness.redact`).
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, ClassVar, Iterator

from ctxbench.harness.chat import join_texts, read_arguments, text_parts
from ctxbench.harness.config import ModelConfig
from ctxbench.harness.models.endpoint import EndpointModel, call_with_retries, model_ids, shared_client, unreadable
from ctxbench.harness.models.streaming import Event, Relay, TextListener, read_reply, stream_error
from ctxbench.harness.protocols import Completion, Usage
from ctxbench.harness.redact import scrub
from ctxbench.harness.records import ToolCall

if TYPE_CHECKING:
    import anthropic

__all__ = ["AnthropicModel", "preflight", "messages_request", "streamed_message", "DEFAULT_BASE_URL"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
"""The API root when `model.base_url` is unset (without `/v1`, as Anthropic's client takes it)."""

class AnthropicModel(EndpointModel):
    """One run's model behind an Anthropic Messages API endpoint (`EndpointModel`: the key, pickling). The
    seed is kept for the record: the Messages API takes none."""

    takes_cache_marks: ClassVar[bool] = True
    """The client's `cache_control` marks reach it (`ctxbench.harness.wire.messages.marked_for`)."""

    SDK = "anthropic"
    HOST = "api.anthropic.com"
    MODELS_PATH = "/v1/models"

    @staticmethod
    def _connect(config: ModelConfig) -> anthropic.Anthropic:
        """The shared client for `config`'s endpoint (`shared_client`). The key and base_url are always
        given, so the client reads neither `ANTHROPIC_*` variables nor credential files."""
        return shared_client(config, "anthropic", _new_client)

    @staticmethod
    def _error_message(body: Any) -> Any:
        """`{"type": "error", "error": {"message": ...}}`"""
        error = body.get("error") if isinstance(body, dict) else None
        return error.get("message") if isinstance(error, dict) else None

    @staticmethod
    def _served(client: anthropic.Anthropic, url: str) -> set[str]:
        try:
            listing = client.get("/v1/models", cast_to=object, options={"params": {"limit": 1000}})
        except json.JSONDecodeError:
            listing = None
        return model_ids(listing, url, "a reply that is not a", " ".join(str(listing)[:120].split()),
                         "check that base_url is the API's root (https://api.anthropic.com, without /v1)")

    @staticmethod
    def _listing_hint(status: int, url: str) -> str:
        doubled = status == 404 and url.endswith("/v1/v1/models")
        return " (an anthropic base_url is the API's root, without /v1)" if doubled else ""

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 listener: TextListener | None = None) -> Completion:
        """One message, streamed (its text told to `listener` as it arrives, where given); retries
        transient failures, raises the typed errors of `ctxbench.harness.protocols`."""
        body = messages_request(self.config, messages, tools)
        relay = Relay(listener)
        return call_with_retries(self.config, self.where(self.config),
                                 lambda: self._attempt(body, messages, tools, relay), relay.passed_on)

    def _attempt(self, body: dict[str, Any], messages: list[dict[str, Any]],
                 tools: list[dict[str, Any]] | None = None, relay: Relay | None = None) -> Completion:
        """One request; raises the typed errors, TransientModelError (with `retry_after`) for what is retried."""
        where, tell = self.where(self.config), relay or Relay(None)
        # as it is: `messages.create` would walk it (and refuse a large max_tokens without streaming)
        response, started = self._open("/v1/messages", body)
        reply = read_reply(response, self.config, where, "not a message", started,
                           lambda events: streamed_message(events, where, tell))
        return self._completion(reply, messages, where, tools or [])

    def _completion(self, response: Any, messages: list[dict[str, Any]], where: str,
                    tools: list[dict[str, Any]] | None = None) -> Completion:
        content = _field(response, "content")
        if not isinstance(content, list):
            raise unreadable(where, "no content list", response, quoted=True)
        texts, calls = [], []
        for i, block in enumerate(content):
            kind = _field(block, "type")
            if kind == "text":
                texts.append(scrub(str(_field(block, "text") or "")))
            elif kind == "tool_use":
                name = scrub(str(_field(block, "name") or ""))
                arguments = scrub(json.dumps(_field(block, "input") or {}))
                call_id = _field(block, "id") or "toolu_" + hashlib.sha256(
                    json.dumps([len(messages), i, name, arguments]).encode()).hexdigest()[:10]
                calls.append(ToolCall(scrub(str(call_id)), name, arguments))
        text = join_texts(texts)
        return Completion(text, tuple(calls), self._usage(_field(response, "usage"), messages, tools or [],
                                                                   text, calls))

    def _usage(self, usage: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]], text: str,
               calls: list[ToolCall]) -> Usage:
        if usage is None:  # the endpoint reported none
            return self.estimated_usage(messages, tools, text, calls)
        read = _field(usage, "cache_read_input_tokens") or 0
        written = _field(usage, "cache_creation_input_tokens") or 0
        prompt = (_field(usage, "input_tokens") or 0) + read + written
        return Usage(int(prompt), int(_field(usage, "output_tokens") or 0), int(read), int(written))


def messages_request(config: ModelConfig, messages: list[dict[str, Any]],
                     tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The Messages API request body for a context in chat format and chat-format function tools."""
    body: dict[str, Any] = {"model": config.name, "max_tokens": config.max_output_tokens,
                            "temperature": config.temperature}
    if config.top_p != 1.0:
        body["top_p"] = config.top_p
    system = [block for m in messages if m.get("role") in ("system", "developer") for block in _text_blocks(m)]
    if system:
        body["system"] = system
    body["messages"] = _turns(messages)
    if tools:
        body["tools"] = [{"name": f["name"], "description": f.get("description") or "",
                          "input_schema": f.get("parameters") or {"type": "object", "properties": {}}}
                         for f in (t.get("function", t) for t in tools)]
    body["stream"] = True
    return body


def _turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The user and assistant turns: consecutive messages of one side merged into one turn, a user
    turn's tool results before its text (as Anthropic requires)."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "assistant":
            calls = [(call.get("id"), call.get("function") or {}) for call in message.get("tool_calls") or ()]
            side, blocks = "assistant", _text_blocks(message) + [
                {"type": "tool_use", "id": str(call_id or ""), "name": str(function.get("name") or ""),
                 "input": read_arguments(function.get("arguments") or "")} for call_id, function in calls]
        elif role == "tool":
            side, blocks = "user", [_tool_result(message)]
        elif role == "user":
            side, blocks = "user", _text_blocks(message)
        else:
            continue  # system and developer messages are the request's `system`
        if not blocks:
            continue
        if turns and turns[-1]["role"] == side:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": side, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":
            turn["content"].sort(key=lambda block: block["type"] != "tool_result")  # stable: each kind in order
    return turns


def _text_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content as text blocks, each part's `cache_control` kept; empty texts dropped
    (Anthropic refuses an empty text block)."""
    blocks = []
    for part in text_parts(message.get("content")):
        if part.get("text"):
            block = {"type": "text", "text": str(part["text"])}
            if isinstance(part.get("cache_control"), dict):
                block["cache_control"] = part["cache_control"]
            blocks.append(block)
    return blocks


def _tool_result(message: dict[str, Any]) -> dict[str, Any]:
    """A tool message as a `tool_result` block, with the (last) mark of its parts."""
    blocks = _text_blocks(message)
    result: dict[str, Any] = {"type": "tool_result", "tool_use_id": str(message.get("tool_call_id") or ""),
                              "content": join_texts(b["text"] for b in blocks)}
    marks = [b["cache_control"] for b in blocks if "cache_control" in b]
    if marks:
        result["cache_control"] = marks[-1]
    if message.get("is_error"):
        result["is_error"] = True
    return result


def _field(item: Any, name: str) -> Any:
    """A field of a reply's block or usage, whether the client built a typed object or left a dict."""
    return item.get(name) if isinstance(item, dict) else getattr(item, name, None)


def streamed_message(events: Iterator[Event], where: str, tell: TextListener) -> dict[str, Any]:
    """The `message` a Messages API stream adds up to: `message_start`'s message, each content block
    with its `text_delta` pieces joined and its `input_json_delta` pieces read as its input,
    `message_delta`'s stop reason and usage over the start's (a stream that ends before it was cut
    off: UnreadableReply, retried). Each piece of text is told to `tell` as it
    is read ("" at `message_start`, a newline between text blocks, as `join_texts` joins them)."""
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    inputs: dict[int, list[str]] = {}
    for name, event in events:
        kind = event.get("type", name) if isinstance(event, dict) else name
        if kind == "error" or not isinstance(event, dict):
            raise stream_error(where, event)
        if kind == "message_start":
            message = dict(event.get("message") or {})
            tell("")
        elif kind == "content_block_start":
            block = dict(event.get("content_block") or {})
            if block.get("type") == "text" and any(b.get("type") == "text" for b in blocks.values()):
                tell("\n")
            blocks[int(event.get("index", len(blocks)))] = block
            tell(str(block.get("text") or "") if block.get("type") == "text" else "")
        elif kind == "content_block_delta":
            opened, delta = blocks.get(int(event.get("index", -1))), event.get("delta") or {}
            if opened is not None and delta.get("type") == "text_delta":
                opened["text"] = str(opened.get("text") or "") + str(delta.get("text") or "")
                tell(str(delta.get("text") or ""))
            elif opened is not None and delta.get("type") == "input_json_delta":
                inputs.setdefault(int(event["index"]), []).append(str(delta.get("partial_json") or ""))
        elif kind == "message_delta" and message is not None:
            message.update({k: v for k, v in (event.get("delta") or {}).items() if v is not None})
            told = {k: v for k, v in (event.get("usage") or {}).items() if v is not None}
            message["usage"] = {**(message.get("usage") or {}), **told} if message.get("usage") or told else None
    if message is None or message.get("stop_reason") is None:  # cut off mid-reply
        raise unreadable(where, "a stream that ended before its message_delta", "", quoted=True)
    for index, pieces in inputs.items():
        blocks[index]["input"] = read_arguments("".join(pieces))
    message["content"] = [blocks[i] for i in sorted(blocks)]
    return message


def _new_client(config: ModelConfig, key: str) -> anthropic.Anthropic:
    import anthropic  # an optional extra

    from anthropic._constants import DEFAULT_CONNECTION_LIMITS

    # every connection kept alive (the default keeps 100): hundreds of runs in flight would otherwise
    # open a connection per call
    pool = DEFAULT_CONNECTION_LIMITS.max_connections
    limits = type(DEFAULT_CONNECTION_LIMITS)(max_connections=pool, max_keepalive_connections=pool)
    return anthropic.Anthropic(base_url=config.base_url or DEFAULT_BASE_URL, api_key=key, max_retries=0,
                               timeout=config.idle_timeout_s,
                               http_client=anthropic.DefaultHttpxClient(limits=limits))


preflight = AnthropicModel.preflight
"""The check before a run (`EndpointModel.preflight`): `GET {base_url}/v1/models` holds `model.name`."""
