"""The interfaces the agent loop is typed by: what a strategy and a model must provide, what a model
answers (`Completion`) and the typed errors every provider raises, and the read-only view of a run's
files that strategies selecting code are given (`RepoView`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping, Protocol, runtime_checkable

from pydantic import BaseModel

from ctxbench.harness.context import Budget, Context
from ctxbench.harness.records import ContextLedger, History, ToolCall, Usage

__all__ = ["Strategy", "Model", "Usage", "Completion", "ModelError", "ContextLengthExceeded",
           "TransientModelError", "UnreadableReply", "FatalModelError", "RequestRefused", "MalformedOutput", "RepoView",
           "StaticRepo"]


@runtime_checkable
class Strategy(Protocol):
    """Builds the context for one request from the full history. Pure: never mutates `history`."""

    name: ClassVar[str]
    params: BaseModel

    def build(self, history: History, budget: Budget) -> Context: ...


@dataclass(frozen=True)
class Completion:
    """One model reply."""

    text: str
    tool_calls: tuple[ToolCall, ...] = field(default=())
    usage: Usage = field(default_factory=Usage)
    retried_s: float = 0.0
    """Seconds spent on a failing endpoint before this reply (failed attempts and the waits between
    them): not the agent's time, so the run's deadline moves by as much."""
    finish_reason: str | None = None
    """Why the reply ended, as the endpoint says it (`stop`, `tool_calls`, `length`: cut at the output
    limit or the server's window, not the model's choice); None where it does not say."""


@runtime_checkable
class Model(Protocol):
    """A chat model with tool calling; raises the typed errors below."""

    takes_cache_marks: ClassVar[bool]
    """Its endpoint reads a client's prompt-cache marks (Anthropic's `cache_control`)."""

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Completion: ...


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
    """Authentication, unknown model: no run can succeed, so the whole experiment stops."""


class RequestRefused(ModelError):
    """The endpoint refused this request (a 4xx other than the key, the model or the window: a message
    sequence its chat template rejects, say): this run's request, not every run's, so the run ends as
    `model_error` with the endpoint's message, and the experiment goes on. Not retried: the same
    request would be refused again."""


class MalformedOutput(ModelError):
    """The model's own output could not be used (an empty summary, say): becomes an invalid-action
    observation. A reply the endpoint garbled is an UnreadableReply instead."""


class RepoView(Protocol):
    """The workspace's current text files. Read-only; reflects the agent's edits."""

    def paths(self) -> list[str]:
        """Workspace-relative paths of text files, sorted."""
        ...

    def read(self, path: str) -> str:
        """The file's current text."""
        ...


class StaticRepo:
    """A RepoView over an in-memory mapping (tests, fixtures)."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self._files = dict(files)

    def paths(self) -> list[str]:
        return sorted(self._files)

    def read(self, path: str) -> str:
        return self._files[path]
