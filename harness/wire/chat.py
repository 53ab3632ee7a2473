"""OpenAI Chat Completions on the wire (`POST /v1/chat/completions`): the format ctxbench reads natively.

The request's messages and tools are already the chat format every other part takes; a reply is a
`chat.completion`, or `chat.completion.chunk` events when the request streams (the last one with the
usage when `stream_options.include_usage` asks for it), and an error is `{"error": {message, type,
param, code}}`.
"""

from __future__ import annotations

import time
from typing import Any

from ctxbench.harness.protocols import Completion
from ctxbench.harness.wire.base import HttpReply, ModelRequest, Refusal, WireName, json_reply, sse_reply

__all__ = ["CHAT", "ChatWire", "openai_error", "completion_body"]


def openai_error(refusal: Refusal) -> dict[str, Any]:
    """An error in OpenAI's shape (Chat Completions and Responses share it)."""
    return {"error": {"message": refusal.message, "type": refusal.kind, "param": refusal.param, "code": refusal.code}}


def completion_body(completion: Completion, model_name: str) -> dict[str, Any]:
    """A chat.completion response for `completion`."""
    message: dict[str, Any] = {"role": "assistant", "content": completion.text}
    if completion.tool_calls:
        message["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in completion.tool_calls]
    usage = completion.usage
    return {
        "id": "chatcmpl-" + (completion.tool_calls[0].id if completion.tool_calls else "ctxbench"),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model_name,
        "choices": [{"index": 0, "message": message, "logprobs": None,
                     "finish_reason": "tool_calls" if completion.tool_calls else "stop"}],
        "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                  "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                  "prompt_tokens_details": {"cached_tokens": usage.cached_tokens}},
    }


def stream_chunks(body: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    """A chat.completion body as the chunks a streamed reply sends: role and content, each tool call, the end."""
    choice = body["choices"][0]
    message = choice["message"]
    head = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"], "model": body["model"]}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        extra = {"usage": None} if include_usage else {}
        return {**head, "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}], **extra}

    chunks = [chunk({"role": "assistant", "content": message.get("content") or ""})]
    for n, call in enumerate(message.get("tool_calls") or []):
        chunks.append(chunk({"tool_calls": [{"index": n, **call}]}))
    chunks.append(chunk({}, choice["finish_reason"]))
    if include_usage:
        chunks.append({**head, "choices": [], "usage": body["usage"]})
    return chunks


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


CHAT = ChatWire()
