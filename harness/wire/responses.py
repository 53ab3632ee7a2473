"""The OpenAI Responses API on the wire (`POST /v1/responses`): Codex CLI's format.

Reading a request onto the chat format:

- `instructions` is the first system message; `message` items keep their role (`developer`,
  `system`, `user`, `assistant`), their `input_text` / `output_text` parts joined;
- `function_call` items are the `tool_calls` of the assistant message before them (or of one of
  their own), `function_call_output` items the `tool` messages answering their `call_id`;
- a `custom` tool (one free-form string, such as Codex's `apply_patch`) is a function tool taking
  `{"input": ...}`, and its `custom_tool_call` / `custom_tool_call_output` items are read the same
  way; `reasoning` items and other item types are dropped, as are tools that are not functions;
- `user`, else `prompt_cache_key` (Codex's session id), names the conversation.

A reply is a `response` whose `output` holds a `message` item (the text) and a `function_call` (or
`custom_tool_call`) item per call, or, streamed, the events from `response.created` to
`response.completed`; an error is OpenAI's `{"error": {...}}`.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ctxbench.harness.chat import content_text, read_arguments
from ctxbench.harness.protocols import Completion
from ctxbench.harness.wire.base import (HttpReply, ModelRequest, Refusal, WireName, json_reply, reply_id, sse_events,
                                        sse_reply)
from ctxbench.harness.wire.chat import openai_error

__all__ = ["RESPONSES", "ResponsesWire", "ResponsesStream", "response_body"]

_FREEFORM_SCHEMA = {"type": "object", "properties": {"input": {"type": "string", "description": "The tool's input."}},
                    "required": ["input"], "additionalProperties": False}
_CALLS = {"function_call", "custom_tool_call"}
_OUTPUTS = {"function_call_output", "custom_tool_call_output"}
_TEXT_PARTS = ("input_text", "output_text", "text")
"""The content parts that hold text in the Responses API."""


def _chat_messages(instructions: Any, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": instructions}] if instructions else []
    for item in items:
        kind = item.get("type") or ("message" if "role" in item else None)
        if kind == "message":
            out.append({"role": item.get("role"), "content": content_text(item.get("content"), _TEXT_PARTS)})
        elif kind in _CALLS:
            arguments = (item.get("arguments") if kind == "function_call"
                         else json.dumps({"input": item.get("input") or ""}))
            call = {"id": str(item.get("call_id") or ""), "type": "function",
                    "function": {"name": str(item.get("name") or ""), "arguments": str(arguments or "{}")}}
            if out and out[-1]["role"] == "assistant":
                out[-1].setdefault("tool_calls", []).append(call)
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind in _OUTPUTS:
            out.append({"role": "tool", "tool_call_id": str(item.get("call_id") or ""),
                        "content": content_text(item.get("output"), _TEXT_PARTS)})
    return out


def _check(body: Any) -> Refusal | None:
    if not isinstance(body, dict):
        return Refusal(400, "the request body must be a JSON object")
    items = body.get("input")
    if not (isinstance(items, str) and items) and not (isinstance(items, list) and items and all(
            isinstance(i, dict) and (i.get("type") not in (None, "message")
                                     or i.get("role") in ("user", "assistant", "system", "developer"))
            for i in items)):
        return Refusal(400, "input: expected a string or a non-empty list of items (messages, function calls "
                            "and their outputs)", param="input")
    if not isinstance(body.get("instructions") or "", str):
        return Refusal(400, "instructions: expected a string", param="instructions")
    tools = body.get("tools") or []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        return Refusal(400, "tools: expected a list of tools", param="tools")
    return None


def _output(completion: Completion, freeform: tuple[str, ...], message_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if completion.text:
        items.append({"type": "message", "id": message_id, "status": "completed", "role": "assistant",
                      "content": [{"type": "output_text", "text": completion.text, "annotations": []}]})
    for call in completion.tool_calls:
        if call.name in freeform:
            items.append({"type": "custom_tool_call", "id": "ctc_" + call.id, "call_id": call.id, "name": call.name,
                          "input": str(read_arguments(call.arguments).get("input", "")), "status": "completed"})
        else:
            items.append({"type": "function_call", "id": "fc_" + call.id, "call_id": call.id, "name": call.name,
                          "arguments": call.arguments, "status": "completed"})
    return items


def response_body(completion: Completion, request: ModelRequest, reply: str | None = None,
                  message_id: str | None = None, created_at: int | None = None) -> dict[str, Any]:
    """A completed `response` for `completion` (its id `reply` and its message item's `message_id`, else
    new ones)."""
    u = completion.usage
    return {"id": reply or reply_id("resp_"), "object": "response",
            "created_at": int(time.time()) if created_at is None else created_at, "status": "completed",
            "model": request.model,
            "output": _output(completion, request.freeform_tools, message_id or reply_id("msg_")),
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "error": None,
            "incomplete_details": None, "instructions": None, "metadata": {},
            "usage": {"input_tokens": u.prompt_tokens, "input_tokens_details": {"cached_tokens": u.cached_tokens},
                      "output_tokens": u.completion_tokens,
                      "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
                      "total_tokens": u.prompt_tokens + u.completion_tokens}}


def _item_events(index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    """The events that stream one output item."""
    where = {"item_id": item["id"], "output_index": index}
    if item["type"] == "message":
        return _text_opening(index, item) + [_text_delta(index, item["id"], item["content"][0]["text"])] + \
            _text_done(index, item)
    field, name = ("arguments", "function_call_arguments") if item["type"] == "function_call" else \
        ("input", "custom_tool_call_input")
    return [{"type": "response.output_item.added", "output_index": index,
             "item": {**item, field: "", "status": "in_progress"}},
            {"type": f"response.{name}.delta", **where, "delta": item[field]},
            {"type": f"response.{name}.done", **where, field: item[field]},
            {"type": "response.output_item.done", "output_index": index, "item": item}]


def _text_opening(index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    """A message item's first events: the item added, its text part added (empty)."""
    return [{"type": "response.output_item.added", "output_index": index,
             "item": {**item, "status": "in_progress", "content": []}},
            {"type": "response.content_part.added", "item_id": item["id"], "output_index": index, "content_index": 0,
             "part": {"type": "output_text", "text": "", "annotations": []}}]


