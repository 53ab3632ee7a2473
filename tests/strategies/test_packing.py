"""Design notes 000 (pack_snippets) and 004 (select_candidates): worked examples and invariants."""

from __future__ import annotations

import copy
import math

import pytest

from ctxbench.strategies.packing import (Candidate, LeftOut, ProtectedOverBudget, SelectionError, Snippet, pack_snippets,
                                select_candidates)


# --- 000: stable budgeted packing (cost = characters) ---------------------------------------------

def test_worked_example_skips_the_big_one_and_packs_the_rest() -> None:
    # budget 10; costs 12, 6, 4 with scores 9, 8, 7 => the 6 and the 4, used 10, truncated
    snippets = (Snippet("甲", "x" * 12, 9), Snippet("乙", "y" * 6, 8), Snippet("丙", "z" * 4, 7))
    result = pack_snippets(snippets, 10)
    assert [s.id for s in result.selected] == ["乙", "丙"]
    assert result.used == 10
    assert result.truncated is True
    assert result.left_out == (LeftOut("甲", "over_budget"),)


def test_large_high_score_snippet_does_not_end_the_scan() -> None:
    snippets = (Snippet("large", "过大的完整片段", 10), Snippet("small", "可用", 5))
    result = pack_snippets(snippets, 2)
    assert [s.id for s in result.selected] == ["small"]
    assert (result.used, result.truncated) == (2, True)


def test_ties_keep_input_order() -> None:
    a, b = Snippet("a", "12345", 8), Snippet("b", "abcde", 8)
    assert [s.id for s in pack_snippets((a, b), 5).selected] == ["a"]
    assert [s.id for s in pack_snippets((b, a), 5).selected] == ["b"]


def test_selection_is_ordered_by_score_not_input() -> None:
    snippets = (Snippet("low", "a", 1), Snippet("high", "b", 3), Snippet("mid", "c", 2))
    assert [s.id for s in pack_snippets(snippets, 10).selected] == ["high", "mid", "low"]


def test_budget_equal_to_the_cost_is_used_fully() -> None:
    result = pack_snippets((Snippet("a", "1234", 1),), 4)
    assert (len(result.selected), result.used, result.truncated) == (1, 4, False)


def test_zero_budget_selects_nothing() -> None:
    result = pack_snippets((Snippet("a", "x", 1),), 0)
    assert (result.selected, result.used, result.truncated) == ((), 0, True)
    empty = pack_snippets((), 0)
    assert (empty.selected, empty.used, empty.truncated) == ((), 0, False)


@pytest.mark.parametrize("budget", [-1, 1.5, 10.0, float("inf"), float("nan"), True, "10", None])
def test_invalid_budget_raises(budget: object) -> None:
    with pytest.raises(SelectionError, match="non-negative integer"):
        pack_snippets((Snippet("a", "x", 1),), budget)  # type: ignore[arg-type]
    with pytest.raises(SelectionError, match="non-negative integer"):
        select_candidates((Candidate("a", "x", "task"),), budget)  # type: ignore[arg-type]


def test_non_finite_score_raises() -> None:
    with pytest.raises(SelectionError, match="non-finite"):
        pack_snippets((Snippet("a", "x", math.nan),), 5)


def test_frozen_input_is_unchanged_and_results_repeat() -> None:
    snippets = (Snippet("c", "ccc", 1), Snippet("a", "aaaa", 3), Snippet("b", "bb", 3))
    before = copy.deepcopy(snippets)
    first = pack_snippets(snippets, 6)
    second = pack_snippets(snippets, 6)
    assert snippets == before
    assert first == second
    assert [s.id for s in first.selected] == ["a", "b"]


# --- 004: candidates with priority, freshness, dependencies, protection ----------------------------

def quarter_chars(candidate: Candidate) -> int:
    """The cost used for 004's example: ceil(characters / 4), which gives the note's used=29."""
    return math.ceil(len(candidate.content) / 4)


def incident_candidates() -> tuple[Candidate, ...]:
    return (
        Candidate("task", "当前任务：判断支付服务是否恢复", "task", priority=100, protected=True),
        Candidate("fresh", "最新监控：error rate 下降到 0.1%", "evidence", priority=90, freshness=10),
        Candidate("old", "两周前的事故：曾经出现类似超时", "memory", priority=20),
        Candidate("tool-call", "search_incident(query=payment)", "tool-call", priority=80,
                  dependencies=("tool-result",)),
        Candidate("tool-result", "证据 ref=INC-42，时间 2026-08-22", "tool-result", priority=80),
    )


