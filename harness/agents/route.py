"""The gateway of one external agent's run: the arm's strategy and the run's model behind one socket,
with the run's limits and its transcript.

Every request is one turn: its messages are read as a History, the strategy builds the context, the
model answers, and the turn is written to the run's transcript once the next request shows what the
agent's commands returned. The limits hold here, where the agent cannot reach past them: after
`max_turns` model calls, or once the token budget is spent, every further call is refused with an
error reply and the run ends with that reason; a request over the window is answered as OpenAI
answers it (`context_length_exceeded`) and the run ends `context_overflow`. A bug of ctxbench's while
answering (a strategy that raises, say) is the agent's 500 and ends the run `harness_error`, its
traceback kept (`crash`), as a bug in ctxbench's own loop does: never the agent's failure.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from ctxbench.harness.context import overflow_error
from ctxbench.harness.endpoints.server import passing_on
from ctxbench.harness.loop.agent import AgentOutcome, count_context
from ctxbench.harness.models.counters import learn_from_reply
from ctxbench.harness.models.endpoint import EndpointModel
from ctxbench.harness.wire.conversation import fenced_command, fingerprints, history_from_messages, own_context
from ctxbench.harness.config import Limits
from ctxbench.harness.protocols import Completion, FatalModelError, MalformedOutput, RequestRefused
from ctxbench.harness.pricing import Prices
from ctxbench.harness.protocols import Model
from ctxbench.harness.records import StopReason
from ctxbench.harness.records.transcript import TranscriptWriter, TurnRecorder
from ctxbench.harness.redact import scrub
from ctxbench.harness.wire.base import MODEL_FAILURES, Crash, ModelRequest, Refusal, model_refusal
from ctxbench.harness.wire.aider import edit_blocks
from ctxbench.harness.wire.messages import marked_for
from ctxbench.strategies.hook import StrategyHook

__all__ = ["AgentRoute", "reply_actions"]

def reply_actions(completion: Completion) -> list[str]:
    """The actions of an external agent's reply, by tool name: its tool calls; for an agent that acts in
    its text, one `bash` for a fenced command (mini-swe-agent's text mode) or an `edit` per
    SEARCH/REPLACE block (Aider's)."""
    if completion.tool_calls:
        return [c.name for c in completion.tool_calls]
    edits = edit_blocks(completion.text)
    if edits:
        return ["edit"] * len(edits)
    return ["bash"] if fenced_command(completion.text) else []


class AgentRoute:
    """Answers one run's agent; `outcome` holds what the run spent, `stop` why the gateway ended it."""

    owner = "ctxbench"

    def __init__(self, hook: StrategyHook, model: Model, model_name: str, limits: Limits, context_window: int,
                 transcript: TranscriptWriter, outcome: AgentOutcome, stop_file: Path,
                 prices: Prices | None = None) -> None:
        self.hook, self.model, self.model_name = hook, model, model_name
        self.limits, self.outcome, self.stop_file = limits, outcome, stop_file
        self.recorder = TurnRecorder(transcript, hook.counter, context_window, prices)
        """Builds the run's turns; each is written once the agent's next request shows what its commands
        returned (`TurnRecorder.hold`)."""
        self.stop: tuple[StopReason, str] | None = None
        self.fatal: FatalModelError | None = None
        """A fatal provider error (bad key, unknown model): the experiment stops after this run."""
        self.crash: Exception | None = None
        """ctxbench's own failure while answering (with its traceback): the run ends `harness_error`."""
        self.retried_s = 0.0
        """Seconds spent retrying a failing endpoint: not the agent's time, so its deadline moves by them."""
        self._previous: list[str] | None = None
        """The fingerprints of the agent's last answered request."""
        self._lock = threading.Lock()

    def answer(self, request: ModelRequest) -> Completion | Refusal:
        with self._lock:
            try:
                return self._answer(request)
            except Exception as exc:  # a bug of ours: the run ends harness_error, the agent gets a 500
                if self.crash is None:
                    self.crash = exc
                self._stop("harness_error", scrub(f"{type(exc).__name__}: {exc}"))
                return Crash.of(exc)

    def _answer(self, request: ModelRequest) -> Completion | Refusal:
        messages, tools = request.messages, request.tools
        if self.stop is not None or self.outcome.turns >= self.limits.max_turns:
            self._release(messages)  # a request refused still shows what the last turn's commands returned
            if self.stop is not None:
                return self._refusal()
            return self._end("max_turns", f"the run's limit of {self.limits.max_turns} model calls is reached")
        try:
            try:
                context = self.hook(messages, tools)
            except MODEL_FAILURES:  # the strategy's overflow: the held turn's results are in this request
                self._release(messages)
                raise
            self.recorder.release(self.hook.history)
            counter = self.hook.counter
            tokens = counter.count_prompt(context.messages, tools)
            count_context(self.outcome, context, tokens)
            completion = self._complete(marked_for(self.model, context.messages, request.cache_marks), tools,
                                        request)
        except MODEL_FAILURES as exc:
            return self._failed(exc)
        learn_from_reply(counter, context.messages, tools, completion.usage)
        sent = fingerprints(messages)
        turn = self.recorder.turn(self.outcome.turns - 1, context, tokens, completion.text, completion.tool_calls,
                                  completion.usage, request_messages=len(messages),
                                  own_context=own_context(messages, sent, self._previous))
        if turn.own_context == "rewritten":
            self.outcome.own_rewrites += 1
        self.recorder.hold(turn)
        self._previous = sent
        if self.outcome.total_tokens >= self.limits.max_tokens_per_run:
            self._stop("token_budget", f"the run's token budget of {self.limits.max_tokens_per_run} is spent")
        return completion

    def _failed(self, error: Exception) -> Refusal:
        """The answer to a failed model call (`model_refusal`), and what the failure does to the run: an
        unreadable reply is an invalid action, a request over the window ends it `context_overflow`, any
        other failure `model_error` (a fatal one stops the experiment after it), its refusal then saying
        that the run ended."""
        refusal = model_refusal(error)
        if isinstance(error, MalformedOutput):
            self.outcome.invalid_actions += 1
            return refusal
        if refusal.code == "context_length_exceeded":
            self._stop("context_overflow", overflow_error(error))
            return refusal
        if isinstance(error, RequestRefused):
            return self._end("request_refused", str(error), status=refusal.status)
        if isinstance(error, FatalModelError):
            self.fatal = error
        return self._end("model_error", str(error), status=refusal.status)

    def _complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                  request: ModelRequest) -> Completion:
        """The model's reply; an endpoint's text passed on to an agent that streams as it arrives
        (`passing_on`, as the gateway does; not where calls are read from the text, which would hold them)."""
        t0 = time.monotonic()
        self.recorder.call_starts(t0)
        model = self.model
        try:
            if isinstance(model, EndpointModel) and model.config.tool_calls == "native" and (
                    listener := passing_on(request)) is not None:
                completion = model.complete(messages, tools, listener)
            else:
                completion = model.complete(messages, tools)
        finally:
            self.outcome.model_s += time.monotonic() - t0
        self.retried_s += completion.retried_s
        out = self.outcome
        out.turns += 1
        out.add_usage(completion.usage)
        out.tool_calls.update(reply_actions(completion))
        return completion

    def _release(self, messages: list[dict[str, Any]]) -> None:
        """Write the held turn with what its commands returned, as `messages` (a request not answered) show."""
        if self.recorder.holding:
            self.recorder.release(history_from_messages(messages, self.hook.test_commands))

    def flush(self) -> None:
        """Write the last turn (the agent made no further request to show what its commands returned)."""
        with self._lock:
            self.recorder.release(None)

    def _stop(self, reason: StopReason, detail: str) -> None:
        if self.stop is None:
            self.stop = (reason, detail)
            self.stop_file.touch()

    def _end(self, reason: StopReason, detail: str, status: int = 400) -> Refusal:
        self._stop(reason, detail)
        return self._refusal(status)

    def _refusal(self, status: int = 400) -> Refusal:
        assert self.stop is not None
        reason, detail = self.stop
        return Refusal(status, f"ctxbench ended this run ({reason}): {detail}; no further model calls are answered",
                       kind="invalid_request_error" if status < 500 else "server_error", code=reason)
