"""The HTTP side of ctxbench's model endpoints (`serve-sim`, `gateway`, each external run's route).

`GET /v1/models` (and Gemini's `GET /v1beta/models`, `GET /v1beta/models/MODEL`), and a model call in
any of four wire formats (`ctxbench.harness.wire.base`): `POST /v1/chat/completions`, `POST
/v1/messages` (Anthropic), `POST /v1/responses` and `POST /v1beta/models/MODEL:generateContent`
(Gemini, `:streamGenerateContent?alt=sse` streamed), each read onto one `ModelRequest`, answered by a
`ModelBackend` that never sees the format, and written back in the client's own format, plain or
streamed. An error (a body in none of the formats, a refused call) is answered in the error shape of
the format the route claims (Gemini's under `/v1beta/` and `/v1alpha/`, OpenAI's elsewhere). A backend
whose model streams may pass a streamed reply on as it is written (`passing_on`): its headers and text
go out as they come (chunked), the rest once the model has answered.
"""

from __future__ import annotations

import json
import os
import re
import select
import socket
import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Protocol
from urllib.parse import parse_qs, unquote, urlsplit

from ctxbench.harness.protocols import Completion
from ctxbench.harness.wire import CHAT, GEMINI, HttpReply, ModelRequest, Refusal, Wire, json_reply, wire_for
from ctxbench.harness.wire.base import Crash, StreamWriter
from ctxbench.harness.wire.gemini import API_VERSIONS, model_entry

__all__ = ["ModelBackend", "respond", "models_reply", "make_server", "make_unix_server", "after_sending", "passing_on",
           "MAX_BODY_BYTES", "READ_TIMEOUT_S", "LISTEN_BACKLOG"]

MAX_BODY_BYTES = 64 * 1024**2
"""The largest request body read (an agent's whole conversation, with room to spare); a larger one is
refused with 413 before it is read."""
READ_TIMEOUT_S = 120.0
"""How long a connection may stay silent (a request sent slowly or cut short, an idle keep-alive) before
the server closes it."""
LISTEN_BACKLOG = 1024
"""Connections the kernel holds waiting to be accepted: hundreds of agents may connect at once."""


_serving = threading.local()
"""The reply the calling thread is serving: `after` holds what to call once it is made."""


def after_sending(callback: Callable[[bool], None]) -> bool:
    """Have `callback(delivered)` called once the reply the calling thread is answering is made, just
    before it is sent (`delivered` False where the client has gone away: closed its connection while
    the request was answered, so nothing will be sent); False outside a server's handler, where nothing
    will be called."""
    after = getattr(_serving, "after", None)
    if after is None:
        return False
    after.append(callback)
    return True


def passing_on(request: ModelRequest) -> Callable[[str], None] | None:
    """Where the reply to `request`, which the calling thread is answering, can go out as the model
    writes it: a listener that sends each piece of its text to the client at once, in its format's
    streamed shape (the opening with the first call, "" included); None where the request does not
    stream or no server's handler is answering it (the whole reply then goes out at the end, as it
    always can)."""
    live = getattr(_serving, "live", None)
    return live.listener(request) if live is not None and request.stream else None


class _LiveReply:
    """A streamed reply sent as the model writes it, with chunked transfer encoding: the headers and the
    opening with the first piece, each piece at once, the rest (`finish`) once the model has answered.
    A client gone away mid-stream (a write fails) is `broken`: nothing more is sent to it."""

    def __init__(self, handler: _Handler, wire: Wire) -> None:
        self.handler, self.wire = handler, wire
        self.writer: StreamWriter | None = None
        self.started = self.broken = False

    def listener(self, request: ModelRequest) -> Callable[[str], None]:
        self.writer = self.wire.streamer(request)
        return self._piece

    def _piece(self, piece: str) -> None:
        assert self.writer is not None
        data = b"" if self.started else self.writer.opening()
        if not self.started:
            self.started = True
            self._write(None)
        data += self.writer.text(piece) if piece else b""
        if data:  # an empty chunk would end the reply
            self._write(data)

    def rest(self, answer: Completion | Refusal) -> HttpReply:
        """What is left to send of the reply once the model has answered (or failed)."""
        assert self.writer is not None
        data = self.writer.failure(answer) if isinstance(answer, Refusal) else self.writer.closing(answer)
        return HttpReply(200, data, "text/event-stream")

    def finish(self, rest: HttpReply) -> None:
        if rest.data:
            self._write(rest.data)
        self._write(b"")  # the last chunk: the reply's end

    def _write(self, data: bytes | None) -> None:
        """Sends the headers (None), or `data` as one chunk (b"": the last, the reply's end)."""
        if self.broken:
            return
        handler = self.handler
        try:
            if data is None:
                handler.send_response(200)
                handler.send_header("Content-Type", "text/event-stream")
                handler.send_header("Cache-Control", "no-cache")
                handler.send_header("Transfer-Encoding", "chunked")
                handler.end_headers()
            else:
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            handler.wfile.flush()
        except OSError:
            self.broken = True
            handler.close_connection = True