def test_selection_order_when_everything_fits() -> None:
    result = select_candidates(incident_candidates(), 70, cost=quarter_chars)
    assert [c.item_id for c in result.selected] == ["task", "fresh", "tool-call", "tool-result", "old"]
    assert (result.used, result.remaining, result.left_out) == (29, 41, ())


def test_tool_pair_is_dropped_together_when_the_budget_is_cut() -> None:
    # task 4 + fresh 6 = 10; the pair costs 8 + 7 = 15 and does not fit in 20; old (4) still does
    result = select_candidates(incident_candidates(), 20, cost=quarter_chars)
    assert [c.item_id for c in result.selected] == ["task", "fresh", "old"]
    assert result.left_out == (LeftOut("tool-call", "over_budget"), LeftOut("tool-result", "over_budget"))
    assert result.used == 14


def test_a_dependency_pulls_its_group_even_when_ranked_from_the_other_side() -> None:
    candidates = (Candidate("result", "r" * 8, "tool-result", priority=90),
                  Candidate("call", "c" * 8, "tool-call", priority=10, dependencies=("result",)),
                  Candidate("mid", "m" * 4, "evidence", priority=50))
    result = select_candidates(candidates, 20)
    assert [c.item_id for c in result.selected] == ["result", "call", "mid"]
    cut = select_candidates(candidates, 10)
    assert [c.item_id for c in cut.selected] == ["mid"]
    assert {lo.id for lo in cut.left_out} == {"result", "call"}


def test_unknown_dependency_raises() -> None:
    without_result = tuple(c for c in incident_candidates() if c.item_id != "tool-result")
    with pytest.raises(SelectionError, match="unknown id 'tool-result'"):
        select_candidates(without_result, 70, cost=quarter_chars)


def test_duplicate_id_raises() -> None:
    with pytest.raises(SelectionError, match="duplicate item_id"):
        select_candidates((Candidate("a", "x", "k"), Candidate("a", "y", "k")), 10)


def test_protected_comes_first_and_is_never_dropped() -> None:
    candidates = (Candidate("hot", "h" * 5, "evidence", priority=99),
                  Candidate("pin", "p" * 5, "task", priority=0, protected=True))
    assert [c.item_id for c in select_candidates(candidates, 5).selected] == ["pin"]
    with pytest.raises(ProtectedOverBudget, match="pin"):
        select_candidates(candidates, 4)


def test_ties_are_broken_by_stable_id_whatever_the_input_order() -> None:
    a, b = Candidate("b-item", "x" * 5, "e", priority=5), Candidate("a-item", "y" * 5, "e", priority=5)
    assert [c.item_id for c in select_candidates((a, b), 5).selected] == ["a-item"]
    assert [c.item_id for c in select_candidates((b, a), 5).selected] == ["a-item"]


def test_freshness_breaks_equal_priority() -> None:
    older, newer = Candidate("a", "x", "e", priority=5, freshness=1), Candidate("b", "y", "e", priority=5, freshness=9)
    assert [c.item_id for c in select_candidates((older, newer), 1).selected] == ["b"]


def test_quota_and_duplicates_have_their_reasons() -> None:
    candidates = (Candidate("f1", "one", "snippet", 9, source_ref="f.py"),
                  Candidate("f2", "two", "snippet", 8, source_ref="f.py"),
                  Candidate("f3", "three", "snippet", 7, source_ref="f.py"),
                  Candidate("g1", "one", "snippet", 6, source_ref="g.py"),
                  Candidate("g2", "x" * 50, "snippet", 5, source_ref="g.py"))
    result = select_candidates(candidates, 20, per_source_quota=2)
    assert [c.item_id for c in result.selected] == ["f1", "f2"]
    assert result.left_out == (LeftOut("f3", "file_quota"), LeftOut("g1", "duplicate"), LeftOut("g2", "over_budget"))
    assert result.truncated


def test_candidates_input_is_unchanged() -> None:
    candidates = incident_candidates()
    before = copy.deepcopy(candidates)
    select_candidates(candidates, 20, cost=quarter_chars)
    assert candidates == before
