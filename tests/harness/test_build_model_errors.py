"""A model error inside a strategy's build (the summarizer's own call) ends the run as model_error or
context_overflow with the tokens already spent counted; a fatal one stops the experiment."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from ctxbench.harness.loop.agent import run_agent
from ctxbench.harness.config import Limits
from ctxbench.harness.protocols import (Completion, ContextLengthExceeded, FatalModelError, TransientModelError,
                                          Usage)
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.loop.tools import Toolbox
from ctxbench.harness.environments.workspace import Workspace
from ctxbench.strategies import StrategyServices, create_strategy
from ctxbench.strategies.testing import EchoSummaryModel, make_budget, scripted_history

ROOT = Path(__file__).resolve().parents[2]


class FailingSummaries(EchoSummaryModel):
    """Summarizes `ok` times (usage 50+ / 20 each), then fails with `error` (or replies with nothing)."""

    def __init__(self, ok: int, error: Exception | None) -> None:
        super().__init__()
        self.ok, self.error = ok, error

    def complete(self, messages, tools) -> Completion:
        if len(self.calls) < self.ok:
            return super().complete(messages, tools)
        self.calls.append((messages, tools))
        if self.error is None:
            return Completion("   ", (), Usage(40, 1))
        raise self.error


@pytest.fixture
def toolbox():
    ws = Workspace.create(load_taskset(ROOT / "tasksets" / "smoke").tasks[0], sys.executable)
    yield Toolbox(ws, 30, 20_000)
    ws.cleanup()


def drive(model, toolbox):
    """A long history, so the summarizer's first build folds several turns: one call each."""
    strategy = create_strategy("summarizer", {"history_share": 0.15, "mode": "model"}, StrategyServices(model=model))
    return run_agent(scripted_history(30), strategy, model, toolbox, make_budget(), Limits(max_turns=5),
                     time.monotonic() + 120)


def spent(model: FailingSummaries) -> tuple[int, int]:
    prompt = sum(50 + len(messages[-1]["content"]) // 10 for messages, _ in model.calls[:model.ok])
    return prompt + 20 * model.ok, 20 * model.ok


@pytest.mark.parametrize("error, reason, words", [
    (TransientModelError("HTTP 503 from http://x/v1: overloaded (gave up after 5 attempts)"), "model_error", "HTTP 503"),
    (None, "model_error", "empty summary"),
    (ContextLengthExceeded("maximum context length is 8192 tokens"), "context_overflow", "maximum context length"),
])
def test_a_model_error_in_build_ends_the_run_with_the_spent_tokens_counted(toolbox, error, reason, words):
    model = FailingSummaries(ok=2, error=error)
    out = drive(model, toolbox)
    assert len(model.calls) == 3, "two summaries, then the failing call, then no more"
    assert out.stop == reason and words in out.detail and out.turns == 0
    total, completion = spent(model)
    if error is None:  # the empty reply was a call too, and its tokens were spent
        total, completion = total + 41, completion + 1
    assert (out.strategy_tokens, out.strategy_completion_tokens) == (total, completion)


def test_a_fatal_model_error_in_build_stops_the_experiment(toolbox):
    with pytest.raises(FatalModelError, match="authentication"):
        drive(FailingSummaries(ok=1, error=FatalModelError("authentication failed (401)")), toolbox)
