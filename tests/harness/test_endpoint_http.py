"""The HTTP side of every ctxbench endpoint (serve-sim, the gateway, each run's route) under malformed and
hostile requests: each gets a 4xx in its format's error shape or a closed connection, never a hang, a
500 that clients retry, or no reply at all; many agents may connect at once."""

from __future__ import annotations

import json
import select
import socket
import threading
import time

import pytest

from ctxbench.harness.endpoints import server as endpoint_server
from ctxbench.harness.endpoints.server import make_server
from ctxbench.harness.protocols import Completion


class _Echo:
    model_name = "echo"
    owner = "test"

    def __init__(self) -> None:
        self.answered = 0

    def answer(self, request):
        self.answered += 1
        return Completion(text="ok")


@pytest.fixture
def endpoint():
    backend = _Echo()
    server = make_server(backend)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1], backend
    server.shutdown()
    server.server_close()


def exchange(port: int, head: str, body: bytes = b"", timeout: float = 30.0) -> tuple[int, dict | None]:
    """Send one raw request; the status and JSON body of the reply (status 0: closed without one)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as conn:
        conn.sendall(head.encode() + b"\r\n" + body)
        data = b""
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
            if b"\r\n\r\n" in data:
                header, _, rest = data.partition(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in header.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                if len(rest) >= length:
                    break
    if not data:
        return 0, None
    header, _, rest = data.partition(b"\r\n\r\n")
    return int(header.split()[1]), json.loads(rest) if rest else None


def post(path: str, body: bytes, length: str | None = None) -> str:
    length = str(len(body)) if length is None else length
    return f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {length}\r\n"


def test_a_well_formed_request_is_answered(endpoint):
    port, backend = endpoint
    body = json.dumps({"model": "echo", "messages": [{"role": "user", "content": "hi"}]}).encode()
    status, reply = exchange(port, post("/v1/chat/completions", body), body)
    assert status == 200 and reply["choices"][0]["message"]["content"] == "ok" and backend.answered == 1


@pytest.mark.parametrize("path, shape", [("/v1/chat/completions", "openai"), ("/v1/messages", "anthropic")])
@pytest.mark.parametrize("body, length, status, says", [
    (b"{}", "abc", 400, "Content-Length 'abc' is not a number of bytes"),
    (b"{}", "-1", 400, "Content-Length '-1' is not a number of bytes"),
    (b"[" * 200_000 + b"]" * 200_000, None, 400, "nested too deeply"),
    (b'{"model": "echo", "messages": [{"role": "user", "content": "\\ud800"}]}', None, 400, "not Unicode"),
    (b"{not json", None, 400, "not valid JSON"),
    (b"{}", str(endpoint_server.MAX_BODY_BYTES + 1), 413, "over the"),
])
def test_a_malformed_request_gets_a_4xx_in_its_format_s_shape(endpoint, path, shape, body, length, status, says):
    port, backend = endpoint
    code, reply = exchange(port, post(path, body, length), body if length is None else b"")
    assert code == status and reply is not None
    message = reply["error"]["message"]
    assert says in message
    assert (reply["type"] == "error") if shape == "anthropic" else ("type" in reply["error"])
    assert backend.answered == 0


def test_a_body_cut_short_is_refused_once_the_connection_falls_silent(endpoint, monkeypatch):
    monkeypatch.setattr(endpoint_server._Handler, "timeout", 1.0)
    port, backend = endpoint
    status, reply = exchange(port, post("/v1/chat/completions", b"", "100"), b'{"model": ')
    assert status == 408 and "did not arrive within 1 s" in reply["error"]["message"]
    assert backend.answered == 0


def test_a_silent_connection_is_closed(endpoint, monkeypatch):
    monkeypatch.setattr(endpoint_server._Handler, "timeout", 1.0)
    port, _ = endpoint
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(b"POST /v1/chat/co")  # and nothing more
        assert conn.recv(100) == b""  # the server closed it


def test_hundreds_of_agents_may_connect_at_once():
    """300 connections made at once to a server that has not accepted any yet: the kernel holds them all
    (with a backlog of 5, all but a few were left unanswered or reset)."""
    server = make_server(_Echo())
    port = server.server_address[1]
    sockets = [socket.socket() for _ in range(300)]
    try:
        for conn in sockets:
            conn.setblocking(False)
            conn.connect_ex(("127.0.0.1", port))
        pending, deadline = list(sockets), time.monotonic() + 10
        while pending and time.monotonic() < deadline:
            _, writable, _ = select.select([], pending, [], 0.5)
            pending = [c for c in pending if c not in writable]
        errors = [c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) for c in sockets]
        assert pending == [] and errors == [0] * 300
    finally:
        for conn in sockets:
            conn.close()
        server.server_close()
