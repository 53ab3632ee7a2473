"""The gateway: a strategy in front of a model, for an agent that is not ctxbench's loop.

The agent here is a plain loop on the `openai` SDK that executes the tool calls it receives in a real
workspace and sends everything back, as external agents do; the gateway runs on a loopback port.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import openai
import pytest

from ctxbench.harness.config import load_config
from ctxbench.harness.errors import InputError
from ctxbench.harness.endpoints.gateway import Gateway
from ctxbench.harness.context import ContextOverflow
from ctxbench.harness.endpoints.server import make_server, respond
from ctxbench.harness.protocols import FatalModelError, MalformedOutput, TransientModelError
from ctxbench.harness.wire import CHAT
from ctxbench.harness.wire.base import Refusal, model_refusal
from ctxbench.harness.history import ToolCall
from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path
from ctxbench.harness.loop.tools import TOOL_SCHEMAS, Toolbox
from ctxbench.harness.records.transcript import read_transcript
from ctxbench.harness.records import TranscriptHeader, TranscriptTurn
from ctxbench.harness.environments.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def smoke():
    return load_taskset(resolve_taskset_path("smoke"))


@pytest.fixture
def gateway(smoke, tmp_path):
    """Start a gateway for (strategy, params) on a free loopback port; yields its URL and transcript folder."""
    servers = []

    def start(strategy: str, params: dict | None = None) -> tuple[str, Path]:
        model = load_config(ROOT / "experiments" / "quickstart.yaml").model
        transcripts = tmp_path / f"gw-{strategy}-{len(servers)}"
        server = make_server(Gateway(strategy, params, model, smoke, transcripts), "127.0.0.1", 0)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/v1", transcripts

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def run_agent(url: str, task, max_turns: int = 16, stream: bool = False) -> tuple[list[dict], bool]:
    """The external agent: ask, execute every tool call in a workspace, answer, until `finish`."""
    steps = agent_steps(url, task, max_turns, stream)
    for _ in steps:
        pass
    return steps.messages, steps.resolved


class agent_steps:
    """The external agent one request at a time (iterate it), so two runs can interleave."""

    def __init__(self, url: str, task, max_turns: int = 16, stream: bool = False) -> None:
        self.client = openai.OpenAI(base_url=url, api_key="not-a-real-key", max_retries=0)
        self.task, self.max_turns, self.stream = task, max_turns, stream
        self.messages: list[dict] = [
            {"role": "system", "content": "You are a careful engineer. Fix the bug."},
            {"role": "user", "content": f"Please solve this issue:\n\n{task.problem_statement}\n"}]
        self.resolved = False

    def __iter__(self):
        ws = Workspace.create(self.task, sys.executable)
        try:
            toolbox = Toolbox(ws, 30, 20_000)
            for turn in range(self.max_turns):
                message = _ask(self.client, self.messages, self.stream)
                self.messages.append(message)
                calls = message.get("tool_calls") or []
                if not calls:
                    self.messages.append({"role": "user", "content": "Use the tools."})
                for call in calls:
                    result = toolbox.execute(ToolCall(call["id"], call["function"]["name"], call["function"]["arguments"]), turn)
                    self.messages.append({"role": "tool", "tool_call_id": call["id"], "content": result.observation.content})
                yield turn
                if any(c["function"]["name"] == "finish" for c in calls):
                    break
            self.resolved = ws.evaluate(60).resolved
        finally:
            ws.cleanup()


def _ask(client, messages: list[dict], stream: bool) -> dict:
    request = dict(model="sim-coder", messages=messages, tools=TOOL_SCHEMAS, seed=3)
    if not stream:
        reply = client.chat.completions.create(**request).choices[0].message
        return reply.model_dump(exclude_none=True)
    text, calls = "", []
    for chunk in client.chat.completions.create(**request, stream=True):
        for choice in chunk.choices:
            text += choice.delta.content or ""
            calls += [c.model_dump(exclude_none=True, exclude={"index"}) for c in choice.delta.tool_calls or []]
    return {"role": "assistant", "content": text, **({"tool_calls": calls} if calls else {})}


def transcript(folder: Path) -> tuple[TranscriptHeader, list[TranscriptTurn]]:
    (path,) = sorted(folder.rglob("*.jsonl"))
    records = list(read_transcript(path))
    return records[0], [r for r in records if isinstance(r, TranscriptTurn)]


def test_an_external_agent_through_a_masking_gateway_resolves_and_every_request_is_logged(gateway, smoke):
    task = smoke.tasks[0]
    url, folder = gateway("observation_masking", {"keep_recent": 1})
    messages, resolved = run_agent(url, task)
    header, turns = transcript(folder)
    replies = [m for m in messages if m["role"] == "assistant"]
    assert resolved
    assert header.task_id == task.id and header.strategy == "observation_masking"
    assert len(turns) == len(replies) and [t.turn for t in turns] == list(range(len(replies)))
    assert [t.reply for t in turns] == [m.get("content") or "" for m in replies]
    masked = [a for t in turns for a in t.ledger.actions if a.kind == "masked"]
    answered = {m["tool_call_id"] for m in messages if m["role"] == "tool"}
    assert masked and {a.target for a in masked} < answered
    assert all(t.request_messages is not None and t.usage.prompt_tokens > 0 for t in turns)
    assert all(t.cost_usd is not None and t.cost_usd > 0 for t in turns)  # quickstart prices like gpt-4o-mini
    assert turns[0].gap_s is None and all(t.gap_s is not None for t in turns[1:])


def test_through_baseline_the_model_receives_exactly_what_the_agent_sent(gateway, smoke):
    url, folder = gateway("baseline")
    messages, _ = run_agent(url, smoke.tasks[1], max_turns=4)
    records = list(read_transcript(sorted(folder.rglob("*.jsonl"))[0]))
    sent = {r.hash: r.message for r in records if r.type == "message"}
    last = [r for r in records if isinstance(r, TranscriptTurn)][-1]
    last_reply = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    request = messages[:last_reply]
    assert [sent[h] for h in last.messages] == [_plain(m) for m in request]


def _plain(message: dict) -> dict:
    out = {k: v for k, v in message.items() if k in ("role", "content", "tool_calls", "tool_call_id")}
    if out["role"] == "assistant":
        out["content"] = out.get("content") or ""
        if out.get("tool_calls"):
            out["tool_calls"] = [{"id": c["id"], "type": "function", "function": {
                "name": c["function"]["name"], "arguments": c["function"]["arguments"]}} for c in out["tool_calls"]]
    return out


def test_a_streaming_agent_gets_the_same_run_as_a_plain_one(gateway, smoke):
    task = smoke.tasks[0]
    plain_messages, plain_resolved = run_agent(gateway("observation_masking")[0], task)
    streamed_messages, streamed_resolved = run_agent(gateway("observation_masking")[0], task, stream=True)
    assert (streamed_resolved, len(streamed_messages)) == (plain_resolved, len(plain_messages))
    assert [m.get("tool_calls") for m in streamed_messages] == [m.get("tool_calls") for m in plain_messages]


def test_two_runs_of_one_task_through_one_gateway_are_two_conversations_even_interleaved(gateway, smoke):
    task = smoke.tasks[0]
    url, folder = gateway("observation_masking", {"keep_recent": 1})
    first, second = agent_steps(url, task), agent_steps(url, task)
    a, b = iter(first), iter(second)
    next(a)
    done = {"a": False, "b": False}
    while not all(done.values()):  # one request of each in turn: the second run starts after the first's turn 0
        for name, steps in (("b", b), ("a", a)):
            if not done[name]:
                done[name] = next(steps, None) is None
    assert first.resolved and second.resolved
    paths = sorted(folder.rglob("*.jsonl"))
    assert len(paths) == 2
    runs = [[r for r in read_transcript(p) if isinstance(r, TranscriptTurn)] for p in paths]
    replies = sorted([[m.get("content") or "" for m in agent.messages if m["role"] == "assistant"]
                      for agent in (first, second)], key=len)
    assert sorted([[t.reply for t in turns] for turns in runs], key=len) == replies
    assert all([t.turn for t in turns] == list(range(len(turns))) for turns in runs)
    # each conversation's strategy saw its own run: what it masked are that run's tool calls
    for turns in runs:
        calls = {c.id for t in turns for c in t.tool_calls}
        assert {a.target for t in turns for a in t.ledger.actions if a.kind == "masked"} <= calls


def test_a_run_after_another_of_the_same_task_starts_its_own_conversation(gateway, smoke):
    url, folder = gateway("baseline")
    first, _ = run_agent(url, smoke.tasks[1], max_turns=3)
    second, _ = run_agent(url, smoke.tasks[1], max_turns=3)
    paths = sorted(folder.rglob("*.jsonl"))
    assert len(paths) == 2
    for path in paths:
        turns = [r for r in read_transcript(path) if isinstance(r, TranscriptTurn)]
        assert [t.turn for t in turns] == [0, 1, 2]
        assert [t.request_messages for t in turns][0] == 2


def test_requests_the_gateway_cannot_serve_get_openais_error_shapes(gateway, smoke):
    url, _ = gateway("baseline")
    client = openai.OpenAI(base_url=url, api_key="x", max_retries=0)
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": smoke.tasks[0].problem_statement}])
    with pytest.raises(openai.BadRequestError) as unknown:
        client.chat.completions.create(model="sim-coder", messages=[{"role": "user", "content": "write me a poem"}])
    assert unknown.value.code == "unknown_task"
    assert [m.id for m in client.models.list()] == ["sim-coder"]


def test_a_strategy_or_setup_that_cannot_work_is_refused_before_serving(smoke):
    model = load_config(ROOT / "experiments" / "quickstart.yaml").model
    with pytest.raises(InputError, match="observation_maskin"):
        Gateway("observation_maskin", None, model, smoke)
    with pytest.raises(InputError):
        Gateway("trimmer", {"limit": -3}, model, smoke)
    with pytest.raises(InputError, match="--taskset"):
        Gateway("baseline", None, model, None)


def test_a_failed_model_call_is_answered_one_way_and_a_crash_is_no_refusal():
    assert model_refusal(ContextOverflow("too long")) == Refusal(400, "too long", param="messages",
                                                                 code="context_length_exceeded")
    assert [model_refusal(e).status for e in (TransientModelError("down"), MalformedOutput("garbled"),
                                             FatalModelError("bad key"))] == [503, 502, 502]

    class Broken:
        model_name, owner = "sim-coder", "test"

        def answer(self, request):
            raise RuntimeError("a bug")

    reply = respond(Broken(), CHAT, {"model": "sim-coder", "messages": [{"role": "user", "content": "hi"}]})
    assert reply.status == 500 and json.loads(reply.data) == {"error": {
        "message": "ctxbench internal error: RuntimeError('a bug')", "type": "server_error", "param": None, "code": None}}
