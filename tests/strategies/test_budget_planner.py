"""`budget_planner` (001, 003 §5.1): pinned items, recent turns protected, a fixed eviction order."""

from __future__ import annotations

import pytest

from ctxbench.harness.context import Context, ContextOverflow
from ctxbench.harness.history import History, turn_messages
from ctxbench.strategies import create_strategy
from ctxbench.strategies.eviction import EVICTION_ORDER, EvictionItem, eviction_plan

from history_builders import (COUNTER, SYSTEM, TASK, make_budget, make_turn, obs, read_obs, run_output,
                              search_obs)

PARAMS = {"keep_recent": 2, "cut_chars": 600}


def layered_history() -> History:
    """One item per layer: 0-1 a finished subtask, 2-3 exploration, 4 a snapshot, 5-6 recent."""
    turns = [
        make_turn(0, "Plan: run the tests, fix divide, rerun.", obs("t0", "run_tests", "test_run", run_output(filler=120), 0)),
        make_turn(1, "Guard divide against b == 0.",
                  obs("e1", "edit_file", "edit", "Edited calc/ops.py: replaced 1 occurrence", 1, path="calc/ops.py")),
        make_turn(2, "", obs("t2", "run_tests", "test_run", run_output(filler=80), 2)),
        make_turn(3, "", search_obs("s3", 3, "helper")),
        make_turn(4, "", read_obs("r4", 4, "calc/util_3.py")),
        make_turn(5, "", read_obs("r5", 5, "calc/util_5.py", 1, 12)),
        make_turn(6, "", obs("l6", "list_files", "listing", "calc/ops.py\ncalc/util_5.py", 6)),
    ]
    return History(SYSTEM, TASK, tuple(turns))


def test_layers_are_defined_over_kinds_and_age() -> None:
    plan = eviction_plan(layered_history().turns, keep_recent=2, stale_after=8)
    assert plan == [EvictionItem("stale_tool_output", 0, "t0"),
                    EvictionItem("finished_subtask_history", 0), EvictionItem("finished_subtask_history", 1),
                    EvictionItem("early_exploration", 2), EvictionItem("early_exploration", 3),
                    EvictionItem("environment_snapshots", 4)]
    aged = eviction_plan(layered_history().turns, keep_recent=2, stale_after=3)
    assert [(i.turn, i.call_id) for i in aged if i.layer == "stale_tool_output"] == [(0, "t0"), (2, "t2"), (3, "s3")]


def layers_touched(ctx: Context) -> list[tuple[str, str]]:
    return [(a.reason.split(":")[0], a.kind) for a in ctx.ledger.actions if a.kind in ("trimmed", "evicted")]


def test_eviction_follows_the_order_and_cuts_before_dropping() -> None:
    history = layered_history()
    first_seen: dict[str, int] = {}
    overflowed_at = None
    for window in range(20000, 600, -100):
        try:
            ctx = create_strategy("budget_planner", PARAMS).build(history, make_budget(window, 500, 100))
        except ContextOverflow as exc:
            assert "never evicted" in str(exc)
            overflowed_at = window
            break
        touched = layers_touched(ctx)
        ranks = [EVICTION_ORDER.index(layer) for layer, _ in touched]
        assert ranks == sorted(ranks), f"out of order at window {window}: {touched}"
        for layer in EVICTION_ORDER:
            kinds = [kind for name, kind in touched if name == layer]
            assert kinds == sorted(kinds, key=lambda k: k == "evicted"), f"{layer}: cut before drop"
        for layer, _ in touched:
            first_seen.setdefault(layer, window)
        assert ctx.messages[-4:] == [m for t in history.turns[-2:] for m in turn_messages(t)], "recent turns verbatim"
    assert overflowed_at is not None
    assert list(first_seen) == list(EVICTION_ORDER), "layers are reached in order as the window shrinks"
    assert first_seen["stale_tool_output"] > first_seen["finished_subtask_history"] > first_seen["early_exploration"]


def test_first_reduction_cuts_the_big_stale_output_to_head_and_tail() -> None:
    history = layered_history()
    generous = create_strategy("budget_planner", PARAMS).build(history, make_budget(40000, 500, 100))
    assert layers_touched(generous) == []
    for window in range(20000, 600, -100):
        ctx = create_strategy("budget_planner", PARAMS).build(history, make_budget(window, 500, 100))
        if ctx.ledger.actions[1:]:
            break
    first = ctx.ledger.actions[1]
    assert (first.kind, first.target) == ("trimmed", "t0") and first.reason.startswith("stale_tool_output")
    t0 = next(m["content"] for m in ctx.messages if m.get("tool_call_id") == "t0")
    assert "characters omitted" in t0 and t0.endswith("[exit code 1]"), "the tail (the verdict) is kept"


def test_pinned_items_survive_every_eviction() -> None:
    history = layered_history()
    for window in range(20000, 600, -100):
        try:
            ctx = create_strategy("budget_planner", PARAMS).build(history, make_budget(window, 500, 100))
        except ContextOverflow:
            break
        last = ctx
    assert {a.target for a in last.ledger.actions if a.kind == "evicted"} >= {"turn:0", "turn:1", "turn:2", "turn:3"}
    assert last.messages[1] == history.task_message()
    pinned = last.messages[2]["content"]
    assert pinned.startswith("Pinned notes")
    assert "- Do not change the signature of divide." in pinned, "red-line constraint"
    assert "Current plan (turn 1) Guard divide against b == 0." in pinned
    assert "- calc/ops.py — named in the task statement; edited in turn 1: Edited calc/ops.py: replaced 1 occurrence" in pinned
    assert "- tests/test_ops.py — named in the task statement" in pinned
    assert last.ledger.components["pinned"] == COUNTER.count_message(last.messages[2])


def test_untouchable_part_over_budget_overflows() -> None:
    history = layered_history()
    huge = make_turn(7, "", obs("big", "run_tests", "test_run", run_output(filler=3000), 7))
    history = History(SYSTEM, TASK, history.turns + (huge,))
    with pytest.raises(ContextOverflow, match="the last 2 turns"):
        create_strategy("budget_planner", PARAMS).build(history, make_budget())


def test_caps_bound_each_component() -> None:
    history = layered_history()
    budget = make_budget(9000, 500, 100)
    strategy = create_strategy("budget_planner", PARAMS)
    ctx = strategy.build(history, budget)
    caps = strategy.plan(budget)
    assert ctx.ledger.components.get("tool_output", 0) <= caps["tool_output"]
    assert ctx.ledger.components.get("files", 0) <= caps["key_files"]
    assert ctx.ledger.components.get("history", 0) <= caps["history"]
