"""An external agent's requests counted in the served model's own tokens: its run's route and
`ctxbench gateway` count each request with the agent's own tools through the server (`endpoint`), and
feed a `calibrated` counter each reply's usage. The agent here is mini-swe-agent's shape, one `bash`
tool, against a server on 127.0.0.1 that renders and tokenizes as llama.cpp's does
(tests/models/served_fakes.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import served_fakes as fakes

from ctxbench.harness.agents.route import AgentRoute
from ctxbench.harness.config import Limits, ModelConfig
from ctxbench.harness.endpoints.gateway import Gateway
from ctxbench.harness.loop.agent import AgentOutcome
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.harness.models import make_upstream
from ctxbench.harness.models.counters import CalibratedCounter, EndpointCounter, learn_from_reply
from ctxbench.harness.models.served_counting import model_counter
from ctxbench.harness.protocols import Completion
from ctxbench.harness.records import History, TranscriptHeader, TranscriptTurn, Usage
from ctxbench.harness.records.transcript import TranscriptWriter, read_transcript
from ctxbench.harness.wire import CHAT
from ctxbench.harness.wire.base import ModelRequest
from ctxbench.strategies.hook import StrategyHook

BASH_TOOL = {"type": "function", "function": {"name": "bash", "description": "Execute a bash command",
             "parameters": {"type": "object", "properties": {"command": {"type": "string",
                            "description": "The bash command to execute"}}, "required": ["command"]}}}
"""mini-swe-agent's one tool (minisweagent.models.utils.actions_toolcall.BASH_TOOL)."""
SYSTEM = "You are a helpful assistant that can interact with a computer shell to solve programming tasks."
TASK = "<pr_description>\nROUND(2.675, 2) gives 2.67; spreadsheets give 2.68. Fix exprcalc/functions.py.\n</pr_description>"
COMMANDS = ["ls -la exprcalc", "cat -n exprcalc/functions.py | sed -n 1,40p", "python -m pytest -q tests 2>&1 | tail -5"]
OUTPUT = "\n".join(f"{i:>5}  def round_{i}(value, digits=0):  # 12{i}45" for i in range(1, 25))


@pytest.fixture
def server():
    """A llama.cpp server that counts with `/apply-template` + `/tokenize` and answers every chat
    request with the next of COMMANDS as a `bash` call, reporting the request's prompt tokens."""
    started = []

    def chat(body: dict[str, Any]) -> tuple[int, Any]:
        n = fakes.prompt_tokens(body)
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        call = {"id": f"call_{turn}", "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": COMMANDS[turn % len(COMMANDS)]})}}
        return 200, {"object": "chat.completion", "model": body.get("model"), "choices": [
            {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": "",
                                                                    "tool_calls": [call]}}],
            "usage": {"prompt_tokens": n, "completion_tokens": 9, "total_tokens": n + 9}}

    def begin() -> Any:
        routes = fakes.llama_cpp(input_tokens=False)
        routes["POST", "/v1/chat/completions"] = chat
        started.append(fakes.start(routes))
        return started[-1]

    yield begin
    for s in started:
        s.shutdown()
        s.server_close()


def served(url: str, tokenizer: str) -> ModelConfig:
    return ModelConfig(provider="openai", name="qwen", base_url=url, tokenizer=tokenizer, context_window=8192,
                       max_output_tokens=64)


def agent_run(answer: Any, turns: int = 3) -> int:
    """mini-swe-agent's requests, each with the reply to the previous one and its command's output;
    returns the replies received."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    for _ in range(turns):
        reply = answer(ModelRequest(wire=CHAT, model="qwen", messages=list(messages), tools=[dict(BASH_TOOL)]))
        assert isinstance(reply, Completion), reply
        calls = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                 for c in reply.tool_calls]
        messages += [{"role": "assistant", "content": reply.text, "tool_calls": calls},
                     *({"role": "tool", "tool_call_id": c["id"],
                        "content": json.dumps({"returncode": 0, "output": OUTPUT})} for c in calls)]
    return turns


def turns_of(path: Path) -> list[TranscriptTurn]:
    return [r for r in read_transcript(path) if isinstance(r, TranscriptTurn)]


def route_for(config: ModelConfig, tmp_path: Path) -> tuple[AgentRoute, TranscriptWriter]:
    """An external run's route as `run_external` builds it, its counter the run's budget's (bound to
    ctxbench's own tools, as `make_budget` makes it)."""
    counter = model_counter(config, TOOL_SCHEMAS)
    hook = StrategyHook("baseline", context_window=config.window, max_output_tokens=config.max_output_tokens,
                        counter=counter)
    transcript = TranscriptWriter(tmp_path / "run.jsonl", TranscriptHeader(
        run_id="baseline/t/0", strategy="baseline", task_id="t", repeat=0, seed=0))
    route = AgentRoute(hook, make_upstream(config, seed=0, counter=counter), config.name, Limits(), config.window,
                       transcript, AgentOutcome("finished", History("", TASK)), tmp_path / "stop")
    return route, transcript


