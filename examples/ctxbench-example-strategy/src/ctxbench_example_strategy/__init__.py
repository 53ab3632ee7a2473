"""An example third-party strategy: the last N turns verbatim, older turns dropped whole."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ctxbench.harness.context import Budget, Context, ContextLedger
from ctxbench.harness.history import History, turn_messages
from ctxbench.strategies import StrategyServices

__all__ = ["SlidingWindow"]


class SlidingWindow:
    """The last `turns` turns verbatim; every older turn (call and results together) is dropped.

    Registered by its package's entry point (`sliding_window`), not by a decorator: the entry
    point's name is the strategy's name.
    """

    enforces_budget: ClassVar[bool] = False

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        turns: int = Field(6, ge=1, description="Most recent turns sent verbatim.")

    def __init__(self, params: Params, services: StrategyServices | None = None) -> None:
        self.params = params

    def build(self, history: History, budget: Budget) -> Context:
        ledger, count = ContextLedger(), budget.counter.count_message
        messages = [history.system_message(), history.task_message()]
        ledger.add("system", count(messages[0]))
        ledger.add("task", count(messages[1]))
        cut = max(0, len(history.turns) - self.params.turns)
        for turn in history.turns[:cut]:
            for call in turn.tool_calls:
                ledger.act("evicted", call.id, f"older than the last {self.params.turns} turns")
            if not turn.tool_calls:
                ledger.act("evicted", f"turn:{turn.index}", f"older than the last {self.params.turns} turns")
        for turn in history.turns[cut:]:
            kinds = {o.call_id: o.kind for o in turn.observations}
            for msg in turn_messages(turn):  # a file read is `files`, other tool output `tool_output`
                kind = kinds.get(msg.get("tool_call_id", ""))
                ledger.add("files" if kind == "file_read" else "tool_output" if kind else "history", count(msg))
                messages.append(msg)
        return Context(messages, ledger)
