"""The gateway passes a streamed upstream reply on as it arrives, in each wire format's streamed shape;
every reply has an id of its own; the client's max_tokens is honoured up to the model's."""

from __future__ import annotations

import http.client
import json
import threading
import time
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from ctxbench.harness.config import ModelConfig
from ctxbench.harness.endpoints.gateway import Gateway
from ctxbench.harness.endpoints.server import make_server
from ctxbench.harness.protocols import Completion, Usage
from ctxbench.harness.records import ToolCall, TranscriptTurn
from ctxbench.harness.records.transcript import read_transcript
from ctxbench.harness.wire import CHAT, GEMINI, MESSAGES, RESPONSES, ModelRequest
from streamed import Stream, StreamingUpstream, chat_events

TEXT = "Listing the files before reading the one that fails."
ARGUMENTS = '{"command": "ls"}'
USAGE = {"prompt_tokens": 90, "completion_tokens": 12, "total_tokens": 102}
SCHEMA = {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}
TASK = "The median of an even-length list is wrong."


def bodies(stream: bool = True, max_tokens: int | None = None) -> dict[str, tuple[str, dict]]:
    """A first request in each wire format: (path, body)."""
    limit = {} if max_tokens is None else {"max_tokens": max_tokens}
    return {
        "chat": ("/v1/chat/completions", {"model": "sim-coder", "stream": stream, **limit, "messages": [
            {"role": "system", "content": "Fix the bug."}, {"role": "user", "content": TASK}],
            "tools": [{"type": "function", "function": {"name": "bash", "description": "", "parameters": SCHEMA}}]}),
        "messages": ("/v1/messages", {"model": "sim-coder", "stream": stream, "max_tokens": max_tokens or 256,
                                      "system": "Fix the bug.", "messages": [{"role": "user", "content": TASK}],
                                      "tools": [{"name": "bash", "description": "", "input_schema": SCHEMA}]}),
        "responses": ("/v1/responses", {"model": "sim-coder", "stream": stream, "instructions": "Fix the bug.",
                                        "input": TASK, "tools": [{"type": "function", "name": "bash",
                                                                  "description": "", "parameters": SCHEMA}]}),
        "gemini": ("/v1beta/models/sim-coder:streamGenerateContent?alt=sse",
                   {"systemInstruction": {"parts": [{"text": "Fix the bug."}]},
                    "contents": [{"role": "user", "parts": [{"text": TASK}]}],
                    "tools": [{"functionDeclarations": [{"name": "bash", "description": "",
                                                         "parametersJsonSchema": SCHEMA}]}]}),
    }


@pytest.fixture
def gateway(tmp_path):
    """A gateway (baseline) in front of a scripted upstream: start(script, **model keys) -> (port, upstream)."""
    started = []

    def start(script, **model):
        upstream = StreamingUpstream(script)
        config = ModelConfig(provider="openai", name="sim-coder", base_url=upstream.url, **model)
        server = make_server(Gateway("baseline", None, config, None, tmp_path / "gw"))
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        started.append((server, upstream))
        return server.server_address[1], upstream

    yield start
    for server, upstream in started:
        server.shutdown()
        server.server_close()
        upstream.close()


def events_of(data: bytes) -> list[dict]:
    return [json.loads(line[len("data: "):]) for block in data.decode().split("\n\n") for line in block.split("\n")
            if line.startswith("data: ") and line != "data: [DONE]"]


def text_and_calls(wire: str, events: list[dict]) -> tuple[str, list[str]]:
    """The text and the called tools' names a client reads from a streamed reply in `wire`'s format."""
    if wire == "chat":
        deltas = [c["choices"][0]["delta"] for c in events if c.get("choices")]
        return "".join(d.get("content") or "" for d in deltas), \
            [t["function"]["name"] for d in deltas for t in d.get("tool_calls") or ()]
    if wire == "messages":
        return "".join(e["delta"].get("text", "") for e in events if e["type"] == "content_block_delta"), \
            [e["content_block"]["name"] for e in events if e["type"] == "content_block_start"
             and e["content_block"]["type"] == "tool_use"]
    if wire == "responses":
        return "".join(e["delta"] for e in events if e["type"] == "response.output_text.delta"), \
            [e["item"]["name"] for e in events if e["type"] == "response.output_item.added"
             and e["item"]["type"] == "function_call"]
    parts = [p for e in events for p in e["candidates"][0]["content"]["parts"]]
    return "".join(p.get("text", "") for p in parts), [p["functionCall"]["name"] for p in parts if "functionCall" in p]


