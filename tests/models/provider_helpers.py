"""Helpers shared by the provider tests (imported by conftest.py and the test modules)."""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "experiments" / "smoke.yaml"
TEST_KEY_ENV = "CTXBENCH_TEST_KEY"
TEST_KEY = "sk-test-do-not-log-3f9a"


def chat_reply(text: str = "", calls: list[tuple[str, str]] = (), usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """An OpenAI chat.completion body with `calls` as (tool name, raw arguments)."""
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [{"id": f"call_{i}_{name}", "type": "function",
                                  "function": {"name": name, "arguments": args}} for i, (name, args) in enumerate(calls)]
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 0, "model": "sim-coder",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop"}],
            "usage": usage or {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}


def api_error(message: str, kind: str = "invalid_request_error", code: str | None = None) -> dict[str, Any]:
    """An OpenAI-shaped error body."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def cli(*args: str) -> list[str]:
    """argv running the `ctxbench` CLI of this checkout with the current interpreter."""
    return [sys.executable, "-c", "from ctxbench.harness.cli import main; main()", *args]


def cli_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), **extra}


@dataclass(frozen=True)
class Raw:
    """A reply body sent as it is, not encoded as JSON (HTML, JSON cut short), with extra `headers`."""

    content_type: str
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()


def with_headers(reply: tuple[int, Any], **headers: str) -> tuple[int, Raw]:
    """A JSON reply with extra headers (`retry_after="2"` sends `retry-after: 2`)."""
    status, body = reply
    return status, Raw("application/json", json.dumps(body).encode(),
                       tuple((name.replace("_", "-"), value) for name, value in headers.items()))


def anthropic_message(text: str = "", calls: list[tuple[str, dict[str, Any]]] = (),
                      usage: dict[str, Any] | None = None) -> dict[str, Any]:
    """An Anthropic `message` body with a text block (when `text`) and a `tool_use` block per (name, input)."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"toolu_{i}_{name}", "name": name, "input": args}
                for i, (name, args) in enumerate(calls)]
    return {"id": "msg_test", "type": "message", "role": "assistant", "model": "sim-coder", "content": content,
            "stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None,
            "usage": usage or {"input_tokens": 100, "output_tokens": 10}}


def anthropic_error(message: str, kind: str = "invalid_request_error") -> dict[str, Any]:
    """An Anthropic-shaped error body."""
    return {"type": "error", "error": {"type": kind, "message": message}}


Reply = tuple[int, Any]
Answer = Callable[[int, dict[str, Any]], Reply]
DOWN = (503, api_error("upstream unavailable", "server_error"))


def outage(seconds: float, answer: Answer, from_request: int = 0) -> Answer:
    """Every request fails with a 503 for `seconds` after request `from_request` arrived, then `answer` again."""
    began: list[float] = []
    lock = threading.Lock()

    def script(i: int, body: dict[str, Any]) -> Reply:
        with lock:
            if i >= from_request and not began:
                began.append(time.monotonic())
            down = bool(began) and time.monotonic() - began[0] < seconds
        return DOWN if down else answer(i, body)

    return script


def faulty(answer: Answer, faults: dict[int, Reply]) -> Answer:
    """`answer`, except that request i gets `faults[i]`; the requests a fault answered do not count, so
    `answer` sees the same sequence as without faults."""
    skipped = [0]

    def script(i: int, body: dict[str, Any]) -> Reply:
        if i in faults:
            skipped[0] += 1
            return faults[i]
        return answer(i - skipped[0], body)

    return script


def burst(start: int, count: int, reply: Reply = DOWN) -> dict[int, Reply]:
    """`count` requests in a row from request `start` answered with `reply` (a 5xx burst)."""
    return {i: reply for i in range(start, start + count)}


def truncated(body: dict[str, Any]) -> Reply:
    """A 200 whose JSON is cut in half (with a Content-Length that matches what is sent)."""
    data = json.dumps(body).encode()
    return 200, Raw("application/json", data[:len(data) // 2])


HTML_200 = (200, Raw("text/html; charset=utf-8", b"<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>"))
NO_CHOICES = (200, {"id": "x", "object": "chat.completion", "created": 0, "model": "sim-coder", "choices": []})
MESSAGE_NULL = (200, {"id": "x", "object": "chat.completion", "created": 0, "model": "sim-coder",
                      "choices": [{"index": 0, "message": None, "finish_reason": "stop"}]})


def key_echo(status: int = 500) -> Reply:
    """A gateway error that echoes the request's Authorization header (and so the key) in its body."""
    return status, api_error(f"upstream failed for request with headers {{'Authorization': 'Bearer {TEST_KEY}'}}",
                             "server_error")
