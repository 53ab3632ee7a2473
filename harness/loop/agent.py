"""The agent loop: history -> strategy -> model -> tools -> observations, until a stop.

Every way a run ends is an `AgentStopped` raised inside a step and caught once in `Agent.run`.
Each finished turn is appended to the run's transcript before the next one starts.
"""

from __future__ import annotations

import dataclasses
import time
from collections import Counter
from dataclasses import dataclass, field
from ctxbench.harness.config import Limits
from ctxbench.harness.context import Budget, Context, ContextOverflow, overflow_error
from ctxbench.harness.protocols import (Completion, ContextLengthExceeded, MalformedOutput, RequestRefused,
                                        TransientModelError)
from ctxbench.harness.pricing import Prices
from ctxbench.harness.protocols import Model, Strategy
from ctxbench.harness.models.counters import learn_from_reply
from ctxbench.harness.loop.stops import (AgentStopped, ContextOverflowed, Finished, InvalidActions, Looping,
                                          ModelFailed, Refused, TimedOut, TokenBudgetSpent, TurnLimit)
from ctxbench.harness.redact import scrub
from ctxbench.harness.records import History, Observation, StopReason, ToolCall, TranscriptEnd, Turn, Usage
from ctxbench.harness.loop.tools import TOOL_SCHEMAS, Toolbox
from ctxbench.harness.records.transcript import TranscriptWriter, TurnRecorder

__all__ = ["AgentOutcome", "Agent", "run_agent", "count_context"]

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
    cache_write_tokens: int = 0
    """Prompt tokens the provider wrote to its cache (priced at the cache-write price)."""
    strategy_tokens: int = 0
    strategy_completion_tokens: int = 0
    peak_context_tokens: int = 0
    model_s: float = 0.0
    tool_s: float = 0.0
    test_s: float = 0.0
    invalid_actions: int = 0
    context_loss_events: int = 0
    own_rewrites: int = 0
    cut_replies: int = 0
    """Replies the endpoint cut short (`finish_reason: length`): at the output limit or the server's window."""
    usage_estimated: int = 0
    """Calls whose endpoint reported no usage: their tokens counted with the run's tokenizer."""
    """Times an external agent replaced the history it sends (its own compaction), seen at its gateway."""
    tool_calls: Counter = field(default_factory=Counter)
    detail: str = ""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens + self.strategy_tokens

    def add_usage(self, usage: Usage) -> None:
        """One model call's tokens, as the endpoint reported them, into the run's totals."""
        self.prompt_tokens += usage.prompt_tokens
        self.completion_tokens += usage.completion_tokens
        self.cached_tokens += usage.cached_tokens
        self.cache_write_tokens += usage.cache_write_tokens
        self.usage_estimated += usage.estimated