def read_while_held(port: int, wire: str, stream: Stream, order: list[str]) -> tuple[Any, bytes]:
    """POST the first request in `wire` to the server on `port`, read the first chunk of the reply while
    the upstream `stream` is held (logging it in `order`), then let the upstream go on: the response and
    every byte of the reply."""
    path, body = bodies()[wire]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    reply = conn.getresponse()
    first = reply.read1(65536)
    order.append("client: first chunk")
    stream.go_on.set()
    rest = reply.read()
    conn.close()
    return reply, first + rest


@pytest.mark.parametrize("wire", ["chat", "messages", "responses", "gemini"])
def test_a_streaming_client_gets_its_first_chunk_before_the_upstream_has_sent_its_last(gateway, wire):
    order: list[str] = []
    events = chat_events(TEXT, [("call_up", "bash", ARGUMENTS)], USAGE)
    stream = Stream(events, hold_at=len(events) - 3, log=order)  # holds before the finish, usage and [DONE]
    port, upstream = gateway(lambda i, body: stream)
    reply, data = read_while_held(port, wire, stream, order)
    assert reply.status == 200 and reply.getheader("Content-Type") == "text/event-stream"
    assert order.index("client: first chunk") < order.index(f"sending {len(events) - 1}")
    assert upstream.requests[0]["stream"] is True
    assert text_and_calls(wire, events_of(data)) == (TEXT, ["bash"])


def test_sdk_clients_read_a_reply_passed_on_as_it_streams(gateway):
    events = chat_events(TEXT, [("call_up", "bash", ARGUMENTS)], USAGE)
    port, _ = gateway(lambda i, body: Stream(events, gap_s=0.01))
    chat = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
    _, body = bodies()["chat"]
    chunks = list(chat.chat.completions.create(**{k: v for k, v in body.items() if k != "stream"}, stream=True,
                                               stream_options={"include_usage": True}))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == TEXT
    assert chunks[-1].usage.prompt_tokens == 90 and len({c.id for c in chunks}) == 1
    _, body = bodies()["messages"]
    claude = anthropic.Anthropic(base_url=f"http://127.0.0.1:{port}", api_key="unused", max_retries=0)
    with claude.messages.stream(**{k: v for k, v in body.items() if k != "stream"}) as stream:
        message = stream.get_final_message()
    assert [b.type for b in message.content] == ["text", "tool_use"] and message.content[0].text == TEXT
    assert message.content[1].input == {"command": "ls"} and message.usage.output_tokens == 12
    _, body = bodies()["responses"]
    with chat.responses.stream(**{k: v for k, v in body.items() if k != "stream"}) as stream:
        response = stream.get_final_response()
    assert response.output_text == TEXT and [i.type for i in response.output] == ["message", "function_call"]


def test_a_client_gone_mid_stream_leaves_its_turn_undelivered(gateway, tmp_path):
    events = chat_events(TEXT, [("call_up", "bash", ARGUMENTS)], USAGE)
    stream = Stream(events, hold_at=len(events) - 3)
    port, _ = gateway(lambda i, body: stream)
    path, body = bodies()["chat"]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
    assert conn.getresponse().read1(65536)
    conn.close()  # gone before the reply's end
    stream.go_on.set()
    turns = _turns(tmp_path / "gw")
    assert [(t.delivered, t.reply) for t in turns] == [(False, TEXT)]


def _turns(folder: Path, wait: bool = True) -> list[TranscriptTurn]:
    deadline = time.monotonic() + (60 if wait else 0)
    while True:
        turns = [r for p in folder.rglob("*.jsonl") for r in read_transcript(p) if isinstance(r, TranscriptTurn)]
        if turns or time.monotonic() > deadline:
            return turns
        time.sleep(0.05)


@pytest.mark.parametrize("asked, sent", [(100, 100), (5000, 1024), (None, 1024)])
def test_the_client_s_max_tokens_is_honoured_up_to_the_model_s(gateway, asked, sent):
    port, upstream = gateway(lambda i, body: (200, {"id": "x", "object": "chat.completion", "created": 0,
                                                    "model": "sim-coder", "usage": USAGE, "choices": [
                                                        {"index": 0, "finish_reason": "stop",
                                                         "message": {"role": "assistant", "content": TEXT}}]}),
                             max_output_tokens=1024)
    path, body = bodies(stream=False, max_tokens=asked)["chat"]
    chat = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
    assert chat.chat.completions.create(**body).choices[0].message.content == TEXT
    assert upstream.requests[0]["max_tokens"] == sent