def _text_delta(index: int, item_id: str, piece: str) -> dict[str, Any]:
    return {"type": "response.output_text.delta", "item_id": item_id, "output_index": index, "content_index": 0,
            "delta": piece, "logprobs": []}


def _text_done(index: int, item: dict[str, Any]) -> list[dict[str, Any]]:
    """A message item's last events: its text, its part and itself done."""
    where = {"item_id": item["id"], "output_index": index}
    part = item["content"][0]
    return [{"type": "response.output_text.done", **where, "content_index": 0, "text": part["text"], "logprobs": []},
            {"type": "response.content_part.done", **where, "content_index": 0, "part": part},
            {"type": "response.output_item.done", "output_index": index, "item": item}]


def _started(body: dict[str, Any]) -> list[dict[str, Any]]:
    started = {**body, "status": "in_progress", "output": [], "usage": None}
    return [{"type": "response.created", "response": started}, {"type": "response.in_progress", "response": started}]


def _events(body: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    events = _started(body)
    for index, item in enumerate(body["output"]):
        events += _item_events(index, item)
    events.append({"type": "response.completed", "response": body})
    return [(e["type"], {**e, "sequence_number": n}) for n, e in enumerate(events)]


class ResponsesStream:
    """A response's events written as the model writes it: `response.created`, a message item with
    each piece as an `output_text.delta`, then the call items and `response.completed`; an `error`
    event where the model failed. Every event is numbered (`sequence_number`)."""

    def __init__(self, request: ModelRequest) -> None:
        self.request, self.id, self.message_id = request, reply_id("resp_"), reply_id("msg_")
        self.created_at, self.sent, self.texting = int(time.time()), 0, False

    def _body(self, completion: Completion) -> dict[str, Any]:
        return response_body(completion, self.request, self.id, self.message_id, self.created_at)

    def _sse(self, events: list[dict[str, Any]]) -> bytes:
        numbered = [(e["type"], {**e, "sequence_number": self.sent + n}) for n, e in enumerate(events)]
        self.sent += len(events)
        return sse_events(numbered)

    def opening(self) -> bytes:
        return self._sse(_started(self._body(Completion(""))))

    def text(self, piece: str) -> bytes:
        item = {"type": "message", "id": self.message_id, "status": "in_progress", "role": "assistant", "content": []}
        events = [] if self.texting else _text_opening(0, item)
        self.texting = True
        return self._sse(events + [_text_delta(0, self.message_id, piece)])

    def closing(self, completion: Completion) -> bytes:
        body = self._body(completion)
        output = body["output"]
        sent = self.texting and bool(output) and output[0]["type"] == "message"  # its text has gone out
        events = _text_done(0, output[0]) if sent else []
        for index, item in enumerate(output):
            events += [] if sent and index == 0 else _item_events(index, item)
        return self._sse(events + [{"type": "response.completed", "response": body}])

    def failure(self, refusal: Refusal) -> bytes:
        return self._sse([{"type": "error", "code": refusal.code or refusal.kind, "message": refusal.message,
                           "param": refusal.param}])


class ResponsesWire:
    """The OpenAI Responses API."""

    name: WireName = "responses"
    paths: tuple[str, ...] = ("/v1/responses",)

    def serves(self, route: str) -> bool:
        return route in self.paths

    def read(self, body: Any, path: str = "") -> ModelRequest | Refusal:
        refused = _check(body)
        if refused is not None:
            return refused
        items = body["input"]
        items = [{"type": "message", "role": "user", "content": items}] if isinstance(items, str) else items
        tools, freeform = [], []
        for tool in body.get("tools") or []:
            if tool.get("type") == "function" and isinstance(tool.get("name"), str):
                tools.append({"type": "function", "function": {"name": tool["name"],
                                                               "description": tool.get("description") or "",
                                                               "parameters": tool.get("parameters") or {}}})
            elif tool.get("type") == "custom" and isinstance(tool.get("name"), str):
                tools.append({"type": "function", "function": {"name": tool["name"],
                                                               "description": tool.get("description") or "",
                                                               "parameters": _FREEFORM_SCHEMA}})
                freeform.append(tool["name"])
        name = next((v for v in (body.get("user"), body.get("prompt_cache_key")) if isinstance(v, str) and v), None)
        limit = body.get("max_output_tokens")
        return ModelRequest("responses", str(body.get("model")), _chat_messages(body.get("instructions"), items),
                            tools, stream=bool(body.get("stream")), conversation=name,
                            max_output_tokens=limit if isinstance(limit, int) else None,
                            freeform_tools=tuple(freeform))

    def reply(self, request: ModelRequest, completion: Completion) -> HttpReply:
        body = response_body(completion, request)
        return sse_reply(_events(body)) if request.stream else json_reply(200, body)

    def refuse(self, refusal: Refusal) -> HttpReply:
        return json_reply(refusal.status, openai_error(refusal))

    def streamer(self, request: ModelRequest) -> ResponsesStream:
        return ResponsesStream(request)


RESPONSES = ResponsesWire()
