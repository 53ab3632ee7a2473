"""`file_selector` (003 §5.4, 000, 004): ranked complete snippets in one message; old reads become notes."""

from __future__ import annotations

from collections import Counter

import pytest

from ctxbench.harness.context import ContextOverflow
from ctxbench.harness.history import History
from ctxbench.harness.markup.rendering import parse_excerpts
from ctxbench.harness.protocols import StaticRepo
from ctxbench.strategies import StrategyError, StrategyServices, create_strategy
from ctxbench.strategies.allocation import portion
from ctxbench.strategies.chunking import chunk_file

from history_builders import (OPS, REPO, SYSTEM, long_function, make_budget, make_turn, read_obs,
                              scripted_history, with_turns)

BUDGET = make_budget()


def selector(repo: StaticRepo = REPO, **params):
    return create_strategy("file_selector", params, StrategyServices(repo=repo))


def test_python_is_cut_at_definitions_and_long_ones_into_grouped_windows() -> None:
    chunks = chunk_file("calc/ops.py", OPS, 60)
    assert [(c.name, c.start, c.end) for c in chunks] == [("", 1, 5), ("add", 6, 7), ("divide", 10, 12),
                                                          ("multiply", 15, 19)]
    assert chunks[2].id == "calc/ops.py:10-12" and chunks[2].lines[-1] == "    return a / b"
    long = chunk_file("calc/report.py", long_function(90), 40)
    assert [(c.start, c.end) for c in long] == [(1, 40), (41, 80), (81, 94)]
    assert len({c.group for c in long}) == 1 and long[0].group
    assert [len(c.lines) for c in chunk_file("README.md", "x\n" * 100, 30)] == [30, 30, 30, 10]
    assert [c.start for c in chunk_file("bad.py", "def broken(:\n" * 70, 30)] == [1, 31, 61]


def history_ending_with_a_failure() -> History:
    """8 scripted turns (reads at 2 and 3, a failing run at 6), then a read of util_5 as the current turn."""
    history = scripted_history(8)
    return with_turns(history, [*history.turns, make_turn(8, "", read_obs("cur", 8, "calc/util_5.py", 1, 40))])


def test_selection_is_one_message_after_the_task_with_the_error_site_first() -> None:
    history = history_ending_with_a_failure()
    ctx = selector().build(history, BUDGET)
    selection = ctx.messages[2]
    assert selection["role"] == "user" and selection["content"].startswith("Code selected for this task")
    assert sum(1 for m in ctx.messages if m["role"] == "user") == 2
    excerpts = parse_excerpts(selection["content"])
    assert excerpts[0].path == "calc/ops.py" and excerpts[0].start <= 12 <= excerpts[0].end
    for ex in excerpts:
        assert list(ex.lines) == REPO.read(ex.path).splitlines()[ex.start - 1:ex.end], "complete, current lines"
    selected = [a for a in ctx.ledger.actions if a.kind == "selected"]
    assert selected[0].target == "calc/ops.py:10-12" and "protected: error site" in selected[0].reason
    assert [a.target for a in selected] == [f"{e.path}:{e.start}-{e.end}" for e in excerpts]
    assert max(Counter(e.path for e in excerpts).values()) <= 2, "per-file quota"
    assert ctx.ledger.components["files"] <= portion(BUDGET.available, 0.35) + sum(
        len(m["content"]) for m in ctx.messages if m.get("tool_call_id") == "cur"), "selection within its share"


def test_old_reads_become_notes_and_the_current_read_stays() -> None:
    history = history_ending_with_a_failure()
    ctx = selector().build(history, BUDGET)
    tools = {m["tool_call_id"]: m["content"] for m in ctx.messages if m["role"] == "tool"}
    assert len(tools) == sum(len(t.observations) for t in history.turns)
    assert tools["c20"].startswith("[read of calc/util_2.py lines 1-40 in turn 2: hidden")
    assert tools["c3r"].startswith("[read of calc/ops.py lines 1-19 in turn 3: hidden")
    assert tools["cur"] == history.turns[-1].observations[0].content
    assert {a.target for a in ctx.ledger.actions if a.kind == "evicted"} == {"c20", "c3r"}
    assert tools["c6a"] == history.turns[6].observations[0].content, "other tool output is untouched"


def test_left_out_snippets_have_reasons() -> None:
    repo = StaticRepo({**{p: REPO.read(p) for p in REPO.paths()}, "vendor/ops_copy.py": OPS})
    history = history_ending_with_a_failure()
    ctx = selector(repo, files_share=0.1, min_score_share=0.0).build(history, BUDGET)
    reasons = Counter(a.reason for a in ctx.ledger.actions if a.kind == "skipped")
    assert set(reasons) <= {"over_budget", "duplicate", "file_quota", "already_visible"}
    assert reasons["over_budget"] and reasons["file_quota"] and reasons["duplicate"] and reasons["already_visible"]
    visible = [a.target for a in ctx.ledger.actions if a.reason == "already_visible"]
    assert visible and all(t.startswith("calc/util_5.py:") for t in visible)
    assert "vendor/ops_copy.py:10-12" in [a.target for a in ctx.ledger.actions if a.reason == "duplicate"]


def test_windows_of_a_long_definition_are_taken_or_left_whole() -> None:
    history = History(SYSTEM, "long_report in calc/report.py builds the wrong rows for every row.", ())
    taken = selector(max_snippet_lines=40).build(history, BUDGET)
    paths = [(e.path, e.start) for e in parse_excerpts(taken.messages[2]["content"])]
    assert [s for p, s in paths if p == "calc/report.py"] == [1, 41, 81]
    left = selector(max_snippet_lines=40, files_share=0.05).build(history, BUDGET)
    skipped = {a.target: a.reason for a in left.ledger.actions if a.kind == "skipped"}
    assert {skipped.get(t) for t in ("calc/report.py:1-40", "calc/report.py:41-80", "calc/report.py:81-94")} == {"over_budget"}


def test_a_protected_snippet_that_does_not_fit_overflows() -> None:
    with pytest.raises(ContextOverflow, match="error-site snippet"):
        selector(files_share=0.001).build(history_ending_with_a_failure(), BUDGET)


def test_a_repository_view_is_required() -> None:
    with pytest.raises(StrategyError, match="repository view"):
        create_strategy("file_selector")


def test_weak_lexical_matches_are_not_candidates() -> None:
    history = history_ending_with_a_failure()
    focused = parse_excerpts(selector().build(history, BUDGET).messages[2]["content"])
    assert {(e.path, e.start) for e in focused} == {("calc/ops.py", 10), ("tests/test_ops.py", 8), ("tests/test_ops.py", 4)}
    everything = parse_excerpts(selector(min_score_share=0.0).build(history, BUDGET).messages[2]["content"])
    assert len(everything) > 10 and any(e.path.startswith("calc/util_") for e in everything)