class ModelBackend(Protocol):
    """What answers the model calls of an endpoint."""

    model_name: str
    """The one model it serves."""
    owner: str
    """Who `GET /v1/models` says owns it."""

    def answer(self, request: ModelRequest) -> Completion | Refusal: ...


def _model(model_name: str, owner: str) -> dict[str, Any]:
    """The one model served, as OpenAI's, Anthropic's and Gemini's clients each describe a model."""
    return {"id": model_name, "object": "model", "created": 0, "owned_by": owner, "type": "model",
            "display_name": model_name, "created_at": "1970-01-01T00:00:00Z", **model_entry(model_name, owner)}


def models_reply(model_name: str, owner: str) -> HttpReply:
    """`GET /v1/models`: the one model served, in a list OpenAI's and Anthropic's clients read (`data`)
    and Gemini's (`models`)."""
    entry = _model(model_name, owner)
    return json_reply(200, {"object": "list", "data": [entry], "has_more": False, "first_id": model_name,
                            "last_id": model_name, "models": [entry]})


_MODELS = re.compile(r"/(%s)/models(?:/(.+))?" % "|".join(API_VERSIONS))


def _shape(route: str) -> Wire:
    """The wire whose error shape answers a request on `route`: the format served there, else Gemini's
    under Gemini's own API versions, else OpenAI's."""
    wire = wire_for(route)
    if wire is not None:
        return wire
    return GEMINI if route.startswith(tuple(f"/{v}/" for v in API_VERSIONS if v != "v1")) else CHAT


