"""The interfaces the agent loop is typed by: what a strategy and a model must provide."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel

from ctxbench.harness.context import Budget, Context
from ctxbench.harness.models.base import Completion
from ctxbench.harness.records import History

__all__ = ["Strategy", "Model"]


@runtime_checkable
class Strategy(Protocol):
    """Builds the context for one request from the full history. Pure: never mutates `history`."""

    name: ClassVar[str]
    params: BaseModel

    def build(self, history: History, budget: Budget) -> Context: ...


@runtime_checkable
class Model(Protocol):
    """A chat model with tool calling; raises the typed errors of ctxbench.harness.models.base."""

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Completion: ...
