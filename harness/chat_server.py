"""The HTTP side of ctxbench's OpenAI-compatible endpoints (`serve-sim`, `gateway`).

`GET /v1/models` and `POST /v1/chat/completions`, answered by a `ChatBackend`; a streamed request
(`"stream": true`) gets the reply as server-sent events in the chunk format of OpenAI's API.
"""

from __future__ import annotations

import json
import os
import socketserver
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Protocol

from ctxbench.harness.models.base import Completion

__all__ = ["ChatReply", "ChatBackend", "error_reply", "completion_body", "completion_reply", "check_chat_request",
           "models_reply", "make_server", "make_unix_server"]


@dataclass(frozen=True)
class ChatReply:
    """An HTTP status and its JSON body; `stream` sends the body as server-sent event chunks instead."""

    status: int
    body: dict[str, Any]
    stream: bool = False
    include_usage: bool = False
    """With `stream`: a last chunk carries the usage (the request's `stream_options.include_usage`)."""


class ChatBackend(Protocol):
    """What answers the two routes."""

    def models(self) -> ChatReply: ...

    def chat(self, request: Any) -> ChatReply: ...


def error_reply(status: int, message: str, kind: str = "invalid_request_error", param: str | None = None,
                code: str | None = None) -> ChatReply:
    """An error in OpenAI's shape (`{"error": {message, type, param, code}}`)."""
    return ChatReply(status, {"error": {"message": message, "type": kind, "param": param, "code": code}})


def models_reply(model_name: str, owner: str) -> ChatReply:
    """`GET /v1/models`: the one model served."""
    return ChatReply(200, {"object": "list", "data": [{"id": model_name, "object": "model", "created": 0,
                                                       "owned_by": owner}]})


def check_chat_request(request: Any, model_name: str) -> ChatReply | None:
    """The error reply for a request that is not a chat request for `model_name`, else None."""
    if not isinstance(request, dict):
        return error_reply(400, "the request body must be a JSON object")
    messages, tools = request.get("messages"), request.get("tools") or []
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        return error_reply(400, "`messages` must be a non-empty list of message objects", param="messages")
    if not isinstance(tools, list):
        return error_reply(400, "`tools` must be a list", param="tools")
    if request.get("model") != model_name:
        return error_reply(404, f"The model {request.get('model')!r} does not exist; this server serves "
                                f"{model_name!r}", param="model", code="model_not_found")
    return None


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


def completion_reply(request: dict[str, Any], completion: Completion, model_name: str) -> ChatReply:
    """The 200 reply to `request`: a chat.completion, or its chunks when the request streams."""
    options = request.get("stream_options")
    include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
    return ChatReply(200, completion_body(completion, model_name), stream=bool(request.get("stream")),
                     include_usage=include_usage)


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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    server: Any

    def do_GET(self) -> None:
        if self._refused():
            return
        if self.path.rstrip("/") == "/v1/models":
            self._send(self.server.backend.models())
        else:
            self._send(error_reply(404, f"no route {self.path}", code="not_found"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self._refused():
            return
        if self.path.rstrip("/") != "/v1/chat/completions":
            self._send(error_reply(404, f"no route {self.path}", code="not_found"))
            return
        try:
            request = json.loads(raw or b"null")
        except ValueError as exc:
            self._send(error_reply(400, f"the request body is not valid JSON: {exc}"))
            return
        try:
            response = self.server.backend.chat(request)
        except Exception as exc:  # a bug must not kill the server; the client retries 5xx
            response = error_reply(500, f"ctxbench internal error: {exc!r}", kind="server_error")
        self._send(response)

    def _refused(self) -> bool:
        """Answers 401 when the server has a token and the request does not carry it."""
        token = getattr(self.server, "token", None)
        if token is None or self.headers.get("Authorization", "") == f"Bearer {token}":
            return False
        self._send(error_reply(401, "Incorrect API key provided: this endpoint takes the key it was started with",
                               code="invalid_api_key"))
        return True

    def _send(self, response: ChatReply) -> None:
        if response.stream and response.status == 200:
            events = [f"data: {json.dumps(c)}\n\n" for c in stream_chunks(response.body, response.include_usage)]
            data, kind = ("".join(events) + "data: [DONE]\n\n").encode(), "text/event-stream"
        else:
            data, kind = json.dumps(response.body).encode(), "application/json"
        self.send_response(response.status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:
            super().log_message(format, *args)


def make_server(backend: ChatBackend, host: str = "127.0.0.1", port: int = 0,
                verbose: bool = False) -> ThreadingHTTPServer:
    """A bound (not yet serving) HTTP server; port 0 picks a free port (see `server.server_address`)."""
    server = ThreadingHTTPServer((host, port), _Handler)
    server.daemon_threads = True
    server.backend = backend  # type: ignore[attr-defined]
    server.verbose = verbose  # type: ignore[attr-defined]
    return server


class _UnixHandler(_Handler):
    disable_nagle_algorithm = False  # not a TCP socket

    def address_string(self) -> str:
        return "unix"


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


def make_unix_server(backend: ChatBackend, path: Path, token: str | None = None) -> socketserver.BaseServer:
    """A bound (not yet serving) HTTP server on the Unix socket `path`, open to every user (it lives in
    a folder only the run can reach); with `token`, requests without `Authorization: Bearer TOKEN` get 401."""
    server = _UnixServer(str(path), _UnixHandler)
    os.chmod(path, 0o777)
    server.backend = backend  # type: ignore[attr-defined]
    server.verbose = False  # type: ignore[attr-defined]
    server.token = token  # type: ignore[attr-defined]
    return server
