"""`baseline`: the history verbatim, appended turn after turn (the control arm)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from ctxbench.harness.context import Budget, Context
from ctxbench.harness.history import append_turn
from ctxbench.harness.records import ContextLedger, History
from ctxbench.strategies.registry import StrategyServices, register_strategy


@register_strategy("baseline")
class Baseline:
    """Sends every message of the history unchanged; no budget is enforced."""

    enforces_budget: ClassVar[bool] = False

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

    def __init__(self, params: Params, services: StrategyServices | None = None) -> None:
        self.params = params

    def build(self, history: History, budget: Budget) -> Context:
        ledger = ContextLedger()
        count = budget.counter.count_message
        messages = [history.system_message(), history.task_message()]
        ledger.add("system", count(messages[0]))
        ledger.add("task", count(messages[1]))
        for turn in history.turns:
            append_turn(messages, ledger, turn, count)
        return Context(messages, ledger)
