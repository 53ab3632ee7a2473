"""The wire formats ctxbench's endpoints speak, read onto one request and answered in the client's own.

An agent calls a model in one of four formats: OpenAI Chat Completions (`POST /v1/chat/completions`,
`ctxbench.harness.wire.chat`), the Anthropic Messages API (`POST /v1/messages`, Claude Code's,
`ctxbench.harness.wire.messages`), the OpenAI Responses API (`POST /v1/responses`, Codex CLI's,
`ctxbench.harness.wire.responses`) or the Gemini API (`POST /v1beta/models/MODEL:generateContent`,
Gemini CLI's, `ctxbench.harness.wire.gemini`), whose routes carry the model. Each format reads its
body as a `ModelRequest` (the messages and tools in OpenAI's chat format, which the History reading,
the strategies and the models all take) or a `Refusal`, and writes a `Completion` or a `Refusal` back
as its own reply: a JSON body, or server-sent events when the request streams, written whole or, by
its `StreamWriter`, as the model writes it. Every reply has an id of its own (`reply_id`). Whatever
answers the request (the simulator, the gateway, a run's route) never sees the format.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from ctxbench.harness.context import ContextOverflow
from ctxbench.harness.protocols import (Completion, ContextLengthExceeded, FatalModelError, MalformedOutput,
                                        RequestRefused, TransientModelError)

__all__ = ["WireName", "ModelRequest", "Refusal", "Crash", "MODEL_FAILURES", "model_refusal", "HttpReply", "Wire",
           "StreamWriter", "reply_id", "json_reply", "sse_reply", "sse_events"]

WireName = Literal["chat", "messages", "responses", "gemini"]


@dataclass(frozen=True)
class ModelRequest:
    """One model call an agent made, whatever its format."""

    wire: WireName
    """The format it came in, and the one its reply goes back in."""
    model: str
    """The model it asked for."""
    messages: list[dict[str, Any]]
    """Its conversation in OpenAI's chat format (system, user, assistant with `tool_calls`, tool)."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """The tools it offers, as chat-format function tools."""
    stream: bool = False
    """It asked for its reply as server-sent events."""
    conversation: str | None = None
    """The conversation the client names (`user`, a session id), where it names one."""
    seed: int | None = None
    max_output_tokens: int | None = None
    include_usage: bool = False
    """Chat Completions: a streamed reply ends with a chunk carrying the usage."""
    freeform_tools: tuple[str, ...] = ()
    """Responses: the tools whose calls take one free-form string (`custom` tools), written back as
    `custom_tool_call` items."""
    cache_marks: tuple[tuple[str, str, dict[str, Any]], ...] = ()
    """(role, text, cache_control) of the messages the client marked for its provider's prompt cache
    (Anthropic's `cache_control`), so that an Anthropic upstream gets the marks on the messages the
    strategy kept as they were."""


@dataclass(frozen=True)
class Refusal:
    """An error answer; each format writes it in its own error shape."""

    status: int
    message: str
    kind: str = "invalid_request_error"
    """OpenAI's error `type` (`invalid_request_error`, `server_error`, ...)."""
    code: str | None = None
    """OpenAI's error `code` (`context_length_exceeded`, `max_turns`, ...)."""
    param: str | None = None


@dataclass(frozen=True)
class Crash(Refusal):
    """Not a refusal of the call: ctxbench failed while answering it (a bug). The client gets it in its
    format's error shape like a refusal, as a 500 `server_error` (which clients retry)."""

    @classmethod
    def of(cls, error: BaseException) -> Crash:
        return cls(500, f"ctxbench internal error: {error!r}", kind="server_error")


MODEL_FAILURES = (ContextOverflow, ContextLengthExceeded, TransientModelError, RequestRefused, MalformedOutput,
                  FatalModelError)
"""How a model call fails: a context over the window (the strategy's or the model's), the model's errors."""


def model_refusal(error: Exception) -> Refusal:
    """The answer to a model call that failed with one of MODEL_FAILURES: a request over the window as
    OpenAI answers it (400 `context_length_exceeded`), the model unavailable after its retries (503), its
    reply unreadable or a fatal error of the endpoint (502)."""
    if isinstance(error, (ContextOverflow, ContextLengthExceeded)):
        return Refusal(400, str(error), param="messages", code="context_length_exceeded")
    if isinstance(error, TransientModelError):
        return Refusal(503, f"the model is unavailable: {error}", kind="server_error")
    if isinstance(error, RequestRefused):
        return Refusal(400, f"the model's endpoint refused the request: {error}")
    if isinstance(error, MalformedOutput):
        return Refusal(502, f"the model's reply could not be read: {error}", kind="server_error")
    return Refusal(502, f"the model failed: {error}", kind="server_error")


@dataclass(frozen=True)
class HttpReply:
    """What goes back on the wire."""

    status: int
    data: bytes
    content_type: str = "application/json"


class Wire(Protocol):
    """One wire format: reads a request body, writes the answer to it."""

    name: WireName

    def serves(self, route: str) -> bool:
        """Whether it is served on `route` (a request's path without its query string: `/v1/messages`,
        `/v1beta/models/MODEL:generateContent`)."""
        ...

    def read(self, body: Any, path: str) -> ModelRequest | Refusal:
        """The request in `body`, sent to `path` (its route and query string, where a format reads the
        model or the streaming)."""
        ...

    def reply(self, request: ModelRequest, completion: Completion) -> HttpReply: ...

    def refuse(self, refusal: Refusal) -> HttpReply: ...

    def streamer(self, request: ModelRequest) -> StreamWriter:
        """The writer of `request`'s streamed reply as the model writes it (`StreamWriter`)."""
        ...


class StreamWriter(Protocol):
    """One streamed reply written as the model's text arrives, in its format's events: the opening, each
    piece of text, then the rest from the whole reply (the tool calls, the finish, the usage), or an
    error in the stream where the model failed after the reply had begun. Each returns the bytes to send."""

    def opening(self) -> bytes: ...

    def text(self, piece: str) -> bytes: ...

    def closing(self, completion: Completion) -> bytes: ...

    def failure(self, refusal: Refusal) -> bytes: ...


def reply_id(prefix: str) -> str:
    """A new id for one reply (`chatcmpl-...`, `msg_...`, `resp_...`): no two replies share one."""
    return prefix + uuid.uuid4().hex[:24]


def json_reply(status: int, body: Any) -> HttpReply:
    return HttpReply(status, json.dumps(body).encode())


def sse_reply(events: list[tuple[str | None, dict[str, Any]]], done: bool = False) -> HttpReply:
    """Server-sent events: each (event name or None, data); with `done`, OpenAI's closing `data: [DONE]`."""
    return HttpReply(200, sse_events(events, done), "text/event-stream")


def sse_events(events: list[tuple[str | None, dict[str, Any]]], done: bool = False) -> bytes:
    """The bytes of server-sent events (`sse_reply`)."""
    lines = [(f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n" for name, data in events]
    return ("".join(lines) + ("data: [DONE]\n\n" if done else "")).encode()
