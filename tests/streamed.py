"""A model endpoint for tests that streams its replies as a real server does: server-sent events sent one
at a time, a gap between them, and a stream that can fall silent or wait for the test to go on."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable


@dataclass
class Stream:
    """A reply as server-sent events (`events`: each one event's bytes), `gap_s` apart. The stream stops
    before event `hold_at` until `go_on` is set (a stall where it never is: the test ends it)."""

    events: list[bytes]
    gap_s: float = 0.0
    hold_at: int | None = None
    go_on: threading.Event = field(default_factory=threading.Event)
    log: list[str] = field(default_factory=list)
    """What the server did, in order: `sending N` before event N, `sent all` once the last went out."""


Reply = tuple[int, Any]
Script = Callable[[int, dict[str, Any]], "Reply | Stream"]


def sse(data: Any, name: str | None = None) -> bytes:
    return ((f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n").encode()


def chat_events(text: str, calls: list[tuple[str, str, str]] = (), usage: dict[str, Any] | None = None,
                finish: str | None = None) -> list[bytes]:
    """An OpenAI chat stream: a role chunk, the text word by word, each call (id, name, arguments) with
    its arguments in two pieces, the finish, the usage chunk (where given) and `[DONE]`."""
    head = {"id": "chatcmpl-up", "object": "chat.completion.chunk", "created": 0, "model": "sim-coder"}

    def chunk(delta: dict[str, Any], reason: str | None = None) -> bytes:
        return sse({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": reason}]})

    out = [chunk({"role": "assistant", "content": ""})]
    words = text.split(" ")
    out += [chunk({"content": w if i == 0 else " " + w}) for i, w in enumerate(words) if text]
    for n, (call_id, name, arguments) in enumerate(calls):
        half = len(arguments) // 2
        out.append(chunk({"tool_calls": [{"index": n, "id": call_id, "type": "function",
                                          "function": {"name": name, "arguments": arguments[:half]}}]}))
        out.append(chunk({"tool_calls": [{"index": n, "function": {"arguments": arguments[half:]}}]}))
    out.append(chunk({}, finish or ("tool_calls" if calls else "stop")))
    if usage is not None:
        out.append(sse({**head, "choices": [], "usage": usage}))
    return out + [b"data: [DONE]\n\n"]


def message_events(texts: list[str], calls: list[tuple[str, str, dict[str, Any]]] = (),
                   usage: dict[str, Any] | None = None) -> list[bytes]:
    """An Anthropic Messages stream: each text block word by word, each tool_use block (id, name, input)
    with its input JSON in two pieces, the stop reason and output tokens in `message_delta`."""
    usage = usage or {"input_tokens": 100, "output_tokens": 10}
    start = {"id": "msg_up", "type": "message", "role": "assistant", "model": "sim-coder", "content": [],
             "stop_reason": None, "usage": {**usage, "output_tokens": 1}}
    out = [sse({"type": "message_start", "message": start}, "message_start"), sse({"type": "ping"}, "ping")]
    index = 0
    for text in texts:
        out.append(sse({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                       "content_block_start"))
        for i, word in enumerate(text.split(" ")):
            out.append(sse({"type": "content_block_delta", "index": index,
                            "delta": {"type": "text_delta", "text": word if i == 0 else " " + word}},
                           "content_block_delta"))
        out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    for call_id, name, arguments in calls:
        raw = json.dumps(arguments)
        out.append(sse({"type": "content_block_start", "index": index,
                        "content_block": {"type": "tool_use", "id": call_id, "name": name, "input": {}}},
                       "content_block_start"))
        for piece in (raw[:len(raw) // 2], raw[len(raw) // 2:]):
            out.append(sse({"type": "content_block_delta", "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": piece}}, "content_block_delta"))
        out.append(sse({"type": "content_block_stop", "index": index}, "content_block_stop"))
        index += 1
    out.append(sse({"type": "message_delta", "delta": {"stop_reason": "tool_use" if calls else "end_turn",
                                                       "stop_sequence": None},
                    "usage": {"output_tokens": usage["output_tokens"]}}, "message_delta"))
    return out + [sse({"type": "message_stop"}, "message_stop")]


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Any

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        with self.server.lock:
            self.server.requests.append(body)
            index = len(self.server.requests) - 1
        reply = self.server.script(index, body)
        if isinstance(reply, Stream):
            self._stream(reply)
            return
        status, payload = reply
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        data = json.dumps({"object": "list", "data": [{"id": "sim-coder", "object": "model"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _stream(self, stream: Stream) -> None:
        self.close_connection = True  # the body ends where the connection does
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        try:
            for n, event in enumerate(stream.events):
                if n == stream.hold_at:
                    stream.go_on.wait(timeout=60)
                elif n and stream.gap_s:
                    time.sleep(stream.gap_s)
                stream.log.append(f"sending {n}")
                self.wfile.write(event)
                self.wfile.flush()
            stream.log.append("sent all")
        except OSError:
            stream.log.append("client gone")

    def log_message(self, format: str, *args: Any) -> None:
        pass


class StreamingUpstream:
    """A model endpoint on 127.0.0.1 answering from `script(request index, body)`: a JSON (status, body)
    or a `Stream`. `url` is its base URL (with /v1), `root` without; `requests` the bodies received."""

    def __init__(self, script: Script) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.server.lock = threading.Lock()  # type: ignore[attr-defined]
        self.server.requests = self.requests = []  # type: ignore[attr-defined]
        self.server.script = script  # type: ignore[attr-defined]
        self.root = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.url = self.root + "/v1"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
