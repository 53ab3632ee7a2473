"""OpenAI Chat Completions on the wire (`POST /v1/chat/completions`): the format ctxbench reads natively.

The request's messages and tools are already the chat format every other part takes; a reply is a
`chat.completion`, or `chat.completion.chunk` events when the request streams (the last one with the
usage when `stream_options.include_usage` asks for it), and an error is `{"error": {message, type,
param, code}}`.
"""

from __future__ import annotations

import time
from typing import Any

from ctxbench.harness.chat import content_text
from ctxbench.harness.protocols import Completion
from ctxbench.harness.wire.base import (HttpReply, ModelRequest, Refusal, WireName, json_reply, reply_id, sse_events,
                                        sse_reply)

__all__ = ["CHAT", "ChatWire", "ChatStream", "openai_error", "completion_body"]


def openai_error(refusal: Refusal) -> dict[str, Any]:
    """An error in OpenAI's shape (Chat Completions and Responses share it)."""
    return {"error": {"message": refusal.message, "type": refusal.kind, "param": refusal.param, "code": refusal.code}}


def completion_body(completion: Completion, model_name: str, reply: str | None = None,
                    created: int | None = None) -> dict[str, Any]:
    """A chat.completion response for `completion` (its id `reply`, else a new one)."""
    message: dict[str, Any] = {"role": "assistant", "content": completion.text}
    if completion.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in completion.tool_calls]
    usage = completion.usage
    return {
        "id": reply or reply_id("chatcmpl-"),
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": model_name,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if completion.tool_calls else "stop"}],
        "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                  "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                  "prompt_tokens_details": {"cached_tokens": usage.cached_tokens}},
    }


def stream_chunks(body: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """A chat.completion body as the chunks a streamed reply sends: role and content, each tool call, the end."""
    content = body["choices"][0]["message"].get("content") or ""
    return [_chunk(_head(body), {"role": "assistant", "content": content}, include_usage)] + _rest(body, include_usage)


def _chunk(head: dict[str, Any], delta: dict[str, Any], include_usage: bool, finish: str | None = None) -> dict[str, Any]:
    extra = {"usage": None} if include_usage else {}
    return {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}], **extra}


def _head(body: dict[str, Any]) -> dict[str, Any]:
    return {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}


def _rest(body: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """The chunks after the text: each tool call, the finish, the usage (where asked for)."""
    choice, head = body["choices"][0], _head(body)
    chunks = []
    for n, call in enumerate(choice["message"].get("tool_calls") or []):
        chunks.append(_chunk(head, {"tool_calls": [{"index": n, **call}]}, include_usage))
    chunks.append(_chunk(head, {}, include_usage, choice["finish_reason"]))
    if include_usage:
        chunks.append({**head, "choices": [], "usage": body["usage"]})
    return chunks


def _as_text(message: dict[str, Any]) -> dict[str, Any]:
    """A message whose content is a list of plain text parts (Pi sends its prompt so) with that text as its
    content: the form every reader of the messages takes."""
    content = message.get("content")
    if isinstance(content, list) and content and all(isinstance(p, dict) and p.keys() == {"type", "text"}
                                                     and p["type"] == "text" for p in content):
        return {**message, "content": content_text(content)}
    return message


class ChatWire:
    """OpenAI Chat Completions."""

    name: WireName = "chat"
    paths: tuple[str, ...] = ("/v1/chat/completions",)

    def serves(self, route: str) -> bool:
        return route in self.paths

    def read(self, body: Any, path: str = "") -> ModelRequest | Refusal:
        if not isinstance(body, dict):
            return Refusal(400, "the request body must be a JSON object")
        messages, tools = body.get("messages"), body.get("tools") or []
        if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
            return Refusal(400, "`messages` must be a non-empty list of message objects", param="messages")
        if not isinstance(tools, list):
            return Refusal(400, "`tools` must be a list", param="tools")
        messages = [_as_text(m) for m in messages]
        options = body.get("stream_options")
        seed, user = body.get("seed"), body.get("user")
        limit = body.get("max_completion_tokens") or body.get("max_tokens")
        return ModelRequest("chat", str(body.get("model")), messages, tools, stream=bool(body.get("stream")),
                            conversation=user if isinstance(user, str) and user else None,
                            seed=seed if isinstance(seed, int) else None,
                            max_output_tokens=limit if isinstance(limit, int) else None,
                            include_usage=isinstance(options, dict) and bool(options.get("include_usage")))

    def reply(self, request: ModelRequest, completion: Completion) -> HttpReply:
        body = completion_body(completion, request.model)
        if request.stream:
            return sse_reply([(None, c) for c in stream_chunks(body, request.include_usage)], done=True)
        return json_reply(200, body)

    def refuse(self, refusal: Refusal) -> HttpReply:
        return json_reply(refusal.status, openai_error(refusal))

    def streamer(self, request: ModelRequest) -> ChatStream:
        return ChatStream(request)


class ChatStream:
    """A chat.completion's chunks written as the model writes it: the role, each piece of content, then
    the tool calls, the finish, the usage and `[DONE]`; an error as OpenAI sends one in a stream."""

    def __init__(self, request: ModelRequest) -> None:
        self.request = request
        self.id, self.created = reply_id("chatcmpl-"), int(time.time())
        self.head = {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": request.model}

    def opening(self) -> bytes:
        return sse_events([(None, _chunk(self.head, {"role": "assistant", "content": ""}, self.request.include_usage))])

    def text(self, piece: str) -> bytes:
        return sse_events([(None, _chunk(self.head, {"content": piece}, self.request.include_usage))])

    def closing(self, completion: Completion) -> bytes:
        body = completion_body(completion, self.request.model, self.id, self.created)
        return sse_events([(None, c) for c in _rest(body, self.request.include_usage)], done=True)

    def failure(self, refusal: Refusal) -> bytes:
        return sse_events([(None, openai_error(refusal))], done=True)


CHAT = ChatWire()
