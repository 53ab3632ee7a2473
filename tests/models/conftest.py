"""Real HTTP endpoints on 127.0.0.1 for the provider tests: scripted replies, and `ctxbench serve-sim`."""

from __future__ import annotations

import json
import select
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

import pytest

import ctxbench.harness.models.endpoint as endpoint
from provider_helpers import ROOT, TEST_KEY, TEST_KEY_ENV, Raw, cli, cli_env

Script = Callable[[int, dict[str, Any]], tuple[int, Any]]


MODEL_CALLS = ("/chat/completions", "/messages", "/responses")
"""The paths a scripted endpoint answers from its script; any other POST is a 404."""


class _ScriptedHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: Any

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if not self.path.split("?")[0].endswith(MODEL_CALLS):  # a server that counts no tokens, serves no extras
            self._send_json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        with self.server.lock:
            self.server.requests.append(body)
            self.server.paths.append(self.path)
            index = len(self.server.requests) - 1
        self._send_json(*self.server.script(index, body))

    def do_GET(self) -> None:
        """`GET /v1/models` (the check before a run): `server.models` as (status, body)."""
        self._send_json(*self.server.models)

    def _send_json(self, status: int, payload: Any) -> None:
        """`payload` as JSON, or a Raw body as it is (with its headers)."""
        kind, data, headers = (payload.content_type, payload.body, payload.headers) if isinstance(payload, Raw) else \
            ("application/json", json.dumps(payload).encode(), ())
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def scripted_endpoint():
    """Start a stdlib HTTP server answering chat requests from a script.

    The script is a list of (status, body), answered in order (the last one repeats), or a function
    (request index, request body) -> (status, body); a body is JSON, or a `Raw` body sent as it is
    (the fault builders of provider_helpers make scripts that misbehave). The server has `.url` (the base_url),
    `.requests` (the decoded chat request bodies, in arrival order), `.paths` (their paths) and `.models`, the (status, body)
    of `GET /v1/models` (a list with `sim-coder`).
    """
    servers: list[ThreadingHTTPServer] = []

    def start(script: list[tuple[int, dict[str, Any]]] | Script) -> Any:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _ScriptedHandler)
        server.daemon_threads = True
        server.lock = threading.Lock()
        server.requests = []
        server.paths = []
        server.script = script if callable(script) else (lambda i, _body: script[min(i, len(script) - 1)])
        server.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        server.models = (200, {"object": "list", "data": [{"id": "sim-coder", "object": "model", "created": 0,
                                                           "owned_by": "test"}]})
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(autouse=True)
def _loopback_without_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")


@pytest.fixture(autouse=True)
def _fast_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(endpoint, "BASE_DELAY_S", 0.001)
    monkeypatch.setattr(endpoint, "MAX_DELAY_S", 0.01)


@pytest.fixture
def smoke_sim():
    """The smoke experiment's simulator as a chat script: (request index, body) -> (status, body), the
    replies `ctxbench serve-sim --config experiments/smoke.yaml` gives (wrap it in faults)."""
    from ctxbench.harness.config import load_config
    from ctxbench.harness.endpoints.server import respond
    from ctxbench.harness.endpoints.serve_sim import SimBackend
    from ctxbench.harness.wire.chat import CHAT
    from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path
    from provider_helpers import SMOKE

    backend = SimBackend(load_taskset(resolve_taskset_path("smoke")), load_config(SMOKE).model)

    def answer(i: int, body: dict[str, Any]) -> tuple[int, Any]:
        response = respond(backend, CHAT, body)  # streamed (server-sent events) where the request asks
        return response.status, Raw(response.content_type, response.data)

    return answer


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
    return TEST_KEY


@pytest.fixture
def serve_sim():
    """Start `ctxbench serve-sim ARGS --port 0` as a subprocess; returns its base_url once it listens."""
    procs: list[subprocess.Popen] = []

    def start(*args: str) -> str:
        proc = subprocess.Popen(cli("serve-sim", "--port", "0", *args), cwd=ROOT, env=cli_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        procs.append(proc)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if ready:
                line = proc.stdout.readline()
                if "listening on " in line:
                    return line.split("listening on ", 1)[1].split()[0]
            if proc.poll() is not None:
                break
        raise AssertionError(f"serve-sim did not start: {proc.poll()=} {proc.stderr.read() if proc.poll() is not None else ''}")

    yield start
    for proc in procs:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="module")
def median():
    """The smoke task `calc-median-even-length`, which the simulator tests of the agents' tools act on."""
    from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path

    return next(t for t in load_taskset(resolve_taskset_path("smoke")).tasks if t.id == "calc-median-even-length")