class Agent:
    """One run's loop. Fatal model errors and harness bugs propagate; every other stop is recorded."""

    def __init__(self, strategy: Strategy, model: Model, toolbox: Toolbox, budget: Budget, limits: Limits,
                 deadline: float, transcript: TranscriptWriter | None = None, prices: Prices | None = None) -> None:
        self.strategy, self.model, self.toolbox = strategy, model, toolbox
        self.budget, self.limits, self.deadline, self.transcript = budget, limits, deadline, transcript
        self.recorder = TurnRecorder(transcript, budget.counter, budget.context_window, prices) \
            if transcript is not None else None
        self.invalid_streak = 0
        self.last_action: tuple | None = None
        self.action_streak = 0

    def run(self, history: History) -> AgentOutcome:
        out = AgentOutcome("max_turns", history)
        try:
            for index in range(self.limits.max_turns):
                self.step(out, index)
            raise TurnLimit()
        except AgentStopped as stop:
            out.stop, out.detail = stop.reason, str(stop)
        except Exception as exc:
            self._end("harness_error", scrub(f"{type(exc).__name__}: {exc}"), out.turns)
            raise
        self._end(out.stop, out.detail, out.turns)
        return out

    def step(self, out: AgentOutcome, index: int) -> None:
        if time.monotonic() > self.deadline:
            raise TimedOut()
        context, context_tokens = self.build(out)
        completion, malformed = self.query(out, context)
        out.turns = index + 1
        turn, invalid, finished = self.execute(out, index, completion, malformed)
        out.history = out.history.append(turn)
        self.record(index, context, context_tokens, turn, completion, malformed)
        self.check(out, turn, invalid, finished)

    def build(self, out: AgentOutcome) -> tuple[Context, int]:
        """The strategy's context; model errors of a strategy that calls the model end the run as any other."""
        try:
            context = self.strategy.build(out.history, self.budget)
        except (ContextOverflow, ContextLengthExceeded) as exc:
            _count_spent(out, exc)
            raise ContextOverflowed(overflow_error(exc)) from exc
        except RequestRefused as exc:
            _count_spent(out, exc)
            raise Refused(f"in the strategy's build: {exc}") from exc
        except (TransientModelError, MalformedOutput) as exc:  # the strategy's own model call; fatal ones propagate
            _count_spent(out, exc)
            raise ModelFailed(f"in the strategy's build: {exc}") from exc
        tokens = self.budget.counter.count_prompt(context.messages, TOOL_SCHEMAS)
        count_context(out, context, tokens)
        return context, tokens

    def query(self, out: AgentOutcome, context: Context) -> tuple[Completion | None, str]:
        """The model's reply, or None and why it could not be parsed."""
        t0 = time.monotonic()
        if self.recorder is not None:
            self.recorder.call_starts(t0)
        try:
            completion = self.model.complete(context.messages, TOOL_SCHEMAS)
            self.deadline += completion.retried_s  # waiting on a failing endpoint is not the agent's time
            learn_from_reply(self.budget.counter, context.messages, TOOL_SCHEMAS, completion.usage)
            return completion, ""
        except ContextLengthExceeded as exc:
            raise ContextOverflowed(overflow_error(exc)) from exc
        except TransientModelError as exc:
            raise ModelFailed(str(exc)) from exc
        except RequestRefused as exc:
            raise Refused(str(exc)) from exc
        except MalformedOutput as exc:
            return None, str(exc)
        finally:
            out.model_s += time.monotonic() - t0

    def execute(self, out: AgentOutcome, index: int, completion: Completion | None,
                malformed: str) -> tuple[Turn, int, bool]:
        """Run the tool calls: the turn, how many actions were invalid, and whether the agent finished."""
        if completion is None:
            call = ToolCall(f"invalid_{index}", "invalid_output", "{}")
            obs = Observation(call.id, call.name, (), f"error: your reply could not be parsed: {malformed}",
                              True, "error", index)
            return Turn(index, "", (call,), (obs,)), 1, False
        out.cut_replies += completion.finish_reason == "length"
        out.add_usage(completion.usage)
        t1 = time.monotonic()
        results = [self.toolbox.execute(c, index) for c in completion.tool_calls]
        out.tool_s += time.monotonic() - t1
        out.test_s += sum(r.test_seconds for r in results)
        out.tool_calls.update(c.name for c in completion.tool_calls)
        observations = tuple(dataclasses.replace(r.observation, content=scrub(r.observation.content)) for r in results)
        turn = Turn(index, completion.text, completion.tool_calls, observations)
        invalid = sum(r.invalid for r in results) + (0 if completion.tool_calls else 1)
        return turn, invalid, any(r.finished for r in results)

    def check(self, out: AgentOutcome, turn: Turn, invalid: int, finished: bool) -> None:
        out.invalid_actions += invalid
        self.invalid_streak = self.invalid_streak + 1 if invalid else 0
        if finished:
            raise Finished()
        if self.invalid_streak >= self.limits.max_invalid_actions:
            raise InvalidActions()
        action = tuple((c.name, c.arguments) for c in turn.tool_calls)
        self.action_streak = self.action_streak + 1 if action == self.last_action else 1
        self.last_action = action
        if self.action_streak >= self.limits.loop_threshold:
            raise Looping()
        if out.total_tokens >= self.limits.max_tokens_per_run:
            raise TokenBudgetSpent()

    def record(self, index: int, context: Context, context_tokens: int, turn: Turn, completion: Completion | None,
               malformed: str) -> None:
        if self.recorder is not None:
            usage = completion.usage if completion is not None else Usage()
            self.recorder.write(self.recorder.turn(index, context, context_tokens, turn.text, turn.tool_calls, usage,
                                                   turn.observations, malformed,
                                                   finish_reason=completion.finish_reason if completion else None))

    def _end(self, stop: StopReason, detail: str, turns: int) -> None:
        if self.transcript is not None:
            self.transcript.end(TranscriptEnd(stop=stop, detail=detail, turns=turns))


def run_agent(history: History, strategy: Strategy, model: Model, toolbox: Toolbox, budget: Budget,
              limits: Limits, deadline: float, transcript: TranscriptWriter | None = None,
              prices: Prices | None = None) -> AgentOutcome:
    """Run one agent to completion (its turns costed at `prices`). Fatal model errors propagate; everything
    else ends the run."""
    return Agent(strategy, model, toolbox, budget, limits, deadline, transcript, prices).run(history)


def count_context(out: AgentOutcome, context: Context, tokens: int) -> None:
    """Add what building one request's context cost and dropped: the strategy's own tokens, the
    context-loss events of its ledger, and the request's size (`tokens`) to the peak."""
    ledger = context.ledger
    out.strategy_tokens += ledger.strategy_tokens
    out.strategy_completion_tokens += ledger.strategy_completion_tokens
    out.context_loss_events += sum(a.kind in _LOSS_ACTIONS for a in ledger.actions)
    out.peak_context_tokens = max(out.peak_context_tokens, tokens)


def _count_spent(out: AgentOutcome, exc: Exception) -> None:
    """Add the tokens a failed build had already spent on model calls (`ModelError.ledger`)."""
    spent = getattr(exc, "ledger", None)
    if spent is not None:
        out.strategy_tokens += spent.strategy_tokens
        out.strategy_completion_tokens += spent.strategy_completion_tokens
