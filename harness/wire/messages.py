"""The Anthropic Messages API on the wire (`POST /v1/messages`): Claude Code's format.

Reading a request onto the chat format:

- `system` (a string or text blocks) is the first system message; a `system` message inside
  `messages` stays a system message where it stands;
- a user message's `tool_result` blocks are `tool` messages answering their `tool_use_id` (with
  `is_error` kept on the message), its text blocks one user message after them;
- an assistant message's text blocks are its content, its `tool_use` blocks its `tool_calls` (the
  input as JSON arguments); `thinking` blocks, images and documents are dropped;
- tools with an `input_schema` are function tools; Anthropic's server tools (web search, ...) are
  not offered upstream;
- blocks marked with `cache_control` are remembered as `cache_marks`; `metadata.user_id` (Claude
  Code's carries its session id) names the conversation.

A reply is a `message` with a text block and a `tool_use` block per call (`stop_reason` `tool_use`
or `end_turn`), or, streamed, the `message_start` ... `message_stop` events; its usage splits the
prompt as Anthropic does: `input_tokens` (neither read from nor written to the cache),
`cache_read_input_tokens`, `cache_creation_input_tokens`. An error is `{"type": "error", "error":
{type, message}}`, a request over the window reads `prompt is too long: ...` as Anthropic's does.
"""

from __future__ import annotations

import json
from typing import Any

from ctxbench.harness.chat import content_text, read_arguments
from ctxbench.harness.protocols import Completion, Model
from ctxbench.harness.wire.base import (HttpReply, ModelRequest, Refusal, WireName, json_reply, reply_id, sse_events,
                                        sse_reply)

__all__ = ["MESSAGES", "MessagesWire", "MessagesStream", "message_body", "anthropic_error_type", "with_cache_marks", "marked_for", "MAX_CACHE_MARKS"]

MAX_CACHE_MARKS = 4
"""Anthropic takes at most four `cache_control` breakpoints a request."""

_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error", 503: "overloaded_error",
                529: "overloaded_error"}
_ROLES = ("user", "assistant", "system")


def anthropic_error_type(status: int) -> str:
    """The `error.type` Anthropic answers an HTTP status with."""
    return _ERROR_TYPES.get(status, "api_error" if status >= 500 else "invalid_request_error")


def _mark(blocks: Any) -> dict[str, Any] | None:
    """The (last) `cache_control` of a list of blocks, or None."""
    if not isinstance(blocks, list):
        return None
    return next((b["cache_control"] for b in reversed(blocks) if isinstance(b, dict)
                 and isinstance(b.get("cache_control"), dict)), None)


def marked_for(model: Model, messages: list[dict[str, Any]],
               marks: tuple[tuple[str, str, dict[str, Any]], ...]) -> list[dict[str, Any]]:
    """`messages` as `model` takes them: with the client's cache marks where the model keeps them (its
    `takes_cache_marks`: Anthropic's), as they are for every other (the simulator reads plain text)."""
    return with_cache_marks(messages, marks) if model.takes_cache_marks else messages


def with_cache_marks(messages: list[dict[str, Any]],
                     marks: tuple[tuple[str, str, dict[str, Any]], ...]) -> list[dict[str, Any]]:
    """`messages` (the context a strategy built) with the client's cache marks back: a message whose role
    and text the client marked becomes one text block with the client's `cache_control` (the latest
    MAX_CACHE_MARKS of them), so that an Anthropic upstream caches what the client asked it to."""
    if not marks:
        return messages
    controls = {(role, text): control for role, text, control in marks}
    marked = [i for i, m in enumerate(messages) if isinstance(m.get("content"), str) and m["content"]
              and (str(m.get("role")), m["content"]) in controls][-MAX_CACHE_MARKS:]
    out = list(messages)
    for i in marked:
        m = messages[i]
        out[i] = {**m, "content": [{"type": "text", "text": m["content"],
                                    "cache_control": controls[(str(m.get("role")), m["content"])]}]}
    return out


def _conversation(metadata: Any) -> str | None:
    user = metadata.get("user_id") if isinstance(metadata, dict) else None
    if not isinstance(user, str) or not user:
        return None
    try:
        session = json.loads(user).get("session_id")
    except (ValueError, AttributeError):
        return user
    return session if isinstance(session, str) and session else user


Marks = list[tuple[str, str, dict[str, Any]]]


def _chat_messages(system: Any, messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], Marks]:
    out: list[dict[str, Any]] = []
    marks: Marks = []

    def remember(control: dict[str, Any] | None) -> None:
        if control is not None:
            marks.append((out[-1]["role"], out[-1]["content"], control))

    if system:
        out.append({"role": "system", "content": content_text(system)})
        remember(_mark(system))
    for message in messages:
        role, content = message["role"], message.get("content")
        blocks: list[Any] = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or ())
        if role == "assistant":
            calls = [{"id": str(b.get("id") or ""), "type": "function",
                      "function": {"name": str(b.get("name") or ""), "arguments": json.dumps(b.get("input") or {})}}
                     for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
            reply: dict[str, Any] = {"role": "assistant", "content": content_text(blocks)}
            if calls:
                reply["tool_calls"] = calls
            out.append(reply)
            continue
        texts = []
        for block in blocks:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                result: dict[str, Any] = {"role": "tool", "tool_call_id": str(block.get("tool_use_id") or ""),
                                          "content": content_text(block.get("content"))}
                if block.get("is_error"):
                    result["is_error"] = True
                out.append(result)
                control = block.get("cache_control")
                remember(control if isinstance(control, dict) else _mark(block.get("content")))
            elif block.get("type") == "text":
                texts.append(block)
        if texts:
            out.append({"role": role, "content": content_text(texts)})
            remember(_mark(texts))
    return out, marks


def _check(body: Any) -> Refusal | None:
    if not isinstance(body, dict):
        return Refusal(400, "the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(
            isinstance(m, dict) and m.get("role") in _ROLES and isinstance(m.get("content"), (str, list))
            for m in messages):
        return Refusal(400, "messages: expected a non-empty list of {role: user|assistant, content: string or "
                            "blocks}", param="messages")
    if not isinstance(body.get("system") or "", (str, list)):
        return Refusal(400, "system: expected a string or a list of text blocks", param="system")
    tools = body.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tools):
        return Refusal(400, "tools: expected a list of tools, each with a name", param="tools")
    return None


