"""The strategy contract (ctxbench.strategies.testing.check_strategy), for every registered strategy, and
proof that the shipped check catches each kind of breach."""

from __future__ import annotations

import random
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict, Field

from ctxbench.harness.context import Component, Context, ContextLedger
from ctxbench.harness.history import NO_TOOL_CALL, History, turn_messages
from ctxbench.strategies import available_strategies
from ctxbench.strategies.testing import StrategyContractError, check_strategy

ARMS: list[tuple[str, dict[str, Any]]] = [(name, {}) for name in available_strategies()]
ARMS += [("summarizer", {"mode": "model"}), ("budget_planner", {"table": "001", "keep_recent": 2})]


@pytest.mark.parametrize(("name", "params"), ARMS, ids=[f"{n}-{p.get('mode', p.get('table', 'default'))}" for n, p in ARMS])
def test_strategy_contract(name: str, params: dict[str, Any]) -> None:
    checked = check_strategy(available_strategies()[name], params)
    assert checked >= 170, "every prefix of every case is built and checked"


def test_budget_promises_are_declared() -> None:
    registry = available_strategies()
    builtins = ("baseline", "budget_planner", "file_selector", "observation_masking", "summarizer", "trimmer")
    assert set(builtins) <= set(registry)
    assert [n for n in builtins if getattr(registry[n], "enforces_budget")] == ["budget_planner", "summarizer"]


class _Verbatim:
    """Sends the history verbatim (a correct strategy the broken ones below derive from)."""

    enforces_budget: ClassVar[bool] = False

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)
        drop: int = Field(0, description="Test knob.")

    def __init__(self, params: Params, services: Any = None) -> None:
        self.params = params

    def messages(self, history: History) -> list[dict[str, Any]]:
        return [history.system_message(), history.task_message(),
                *[m for t in history.turns for m in turn_messages(t)]]

    def build(self, history: History, budget: Any) -> Context:
        messages = self.messages(history)
        ledger = ContextLedger()
        kinds = {o.call_id: o.kind for t in history.turns for o in t.observations}
        ledger.add("system", budget.counter.count_message(messages[0]))
        ledger.add("task", budget.counter.count_message(messages[1]))
        for msg in messages[2:]:
            kind = kinds.get(msg.get("tool_call_id", ""))
            component: Component = "files" if kind == "file_read" else "tool_output" if kind else "history"
            ledger.add(component, budget.counter.count_message(msg))
        return Context(messages, ledger)


class _DropsResults(_Verbatim):
    """Drops every tool result older than the last turn, keeping the calls."""

    def messages(self, history: History) -> list[dict[str, Any]]:
        out = super().messages(history)
        last = {o.call_id for t in history.turns[-1:] for o in t.observations}
        return [m for m in out if m["role"] != "tool" or m["tool_call_id"] in last]


class _EndsWithAReply(_Verbatim):
    """Rebuilds a reply without a tool call as the assistant message alone: the context can end with it,
    or hold two replies in a row, which a chat server refuses."""

    def messages(self, history: History) -> list[dict[str, Any]]:
        return [m for m in super().messages(history) if m.get("content") != NO_TOOL_CALL]


class _Unaccounted(_Verbatim):
    """Its ledger misses the tool output."""

    def build(self, history: History, budget: Any) -> Context:
        ctx = super().build(history, budget)
        ctx.ledger.components.pop("tool_output", None)
        return ctx


class _ReadsAsToolOutput(_Verbatim):
    """Files the results of file reads under `tool_output`: the sums hold, the components do not."""

    def build(self, history: History, budget: Any) -> Context:
        ctx = super().build(history, budget)
        components = ctx.ledger.components
        components["tool_output"] = components.get("tool_output", 0) + components.pop("files", 0)
        return ctx


class _Random(_Verbatim):
    """Shuffles nothing but says a random number: not deterministic."""

    def messages(self, history: History) -> list[dict[str, Any]]:
        out = super().messages(history)
        return [*out[:2], {"role": "user", "content": str(random.random())}, *out[2:]] if history.turns else out


class _Overflows(_Verbatim):
    """Claims to enforce the budget but sends everything."""

    enforces_budget: ClassVar[bool] = True


class _Mutates(_Verbatim):
    """Appends to the task statement in place."""

    def build(self, history: History, budget: Any) -> Context:
        object.__setattr__(history, "task_statement", history.task_statement + "!")
        return super().build(history, budget)


class _LooseParams(_Verbatim):
    """Ignores unknown parameters."""

    class Params(BaseModel):
        pass


@pytest.mark.parametrize(("cls", "rule"), [
    (_DropsResults, "unanswered"),
    (_EndsWithAReply, "a conversation a chat server accepts"),
    (_Unaccounted, "the ledger accounts for every token"),
    (_ReadsAsToolOutput, "the ledger files 0 tokens under 'files'"),
    (_Random, "two fresh instances"),
    (_Overflows, "over budget.available"),
    (_Mutates, "never mutated"),
    (_LooseParams, "forbid unknown keys"),
])
def test_the_shipped_check_catches_each_breach(cls: type, rule: str) -> None:
    with pytest.raises(StrategyContractError, match=rule):
        check_strategy(cls)


def test_the_check_passes_a_correct_unregistered_strategy() -> None:
    assert check_strategy(_Verbatim) >= 170
