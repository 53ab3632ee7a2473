"""The simulated model served as an OpenAI-compatible HTTP endpoint (`ctxbench serve-sim`).

`GET /v1/models` and `POST /v1/chat/completions`, backed by `SimModel`. The task is recognised from
the request's task statement (the first user message, matched against the taskset's problem
statements); the seed is the request's `seed`. An experiment run through this endpoint with the
`openai` provider gives the same results as the same experiment run in-process with `sim`, provided
the server uses the experiment's model section (`--config`).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ctxbench.harness.config import ModelConfig
from ctxbench.harness.models.base import ContextLengthExceeded
from ctxbench.harness.models.sim import PromptCache, SimModel, is_summary_request
from ctxbench.harness.records import Task, Taskset
from ctxbench.harness.tokens import TokenCounter

__all__ = ["SimBackend", "SimResponse", "make_server"]


@dataclass(frozen=True)
class SimResponse:
    """An HTTP status and its JSON body."""

    status: int
    body: dict[str, Any]


def _error(status: int, message: str, kind: str = "invalid_request_error", param: str | None = None,
           code: str | None = None) -> SimResponse:
    return SimResponse(status, {"error": {"message": message, "type": kind, "param": param, "code": code}})


class SimBackend:
    """Answers OpenAI chat requests with the simulated model for the tasks of one taskset."""

    def __init__(self, taskset: Taskset, model: ModelConfig) -> None:
        self.taskset = taskset
        self.model = model
        self.counter = TokenCounter(model.tokenizer)
        self._lock = threading.Lock()
        self.cache = PromptCache()
        """One prompt cache for the server, like a provider's: a prefix any earlier request sent is cached."""
        self._by_statement: dict[str, Task] = {}
        for task in taskset.tasks:
            self._by_statement.setdefault(task.problem_statement.strip(), task)

    def models(self) -> SimResponse:
        return SimResponse(200, {"object": "list", "data": [
            {"id": self.model.name, "object": "model", "created": 0, "owned_by": "ctxbench-sim"}]})

    def task_for(self, messages: list[dict[str, Any]]) -> Task | None:
        """The task whose problem statement is the first user message (stripped)."""
        first = next((m for m in messages if m.get("role") == "user"), None)
        content = first.get("content") if first else None
        return self._by_statement.get(content.strip()) if isinstance(content, str) else None

    def chat(self, request: Any) -> SimResponse:
        """One chat completion request (already JSON-decoded)."""
        if not isinstance(request, dict):
            return _error(400, "the request body must be a JSON object")
        messages, tools = request.get("messages"), request.get("tools") or []
        if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
            return _error(400, "`messages` must be a non-empty list of message objects", param="messages")
        if not isinstance(tools, list):
            return _error(400, "`tools` must be a list", param="tools")
        if request.get("model") != self.model.name:
            return _error(404, f"The model {request.get('model')!r} does not exist; this server serves "
                               f"{self.model.name!r}", param="model", code="model_not_found")
        if request.get("stream"):
            return _error(400, "streaming is not supported by serve-sim", param="stream")
        task = self.task_for(messages)
        if task is None and not is_summary_request(messages, tools):
            return _error(400, f"unknown task: the first user message matches no problem statement of taskset "
                               f"{self.taskset.name!r} ({len(self.taskset.tasks)} tasks); is serve-sim serving "
                               f"the experiment's taskset?", param="messages", code="unknown_task")
        max_output = request.get("max_tokens") or request.get("max_completion_tokens") or self.model.max_output_tokens
        seed = request.get("seed")
        sim = SimModel(self.model.sim, task.patch if task else "", self.counter, self.model.context_window,
                       int(max_output), int(seed) if seed is not None else 0, self.cache)
        try:
            with self._lock:
                completion = sim.complete(messages, tools)
        except ContextLengthExceeded as exc:
            return _error(400, str(exc), param="messages", code="context_length_exceeded")
        message: dict[str, Any] = {"role": "assistant", "content": completion.text}
        if completion.tool_calls:
            message["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.arguments}}
                                     for c in completion.tool_calls]
        usage = completion.usage
        return SimResponse(200, {
            "id": "chatcmpl-" + (completion.tool_calls[0].id if completion.tool_calls else "sim"),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.model.name,
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": "tool_calls" if completion.tool_calls else "stop"}],
            "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                      "total_tokens": usage.prompt_tokens + usage.completion_tokens,
                      "prompt_tokens_details": {"cached_tokens": usage.cached_tokens}},
        })


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: Any

    def do_GET(self) -> None:
        if self.path.rstrip("/") == "/v1/models":
            self._send(self.server.backend.models())
        else:
            self._send(_error(404, f"no route {self.path}", code="not_found"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(_error(404, f"no route {self.path}", code="not_found"))
            return
        try:
            request = json.loads(raw or b"null")
        except ValueError as exc:
            self._send(_error(400, f"the request body is not valid JSON: {exc}"))
            return
        try:
            response = self.server.backend.chat(request)
        except Exception as exc:  # a simulator bug must not kill the server; the client retries 5xx
            response = _error(500, f"serve-sim internal error: {exc!r}", kind="server_error")
        self._send(response)

    def _send(self, response: SimResponse) -> None:
        data = json.dumps(response.body).encode()
        self.send_response(response.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)


def make_server(backend: SimBackend, host: str = "127.0.0.1", port: int = 0,
                verbose: bool = False) -> ThreadingHTTPServer:
    """A bound (not yet serving) HTTP server; port 0 picks a free port (see `server.server_address`)."""
    server = ThreadingHTTPServer((host, port), _Handler)
    server.daemon_threads = True
    server.backend = backend  # type: ignore[attr-defined]
    server.verbose = verbose  # type: ignore[attr-defined]
    return server
