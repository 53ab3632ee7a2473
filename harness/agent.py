"""The agent loop: history -> strategy -> model -> tools -> observations, until finish or a limit."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ctxbench.harness.config import Limits
from ctxbench.harness.context import Budget, ContextOverflow
from ctxbench.harness.failures import StopReason
from ctxbench.harness.history import History, Observation, ToolCall, Turn
from ctxbench.harness.models.base import ContextLengthExceeded, MalformedOutput, TransientModelError
from ctxbench.harness.tools import TOOL_SCHEMAS, Toolbox

__all__ = ["AgentOutcome", "run_agent"]

_LOSS_ACTIONS = {"trimmed", "masked", "evicted", "summarized"}


@dataclass
class AgentOutcome:
    """Everything the loop measured; the runner adds the evaluation."""

    stop: StopReason
    history: History
    turns: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0
    strategy_tokens: int = 0
    strategy_completion_tokens: int = 0
    peak_context_tokens: int = 0
    model_s: float = 0.0
    tool_s: float = 0.0
    test_s: float = 0.0
    invalid_actions: int = 0
    context_loss_events: int = 0
    tool_calls: Counter = field(default_factory=Counter)
    ledgers: list[dict[str, Any]] = field(default_factory=list)
    detail: str = ""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens + self.strategy_tokens


def run_agent(history: History, strategy: Any, model: Any, toolbox: Toolbox, budget: Budget,
              limits: Limits, deadline: float) -> AgentOutcome:
    """Run one agent to completion. Fatal model errors propagate; everything else ends the run."""
    out = AgentOutcome("max_turns", history)
    invalid_streak = 0
    last_action, action_streak = None, 0
    for index in range(limits.max_turns):
        if time.monotonic() > deadline:
            out.stop = "timeout"
            return out
        try:
            context = strategy.build(out.history, budget)
        except ContextOverflow as exc:
            out.stop, out.detail = "context_overflow", str(exc)
            return out
        ledger = context.ledger
        out.strategy_tokens += ledger.strategy_tokens
        out.strategy_completion_tokens += ledger.strategy_completion_tokens
        out.context_loss_events += sum(a.kind in _LOSS_ACTIONS for a in ledger.actions)
        context_tokens = budget.counter.count_messages(context.messages) + budget.counter.count_tools(TOOL_SCHEMAS)
        out.peak_context_tokens = max(out.peak_context_tokens, context_tokens)
        record = {"turn": index, "context_tokens": context_tokens,
                  "fill": round(context_tokens / budget.context_window, 4), **ledger.as_dict()}
        out.ledgers.append(record)
        t0 = time.monotonic()
        try:
            completion = model.complete(context.messages, TOOL_SCHEMAS)
        except ContextLengthExceeded as exc:
            out.stop, out.detail = "context_overflow", str(exc)
            return out
        except TransientModelError as exc:
            out.stop, out.detail = "model_error", str(exc)
            return out
        except MalformedOutput as exc:
            completion = None
            malformed = str(exc)
        finally:
            out.model_s += time.monotonic() - t0
        out.turns = index + 1
        if completion is None:
            call = ToolCall(f"invalid_{index}", "invalid_output", "{}")
            obs = Observation(call.id, call.name, (), f"error: your reply could not be parsed: {malformed}",
                              True, "error", index)
            turn = Turn(index, "", (call,), (obs,))
            invalid = 1
            finished = False
        else:
            out.prompt_tokens += completion.usage.prompt_tokens
            out.completion_tokens += completion.usage.completion_tokens
            out.cached_tokens += completion.usage.cached_tokens
            t1 = time.monotonic()
            results = [toolbox.execute(c, index) for c in completion.tool_calls]
            out.tool_s += time.monotonic() - t1
            out.test_s += sum(r.test_seconds for r in results)
            turn = Turn(index, completion.text, completion.tool_calls, tuple(r.observation for r in results))
            invalid = sum(r.invalid for r in results) + (0 if completion.tool_calls else 1)
            finished = any(r.finished for r in results)
            for c in completion.tool_calls:
                out.tool_calls[c.name] += 1
        record["tool_calls"] = [{"name": c.name, "arguments": c.arguments[:300]} for c in turn.tool_calls]
        record["observations"] = [{"kind": o.kind, "is_error": o.is_error,
                                   "tokens": budget.counter.count(o.content)} for o in turn.observations]
        out.history = out.history.append(turn)
        out.invalid_actions += invalid
        invalid_streak = invalid_streak + 1 if invalid else 0
        if finished:
            out.stop = "finished"
            return out
        if invalid_streak >= limits.max_invalid_actions:
            out.stop = "invalid_action"
            return out
        action = tuple((c.name, c.arguments) for c in turn.tool_calls)
        action_streak = action_streak + 1 if action == last_action else 1
        last_action = action
        if action_streak >= limits.loop_threshold:
            out.stop = "loop"
            return out
        if out.total_tokens >= limits.max_tokens_per_run:
            out.stop = "token_budget"
            return out
    return out
