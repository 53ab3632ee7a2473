"""`budget_planner` (001, 003 §5.1): pinned items, recent turns protected, a fixed eviction order."""

from __future__ import annotations

import pytest

from ctxbench.harness.context import Budget, Context, ContextOverflow
from ctxbench.harness.history import History, turn_messages
from ctxbench.strategies import StrategyError, create_strategy
from ctxbench.strategies.budget_planner import task_phase
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


# -- 001's table and its three moments to re-allocate ------------------------------------------------

WINDOW_128K, INSTRUCTIONS, TOOLS = 128000, 5120, 12800  # 001 §1: instructions 4%, 15 tools 10% of the window


def test_001_takes_the_resident_layer_and_the_reply_reserve_first() -> None:
    planner = create_strategy("budget_planner", {"table": "001"})
    budget = Budget(WINDOW_128K, 8000, INSTRUCTIONS + TOOLS, COUNTER)
    explore = planner.plan(budget, "explore")
    assert explore == {"dynamic_budget": 84480, "key_files": 38016, "history": 16896, "tool_output": 21120,
                       "extra": 8448}
    assert round(1 - explore["dynamic_budget"] / WINDOW_128K, 2) == 0.34, "resident layer + reply reserve ≈ 1/3"
    edit = planner.plan(budget, "edit")
    assert (edit["key_files"], edit["tool_output"]) == (21120, 38016), "material leans to tool output once editing"
    for plan in (explore, edit):
        assert plan["key_files"] + plan["tool_output"] > plan["history"] + plan["extra"], "material is the largest"
    wide_reply = planner.plan(Budget(WINDOW_128K, 30000, INSTRUCTIONS + TOOLS, COUNTER))
    assert wide_reply["dynamic_budget"] == WINDOW_128K - 30000 - INSTRUCTIONS - TOOLS, "max_output_tokens if larger"


def test_001_fixes_its_own_shares() -> None:
    with pytest.raises(StrategyError, match="table '001' fixes high_water, key_files_share"):
        create_strategy("budget_planner", {"table": "001", "key_files_share": 0.3, "high_water": 0.9})
    assert create_strategy("budget_planner", {"table": "001", "keep_recent": 2}).params.keep_recent == 2


def test_more_tools_re_allocate_the_whole_table() -> None:
    planner = create_strategy("budget_planner", {"table": "001"})
    ten_more = TOOLS * 10 // 15  # 001 §5: ten more tools raise the resident tax
    plan = planner.plan(Budget(WINDOW_128K, 8000, INSTRUCTIONS + TOOLS + ten_more, COUNTER))
    assert plan == {"dynamic_budget": 75947, "key_files": 34176, "history": 15189, "tool_output": 18986, "extra": 7594}

    history, strategy = layered_history(), create_strategy("budget_planner", PARAMS)
    roomy, tight = make_budget(20000, 500, 100), make_budget(20000, 500, 2000)
    assert not [a for a in strategy.build(history, roomy).ledger.actions if a.kind != "injected"]
    retooled = strategy.build(history, tight)
    assert [a for a in retooled.ledger.actions if a.kind in ("trimmed", "evicted")], "the same run, more tools"
    assert retooled == create_strategy("budget_planner", PARAMS).build(history, tight), "nothing kept from before"


def reads_then(edit_applied: bool) -> History:
    reads = [make_turn(i, "", read_obs(f"r{i}", i, f"calc/util_{i}.py")) for i in range(6)]
    edit = obs("e6", "edit_file", "edit", "Edited calc/ops.py: replaced 1 occurrence", 6, path="calc/ops.py",
               is_error=not edit_applied)
    return History(SYSTEM, TASK, (*reads, make_turn(6, "Guard divide.", edit)))


def test_the_phase_switches_the_table_after_the_first_edit_that_applied() -> None:
    assert (task_phase(reads_then(False)), task_phase(reads_then(True))) == ("explore", "edit")
    params = {"table": "001", "keep_recent": 1}
    for window in range(20000, 3000, -250):
        budget = make_budget(window, 500, 100)
        exploring = create_strategy("budget_planner", params).build(reads_then(False), budget)
        editing = create_strategy("budget_planner", params).build(reads_then(True), budget)
        if [a for a in editing.ledger.actions if a.kind != "injected"]:
            break
    assert not [a for a in exploring.ledger.actions if a.kind != "injected"], "reads fit the exploring table"
    assert editing.ledger.components["files"] < exploring.ledger.components["files"]
    plan = create_strategy("budget_planner", params).plan(budget, "edit")
    assert exploring.ledger.components["files"] > plan["key_files"] >= editing.ledger.components["files"]


def test_past_the_high_water_mark_compression_starts_before_anything_is_evicted() -> None:
    history = layered_history()
    shares = {"key_files_share": 0.12, "history_share": 0.03, "tool_output_share": 0.85, "extra_share": 0.0}
    at_limit = {**PARAMS, **shares}
    for window in range(20000, 3000, -100):
        budget = make_budget(window, 500, 100)
        dynamic = create_strategy("budget_planner", at_limit).plan(budget)["dynamic_budget"]
        full = create_strategy("budget_planner", at_limit).build(history, budget)
        used = COUNTER.count_messages(full.messages[1:]) - 3
        if not [a for a in full.ledger.actions if a.kind != "injected"] and used > dynamic * 0.8:
            break
    assert not [a for a in full.ledger.actions if a.kind != "injected"], "within the budget and every cap"
    watermarked = create_strategy("budget_planner", {**at_limit, "high_water": 0.8}).build(history, budget)
    reduced = [a for a in watermarked.ledger.actions if a.kind != "injected"]
    assert reduced and {a.kind for a in reduced} == {"trimmed"}, "cut to head + tail, nothing evicted"
    assert COUNTER.count_messages(watermarked.messages[1:]) - 3 <= dynamic * 0.8 < used

    for window in range(window, 3000, -200):  # both stages at work: still nothing is cut twice
        try:
            ctx = create_strategy("budget_planner", {**at_limit, "high_water": 0.8}).build(history, make_budget(window, 500, 100))
        except ContextOverflow:
            break
        cuts = [a.target for a in ctx.ledger.actions if a.kind == "trimmed"]
        assert len(cuts) == len(set(cuts)), f"window {window}: {cuts}"
