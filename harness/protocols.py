"""The interfaces between ctxbench's parts."""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from pydantic import BaseModel

from ctxbench.harness.context import Budget, Context
from ctxbench.harness.history import History

__all__ = ["Strategy", "Model"]


@runtime_checkable
class Strategy(Protocol):
    """Builds the context for one request from the full history. Pure: never mutates `history`."""

    name: ClassVar[str]
    params: BaseModel

    def build(self, history: History, budget: Budget) -> Context: ...


class Model(Protocol):
    """A chat model with tool calling."""

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any: ...