def respond(backend: ModelBackend, wire: Wire, body: Any, path: str = "") -> HttpReply:
    """The reply to one decoded request body in `wire`'s format, sent to `path` (with its query string)."""
    request = wire.read(body, path)
    if isinstance(request, Refusal):
        return wire.refuse(request)
    if request.model != backend.model_name:
        return wire.refuse(Refusal(404, f"The model {request.model!r} does not exist; this server serves "
                                        f"{backend.model_name!r}", param="model", code="model_not_found"))
    try:
        answer = backend.answer(request)
    except Exception as exc:  # a bug must not kill the server; the client retries 5xx
        answer = Crash.of(exc)
    live = getattr(_serving, "live", None)
    if live is not None and live.started:  # the reply has begun: its rest
        return live.rest(answer)
    return wire.refuse(answer) if isinstance(answer, Refusal) else wire.reply(request, answer)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body go out as separate writes
    timeout = READ_TIMEOUT_S  # a silent connection is closed, not held open
    server: Any

    def do_GET(self) -> None:
        route = urlsplit(self.path).path.rstrip("/")
        shape = _shape(route)
        if self._refused(shape):
            return
        backend, listed = self.server.backend, _MODELS.fullmatch(route)
        if listed is None:
            self._send(shape.refuse(Refusal(404, f"no route {route}", code="not_found")))
        elif listed.group(2) is None:
            self._send(models_reply(backend.model_name, backend.owner))
        elif unquote(listed.group(2)).removeprefix("models/") == backend.model_name:
            self._send(json_reply(200, _model(backend.model_name, backend.owner)))
        else:
            self._send(shape.refuse(Refusal(404, f"The model {unquote(listed.group(2))!r} does not exist; this "
                                                 f"server serves {backend.model_name!r}", code="model_not_found")))

    def do_POST(self) -> None:
        wire = wire_for(self.path)
        shape = _shape(urlsplit(self.path).path.rstrip("/"))
        length = _content_length(self.headers.get("Content-Length"))
        if isinstance(length, Refusal):
            self.close_connection = True  # the body's end is unknown: nothing after it can be read
            self._send(shape.refuse(length))
            return
        try:
            raw = self.rfile.read(length) if length else b""
        except TimeoutError:
            self.close_connection = True
            self._send(shape.refuse(Refusal(408, f"the request body did not arrive within {self.timeout:g} s")))
            return
        if len(raw) < length:
            self.close_connection = True
            self._send(shape.refuse(Refusal(400, f"the request body ended after {len(raw)} of its {length} bytes")))
            return
        if self._refused(shape):
            return
        if wire is None:
            self._send(shape.refuse(Refusal(404, f"no route {urlsplit(self.path).path}", code="not_found")))
            return
        body = _decoded(raw)
        _serving.after, _serving.live, reply = [], _LiveReply(self, wire), None
        try:
            reply = wire.refuse(body) if isinstance(body, Refusal) else respond(self.server.backend, wire, body,
                                                                                 self.path)
        finally:  # told before the reply (or its end) goes out: what it records is written before the client can act on it
            after, live, _serving.after, _serving.live = _serving.after, _serving.live, None, None
            delivered = reply is not None and not live.broken and not self._client_gone()
            for callback in after:
                callback(delivered)
        if delivered and reply is not None and live.started:
            live.finish(reply)
        elif delivered and reply is not None:
            self._send(reply)
        else:  # the client went away while its request was answered: nothing (more) to send it
            self.close_connection = True

    def _refused(self, wire: Wire) -> bool:
        """Answers 401 when the server has a token and the request carries it nowhere a client puts its
        key: a bearer token (OpenAI's clients), `x-api-key` (Anthropic's), `x-goog-api-key` or the `key`
        query parameter (Gemini's)."""
        token = getattr(self.server, "token", None)
        if token is None or self.headers.get("Authorization") == f"Bearer {token}" \
                or token in (self.headers.get("x-api-key"), self.headers.get("x-goog-api-key")) \
                or parse_qs(urlsplit(self.path).query).get("key") == [token]:
            return False
        self._send(wire.refuse(Refusal(401, "Incorrect API key provided: this endpoint takes the key it was "
                                            "started with", kind="authentication_error", code="invalid_api_key")))
        return True

    def _send(self, reply: HttpReply) -> bool:
        """Sends `reply`; False where the sending broke off (the client went away)."""
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.data)))
            self.end_headers()
            self.wfile.write(reply.data)
            self.wfile.flush()
        except OSError:
            self.close_connection = True
            return False
        return True

    def _client_gone(self) -> bool:
        """Whether the client closed the connection while its request was answered (nothing to read
        but its end)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except (OSError, ValueError):
            return True

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.verbose:  # a Gemini client may send its key in the query string: not logged
            super().log_message(format, *(re.sub(r"([?&]key=)[^&\s\"]*", r"\1[redacted]", a) if isinstance(a, str)
                                          else a for a in args))


def _content_length(header: str | None) -> int | Refusal:
    """The body's length as the request states it, or why it cannot be read."""
    if header is None:
        return 0
    if not header.strip().isdigit():
        return Refusal(400, f"Content-Length {header!r} is not a number of bytes")
    if int(header) > MAX_BODY_BYTES:
        return Refusal(413, f"the request body ({int(header):,} bytes) is over the {MAX_BODY_BYTES:,} bytes "
                            "this server reads", code="request_too_large")
    return int(header)


def _decoded(raw: bytes) -> Any:
    """The JSON body, or a 400 saying why it cannot be used: not JSON, nested past what the parser
    follows, or text that is not Unicode (a lone surrogate escape, which no model API accepts)."""
    try:
        body = json.loads(raw or b"null")
    except ValueError as exc:
        return Refusal(400, f"the request body is not valid JSON: {exc}")
    except RecursionError:
        return Refusal(400, "the request body is nested too deeply to read")
    try:
        json.dumps(body, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        return Refusal(400, f"the request body holds text that is not Unicode ({exc.reason}: "
                            f"{exc.object[exc.start:exc.end]!r})")
    except RecursionError:
        return Refusal(400, "the request body is nested too deeply to read")
    return body


class _TCPServer(ThreadingHTTPServer):
    request_queue_size = LISTEN_BACKLOG


def make_server(backend: ModelBackend, host: str = "127.0.0.1", port: int = 0,
                verbose: bool = False) -> ThreadingHTTPServer:
    """A bound (not yet serving) HTTP server; port 0 picks a free port (see `server.server_address`)."""
    server = _TCPServer((host, port), _Handler)
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
    request_queue_size = LISTEN_BACKLOG


def make_unix_server(backend: ModelBackend, path: Path, token: str | None = None) -> socketserver.BaseServer:
    """A bound (not yet serving) HTTP server on the Unix socket `path`, open to every user (it lives in
    a folder only the run can reach); with `token`, requests that do not carry it get 401."""
    server = _UnixServer(str(path), _UnixHandler)
    os.chmod(path, 0o777)
    server.backend = backend  # type: ignore[attr-defined]
    server.verbose = False  # type: ignore[attr-defined]
    server.token = token  # type: ignore[attr-defined]
    return server
