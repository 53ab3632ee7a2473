"""Helpers shared by the provider tests (imported by conftest.py and the test modules)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

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