def tools_frames(s: Any) -> int:
    """How often the server was asked to render its probe conversation with mini-swe-agent's tool."""
    return sum(1 for _, path, body in s.asked if path == "/apply-template" and body.get("tools") == [BASH_TOOL]
               and [m["content"] for m in body["messages"]] == ["You are a helpful assistant.", "Go on."])


def test_the_gateway_counts_each_request_with_the_agents_own_tools(server, tmp_path):
    s = server()
    gateway = Gateway("baseline", None, served(s.url, "endpoint"), transcripts=tmp_path / "gw")
    assert isinstance(gateway.counter, EndpointCounter)
    agent_run(gateway.answer)
    turns = turns_of(next((tmp_path / "gw" / "baseline").iterdir()))
    assert len(turns) == 3
    assert [t.context_tokens for t in turns] == [t.usage.prompt_tokens for t in turns], "the server's own count"
    assert tools_frames(s) == 1, "the agent's tools counted once, however many requests carry them"
    assert gateway.counter.for_tools(json.loads(json.dumps([BASH_TOOL]))) is gateway.counter.for_tools([BASH_TOOL])


def test_an_external_runs_route_counts_each_request_with_the_agents_own_tools(server, tmp_path):
    s = server()
    route, transcript = route_for(served(s.url, "endpoint"), tmp_path)
    agent_run(route.answer)
    route.flush()
    transcript.close()
    assert route.crash is None and route.stop is None
    turns = turns_of(tmp_path / "run.jsonl")
    assert len(turns) == 3 and route.outcome.turns == 3
    assert [t.context_tokens for t in turns] == [t.usage.prompt_tokens for t in turns], "the server's own count"
    assert tools_frames(s) == 1


def test_calibrated_learns_from_every_reply_an_external_runs_route_gets(server, tmp_path):
    """Each request is counted before it is sent: padded before the first reply, fitted after it."""
    route, transcript = route_for(served(server().url, "calibrated"), tmp_path)
    agent_run(route.answer)
    route.flush()
    transcript.close()
    assert isinstance(route.hook.counter, CalibratedCounter) and route.hook.counter.observations == 3
    errors = [t.context_tokens / t.usage.prompt_tokens - 1 for t in turns_of(tmp_path / "run.jsonl")]
    assert errors[0] > 0.1, f"padded before the first reply: {errors}"
    assert max(abs(e) for e in errors[1:]) < errors[0] / 3, f"fitted to the replies' usage from then on: {errors}"
    assert abs(errors[-1]) < 0.02, errors


def test_calibrated_learns_from_every_reply_the_gateway_gets(server, tmp_path):
    """A gateway's turn is counted once its reply is in: as the server counted it."""
    gateway = Gateway("baseline", None, served(server().url, "calibrated"), transcripts=tmp_path / "gw")
    agent_run(gateway.answer)
    assert isinstance(gateway.counter, CalibratedCounter) and gateway.counter.observations == 3
    turns = turns_of(next((tmp_path / "gw" / "baseline").iterdir()))
    assert [t.context_tokens for t in turns] == [t.usage.prompt_tokens for t in turns]


def test_a_usage_ctxbench_estimated_teaches_a_calibrated_counter_nothing():
    counter = CalibratedCounter()
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    padded = counter.count_prompt(messages, [BASH_TOOL])
    learn_from_reply(counter, messages, [BASH_TOOL], Usage(padded, 5, estimated=True))
    assert counter.observations == 0 and counter.count_prompt(messages, [BASH_TOOL]) == padded
    learn_from_reply(counter, messages, [BASH_TOOL], Usage(200, 5))
    assert counter.observations == 1 and counter.count_prompt(messages, [BASH_TOOL]) == 200
