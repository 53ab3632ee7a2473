"""Malformed model output becomes invalid-action observations, counted, and ends a run at the configured streak."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest
from scripted import ScriptedModel

from ctxbench.harness.loop.agent import run_agent
from ctxbench.harness.config import Limits
from ctxbench.harness.context import Budget
from ctxbench.harness.history import History, ToolCall
from ctxbench.harness.protocols import Completion, MalformedOutput, Usage
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.tokens import TokenCounter
from ctxbench.harness.loop.tools import Toolbox
from ctxbench.harness.environments.workspace import Workspace
from ctxbench.strategies import create_strategy

ROOT = Path(__file__).resolve().parents[2]

BAD_JSON = ("read_file", '{"path": "calc/stats.py"')
UNKNOWN_TOOL = ("rm_rf", {"path": "."})
MISSING_ARGS = ("edit_file", {"path": "calc/stats.py"})
NO_TOOL_CALL = Completion("I think the bug is in median.", (), Usage(50, 5))
GOOD = ("read_file", {"path": "calc/stats.py", "start_line": 1, "end_line": 5})


@pytest.fixture
def workspace():
    ws = Workspace.create(load_taskset(ROOT / "tasksets" / "smoke").tasks[0], sys.executable)
    yield ws
    ws.cleanup()


def drive(workspace, steps, max_invalid: int):
    limits = Limits(max_turns=12, max_invalid_actions=max_invalid, loop_threshold=10)
    budget = Budget(16000, 1024, 500, TokenCounter("cl100k_base"))
    history = History("system", "Fix median.")
    return run_agent(history, create_strategy("baseline", {}), ScriptedModel(steps), Toolbox(workspace, 30, 20_000),
                     budget, limits, time.monotonic() + 60)


@pytest.mark.parametrize("bad", [BAD_JSON, UNKNOWN_TOOL, MISSING_ARGS, NO_TOOL_CALL], ids=["json", "tool", "args", "none"])
def test_streak_of_malformed_calls_ends_as_invalid_action(workspace, bad):
    out = drive(workspace, [bad], max_invalid=3)
    assert out.stop == "invalid_action"
    assert out.turns == 3 and out.invalid_actions == 3
    for turn in out.history.turns:
        for obs in turn.observations:
            assert obs.is_error and obs.kind == "error" and obs.content.startswith("error: ")


def test_a_valid_call_resets_the_streak_and_every_invalid_one_is_counted(workspace):
    steps = [BAD_JSON, UNKNOWN_TOOL, GOOD, MISSING_ARGS, BAD_JSON, GOOD, ("finish", {})]
    out = drive(workspace, steps, max_invalid=3)
    assert out.stop == "finished" and out.turns == 7 and out.invalid_actions == 4
    assert out.tool_calls["rm_rf"] == 1 and out.tool_calls["read_file"] == 4
    messages = [t.observations[0].content for t in out.history.turns]
    assert "not valid JSON" in messages[0] and "unknown tool 'rm_rf'" in messages[1]
    assert "edit_file needs old_text, new_text" in messages[3]


def test_the_threshold_is_configurable(workspace):
    assert drive(workspace, [BAD_JSON], max_invalid=1).turns == 1
    out = drive(workspace, [UNKNOWN_TOOL], max_invalid=5)
    assert out.stop == "invalid_action" and out.turns == 5 and out.invalid_actions == 5


def test_unparseable_reply_from_the_provider_is_an_invalid_action(workspace):
    class Garbled(ScriptedModel):
        def complete(self, messages, tools):
            self.calls += 1
            raise MalformedOutput("reply was not JSON")

    limits = Limits(max_invalid_actions=2)
    out = run_agent(History("s", "t"), create_strategy("baseline", {}), Garbled([]), Toolbox(workspace, 30, 20_000),
                    Budget(16000, 1024, 500, TokenCounter("cl100k_base")), limits, time.monotonic() + 60)
    assert out.stop == "invalid_action" and out.invalid_actions == 2
    assert "could not be parsed: reply was not JSON" in out.history.turns[0].observations[0].content


def test_several_bad_calls_in_one_turn_count_each(workspace):
    both = Completion("", (ToolCall("a", "nope", "{}"), ToolCall("b", "read_file", "{")), Usage(50, 5))
    out = drive(workspace, [both, ("finish", {})], max_invalid=3)
    assert out.stop == "finished" and out.invalid_actions == 2