@pytest.mark.parametrize("wire, prefix", [(CHAT, "chatcmpl-"), (MESSAGES, "msg_"), (RESPONSES, "resp_"), (GEMINI, "")])
def test_every_reply_has_an_id_of_its_own(wire, prefix):
    """Two plain replies, one streamed whole, one passed on as it is written: four ids."""
    completion = Completion(TEXT, (ToolCall("call_1", "bash", ARGUMENTS),), Usage(9, 4))
    plain = ModelRequest(wire.name, "sim-coder", [{"role": "user", "content": TASK}])
    streamed = ModelRequest(wire.name, "sim-coder", [{"role": "user", "content": TASK}], stream=True)
    writer = wire.streamer(streamed)
    replies = [[json.loads(wire.reply(plain, completion).data)] for _ in range(2)] + [
        events_of(wire.reply(streamed, completion).data),
        events_of(writer.opening() + writer.text(TEXT) + writer.closing(completion))]
    ids = [{e.get("id") or (e.get("message") or {}).get("id") or (e.get("response") or {}).get("id")
            or e.get("responseId") for e in events} - {None} for events in replies]
    assert all(len(one) == 1 for one in ids), ids  # one id a reply, in every event that carries one
    assert len(set.union(*ids)) == 4 and all(i.startswith(prefix) and "ctxbench" not in i for i in set.union(*ids))


def test_a_model_failing_after_text_went_out_ends_the_stream_with_an_error_and_no_turn(gateway, tmp_path):
    events = chat_events(TEXT, [("call_up", "bash", ARGUMENTS)], USAGE)
    stream = Stream(events, hold_at=4)  # three words, then silence
    port, upstream = gateway(lambda i, body: stream, idle_timeout_s=0.5, retry_budget_s=60)
    path, body = bodies()["chat"]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        reply = conn.getresponse()
        sent = events_of(reply.read())
    finally:
        stream.go_on.set()
        conn.close()
    assert reply.status == 200 and text_and_calls("chat", sent[:-1]) == ("Listing the files", [])
    assert "no byte of the reply for 0.5 s" in sent[-1]["error"]["message"] and len(upstream.requests) == 1
    assert not list((tmp_path / "gw").rglob("*.jsonl")) or _turns(tmp_path / "gw", wait=False) == []


def test_an_external_runs_route_passes_a_streamed_reply_on_as_it_arrives(tmp_path):
    from ctxbench.harness.agents.route import AgentRoute
    from ctxbench.harness.config import Limits
    from ctxbench.harness.loop.agent import AgentOutcome
    from ctxbench.harness.models import make_upstream
    from ctxbench.harness.records import History, TranscriptHeader
    from ctxbench.harness.records.transcript import TranscriptWriter
    from ctxbench.harness.tokens import TokenCounter
    from ctxbench.strategies.hook import StrategyHook

    order: list[str] = []
    events = chat_events(TEXT, [("call_up", "bash", ARGUMENTS)], USAGE)
    stream = Stream(events, hold_at=len(events) - 3, log=order)
    upstream = StreamingUpstream(lambda i, body: stream)
    config = ModelConfig(provider="openai", name="sim-coder", base_url=upstream.url, api_key_env="PATH")
    counter = TokenCounter()
    hook = StrategyHook("baseline", context_window=config.window, max_output_tokens=config.max_output_tokens,
                        counter=counter)
    transcript = TranscriptWriter(tmp_path / "run.jsonl", TranscriptHeader(
        run_id="baseline/t/0", strategy="baseline", task_id="t", repeat=0, seed=0))
    route = AgentRoute(hook, make_upstream(config, seed=0, counter=counter), config.name, Limits(), config.window,
                       transcript, AgentOutcome("finished", History("", TASK)), tmp_path / "stop")
    server = make_server(route)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        reply, data = read_while_held(server.server_address[1], "chat", stream, order)
    finally:
        server.shutdown()
        server.server_close()
        upstream.close()
    assert reply.status == 200 and order.index("client: first chunk") < order.index(f"sending {len(events) - 1}")
    assert text_and_calls("chat", events_of(data)) == (TEXT, ["bash"])
    assert route.outcome.turns == 1 and route.outcome.tool_calls["bash"] == 1