def message_body(completion: Completion, model: str, reply: str | None = None) -> dict[str, Any]:
    """An Anthropic `message` for `completion` (its id `reply`, else a new one)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": completion.text}] if completion.text else []
    content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": read_arguments(c.arguments)}
                for c in completion.tool_calls]
    u = completion.usage
    return {"id": reply or reply_id("msg_"),
            "type": "message", "role": "assistant", "model": model,
            "content": content or [{"type": "text", "text": ""}],
            "stop_reason": "tool_use" if completion.tool_calls else "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": max(0, u.prompt_tokens - u.cached_tokens - u.cache_write_tokens),
                      "cache_creation_input_tokens": u.cache_write_tokens,
                      "cache_read_input_tokens": u.cached_tokens, "output_tokens": u.completion_tokens}}


def _events(body: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    """A message as the events a streamed reply sends."""
    events = [_start(body, body["usage"])]
    for index, block in enumerate(body["content"]):
        events += _block_events(index, block)
    return [(e["type"], e) for e in events + _ending(body)]


def _start(body: dict[str, Any], usage: dict[str, Any]) -> dict[str, Any]:
    start = {**body, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 0}}
    return {"type": "message_start", "message": start}


def _block_events(index: int, block: dict[str, Any]) -> list[dict[str, Any]]:
    """One content block streamed: its start, its text or input in one delta, its stop."""
    opened: dict[str, Any]
    delta: dict[str, Any]
    if block["type"] == "text":
        opened, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
    else:
        opened = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
    return [{"type": "content_block_start", "index": index, "content_block": opened},
            {"type": "content_block_delta", "index": index, "delta": delta},
            {"type": "content_block_stop", "index": index}]


def _ending(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"type": "message_delta", "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
             "usage": body["usage"]},
            {"type": "message_stop"}]


class MessagesStream:
    """A message's events written as the model writes it: `message_start` (its usage not yet known:
    the usage comes in `message_delta`), a text block with each piece as a `text_delta`, then the
    `tool_use` blocks, `message_delta` and `message_stop`; an `error` event where the model failed."""

    def __init__(self, request: ModelRequest) -> None:
        self.request, self.id, self.texting = request, reply_id("msg_"), False

    def opening(self) -> bytes:
        body = message_body(Completion(""), self.request.model, self.id)
        return _sse([_start(body, {**body["usage"], "input_tokens": 0})])

    def text(self, piece: str) -> bytes:
        events = [] if self.texting else [{"type": "content_block_start", "index": 0,
                                          "content_block": {"type": "text", "text": ""}}]
        self.texting = True
        return _sse(events + [{"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": piece}}])

    def closing(self, completion: Completion) -> bytes:
        body = message_body(completion, self.request.model, self.id)
        blocks = [b for b in body["content"] if b["type"] != "text" or not self.texting]  # the text has gone
        events = [{"type": "content_block_stop", "index": 0}] if self.texting else []
        for index, block in enumerate(blocks, start=int(self.texting)):
            events += _block_events(index, block)
        return _sse(events + _ending(body))

    def failure(self, refusal: Refusal) -> bytes:
        return _sse([{"type": "error", "error": {"type": anthropic_error_type(refusal.status), "message": refusal.message}}])


def _sse(events: list[dict[str, Any]]) -> bytes:
    return sse_events([(e["type"], e) for e in events])


class MessagesWire:
    """The Anthropic Messages API."""

    name: WireName = "messages"
    paths: tuple[str, ...] = ("/v1/messages",)

    def serves(self, route: str) -> bool:
        return route in self.paths

    def read(self, body: Any, path: str = "") -> ModelRequest | Refusal:
        refused = _check(body)
        if refused is not None:
            return refused
        messages, marks = _chat_messages(body.get("system"), body["messages"])
        tools = [{"type": "function", "function": {"name": t["name"], "description": t.get("description") or "",
                                                   "parameters": t["input_schema"]}}
                 for t in body.get("tools") or [] if isinstance(t.get("input_schema"), dict)]
        limit = body.get("max_tokens")
        return ModelRequest("messages", str(body.get("model")), messages, tools, stream=bool(body.get("stream")),
                            conversation=_conversation(body.get("metadata")),
                            max_output_tokens=limit if isinstance(limit, int) else None, cache_marks=tuple(marks))

    def reply(self, request: ModelRequest, completion: Completion) -> HttpReply:
        body = message_body(completion, request.model)
        return sse_reply(_events(body)) if request.stream else json_reply(200, body)

    def streamer(self, request: ModelRequest) -> MessagesStream:
        return MessagesStream(request)

    def refuse(self, refusal: Refusal) -> HttpReply:
        message = refusal.message
        if refusal.code == "context_length_exceeded" and not message.startswith("prompt is too long"):
            message = f"prompt is too long: {message}"
        return json_reply(refusal.status, {"type": "error", "error": {"type": anthropic_error_type(refusal.status),
                                                                      "message": message}})


MESSAGES = MessagesWire()
