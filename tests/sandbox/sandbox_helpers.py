"""Helpers for the containment tests: a scripted OpenAI-compatible server, a TCP listener."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from ctxbench.harness.sandbox import bwrap_available

HOSTILE = Path(__file__).resolve().parent.parent / "fixtures" / "hostile"

needs_bwrap = pytest.mark.skipif(bwrap_available() is not None, reason=f"bubblewrap unusable: {bwrap_available()}")


class ChatServer:
    """A tiny OpenAI-compatible endpoint on 127.0.0.1 that plays a fixed script of tool calls.

    The reply depends only on how many assistant messages the request already holds, so it is a
    stateless scripted model; every request body and Authorization header is kept for inspection.
    """

    def __init__(self, script: list[tuple[str, dict[str, Any]]]) -> None:
        self.script = script
        self.bodies: list[str] = []
        self.auth: list[str] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                server.bodies.append(body)
                server.auth.append(self.headers.get("Authorization", ""))
                request = json.loads(body)
                turn = sum(m.get("role") == "assistant" for m in request.get("messages", []))
                name, args = server.script[min(turn, len(server.script) - 1)]
                reply = {
                    "id": f"chatcmpl-{turn}", "object": "chat.completion", "created": 0, "model": request.get("model"),
                    "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                        "role": "assistant", "content": None,
                        "tool_calls": [{"id": f"call_{turn}", "type": "function",
                                        "function": {"name": name, "arguments": json.dumps(args)}}]}}],
                    "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110},
                }
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:  # noqa: N802
                """`GET /v1/models`, which a run checks before anything is written."""
                data = json.dumps({"object": "list", "data": [{"id": "scripted", "object": "model",
                                                                "created": 0, "owned_by": "tests"}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()



class Listener:
    """A TCP listener on the host's 127.0.0.1 that counts the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


def tempfile_dir() -> str:
    """A folder on the host's disk outside /tmp (the jail's /tmp is private, so /tmp would prove nothing)."""
    import tempfile

    base = "/var/tmp" if Path("/var/tmp").is_dir() else str(Path.home())
    return tempfile.mkdtemp(prefix="ctxbench-outside-", dir=base)


def write_experiment(path: Path, **fields: Any) -> Path:
    path.write_text(yaml.safe_dump(fields, sort_keys=False))
    return path
