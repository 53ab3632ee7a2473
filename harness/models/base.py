"""Model replies and the typed errors every provider raises."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxbench.harness.records import ToolCall, Usage

__all__ = ["Usage", "Completion", "ModelError", "ContextLengthExceeded", "TransientModelError",
           "FatalModelError", "MalformedOutput"]


@dataclass(frozen=True)
class Completion:
    """One model reply."""

    text: str
    tool_calls: tuple[ToolCall, ...] = field(default=())
    usage: Usage = field(default_factory=Usage)


class ModelError(Exception):
    """Base of provider errors.

    A strategy whose `build` fails on a model call sets `ledger` (its ContextLedger of that build) so
    the tokens its earlier calls spent are still counted.
    """

    ledger = None


class ContextLengthExceeded(ModelError):
    """The request is over the model's context window (run ends as `context_overflow`)."""


class TransientModelError(ModelError):
    """Rate limit, 5xx, timeout: retried with backoff; after the last retry, `model_error`."""


class FatalModelError(ModelError):
    """Authentication, unknown model, bad request: stops the whole experiment."""


class MalformedOutput(ModelError):
    """The reply could not be understood at all (becomes an invalid-action observation)."""
