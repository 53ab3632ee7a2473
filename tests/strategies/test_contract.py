"""The strategy contract, checked for every registered strategy (entry points included)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ctxbench.harness.context import Context, ContextOverflow
from ctxbench.harness.history import History
from ctxbench.harness.tokens import REPLY_PRIMING
from ctxbench.strategies import StrategyServices, available_strategies, create_strategy

from history_builders import (COUNTER, REPO, EchoSummaryModel, make_budget, make_turn, obs,
                              run_output, scripted_history, with_turns)

BUDGET = make_budget()


def _overflowing() -> History:
    history = scripted_history(8)
    last = make_turn(8, "Run the whole suite verbosely.",
                     obs("c8", "run_tests", "test_run", run_output(filler=6000), 8))
    return with_turns(history, [*history.turns, last])


CASES = {
    "growing": lambda: scripted_history(60),
    "huge_outputs": lambda: scripted_history(30, huge=40000),
    "errors": lambda: scripted_history(30, error_heavy=True),
    "many_files": lambda: scripted_history(40, files_per_turn=4),
    "last_turn_too_big": _overflowing,
}
"""`last_turn_too_big`: a strategy that enforces the budget may refuse with ContextOverflow."""

ARMS: list[tuple[str, dict[str, Any]]] = [(name, {}) for name in available_strategies()]
ARMS.append(("summarizer", {"mode": "model"}))


def _services() -> StrategyServices:
    return StrategyServices(model=EchoSummaryModel(), repo=REPO)


def _check_context(ctx: Context, history: History, enforces: bool) -> None:
    messages = ctx.messages
    assert messages[0] == history.system_message()
    assert messages[1] == history.task_message(), "the task statement comes right after the system prompt"
    expected: list[str] = []
    for msg in messages:
        if msg["role"] == "tool":
            assert expected, f"orphan tool message {msg['tool_call_id']}"
            assert msg["tool_call_id"] == expected.pop(0), "tool results answer the calls in order"
            continue
        assert not expected, f"tool calls left unanswered: {expected}"
        expected = [c["id"] for c in msg.get("tool_calls") or ()]
    assert not expected, f"tool calls left unanswered: {expected}"
    total = COUNTER.count_messages(messages)
    assert sum(ctx.ledger.components.values()) + REPLY_PRIMING == total, "the ledger accounts for every token"
    if enforces:
        assert total <= BUDGET.available + COUNTER.count_message(messages[0])


def _build_all(name: str, params: dict[str, Any], history: History) -> list[Context | None]:
    """Build at every prefix with one instance, like the runner; None where it raised ContextOverflow."""
    strategy = create_strategy(name, params, _services())
    if hasattr(strategy, "preflight"):
        strategy.preflight(BUDGET)
    out: list[Context | None] = []
    for n in range(len(history.turns) + 1):
        try:
            out.append(strategy.build(with_turns(history, list(history.turns[:n])), BUDGET))
        except ContextOverflow:
            out.append(None)
    return out


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize(("name", "params"), ARMS, ids=[f"{n}-{p.get('mode', 'default')}" for n, p in ARMS])
def test_strategy_contract(name: str, params: dict[str, Any], case: str) -> None:
    history = CASES[case]()
    before = copy.deepcopy(history)
    enforces = bool(getattr(available_strategies()[name], "enforces_budget", False))

    contexts = _build_all(name, params, history)

    assert history == before, "the history is never mutated"
    for n, ctx in enumerate(contexts):
        prefix = with_turns(history, list(history.turns[:n]))
        if ctx is None:
            assert enforces and case == "last_turn_too_big" and n == len(history.turns), \
                f"{name} raised ContextOverflow on {case} at {n} turns"
            continue
        _check_context(ctx, prefix, enforces)
    fresh = [create_strategy(name, params, _services()) for _ in range(2)]
    if contexts[-1] is None:
        for strategy in fresh:
            with pytest.raises(ContextOverflow):
                strategy.build(history, BUDGET)
        return
    first, second = (s.build(history, BUDGET) for s in fresh)
    assert first.messages == second.messages
    assert first.ledger.as_dict() == second.ledger.as_dict()
    assert first.messages == contexts[-1].messages, "an incremental instance agrees with a fresh one"


def test_every_strategy_documents_its_params() -> None:
    for name, cls in available_strategies().items():
        assert cls.__doc__, name
        for field, info in cls.Params.model_fields.items():
            assert info.description, f"{name}.{field} has no description"


def test_budget_promises_are_declared() -> None:
    registry = available_strategies()
    assert {"baseline", "budget_planner", "file_selector", "summarizer", "trimmer"} <= set(registry)
    assert [n for n in ("baseline", "budget_planner", "file_selector", "summarizer", "trimmer")
            if getattr(registry[n], "enforces_budget")] == ["budget_planner", "summarizer"]
