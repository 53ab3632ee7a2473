"""Model replies and the typed errors every provider raises."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxbench.harness.records import ContextLedger, ToolCall, Usage

__all__ = ["Usage", "Completion", "ModelError", "ContextLengthExceeded", "TransientModelError",
           "UnreadableReply", "FatalModelError", "MalformedOutput"]


@dataclass(frozen=True)
class Completion:
    """One model reply."""

    text: str
    tool_calls: tuple[ToolCall, ...] = field(default=())
    usage: Usage = field(default_factory=Usage)
    retried_s: float = 0.0
    """Seconds spent on a failing endpoint before this reply (failed attempts and the waits between
    them): not the agent's time, so the run's deadline moves by as much."""


class ModelError(Exception):
    """Base of provider errors.

    A strategy whose `build` fails on a model call sets `ledger` (its ContextLedger of that build) so
    the tokens its earlier calls spent are still counted.
    """

    ledger: ContextLedger | None = None


class ContextLengthExceeded(ModelError):
    """The request is over the model's context window (run ends as `context_overflow`)."""


class TransientModelError(ModelError):
    """Rate limit, 5xx, timeout, unreadable reply: retried with backoff within the retry budget
    (`model.retry_budget_s`); an endpoint still failing after it ends the run as `model_error`."""

    retry_after: float = 0.0
    """Seconds the endpoint asked to wait (`Retry-After`), 0 when it did not say."""
    throttled: bool = False
    """The endpoint refused for load (429, 503): its limit of calls in flight shrinks."""


class UnreadableReply(TransientModelError):
    """A reply that is not a chat completion (HTML, JSON cut short, no choice, a null message): the
    endpoint's fault, not the model's, so it is retried like a 5xx."""


class FatalModelError(ModelError):
    """Authentication, unknown model, bad request: stops the whole experiment."""


class MalformedOutput(ModelError):
    """The model's own output could not be used (an empty summary, say): becomes an invalid-action
    observation. A reply the endpoint garbled is an UnreadableReply instead."""
