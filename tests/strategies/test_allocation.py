"""Design note 003 §5.1: the budget allocation table."""

from __future__ import annotations

import pytest

from ctxbench.harness.context import Budget, ContextOverflow
from ctxbench.strategies import create_strategy
from ctxbench.strategies.allocation import plan_context_budget, portion

from history_builders import COUNTER

NOTE_003 = {"dynamic_budget": 85200, "key_files": 29820, "history": 21300, "tool_output": 25560, "extra": 8520}


def test_plan_reproduces_the_note() -> None:
    assert plan_context_budget(128000, 30000) == NOTE_003


def test_shares_are_exact_integers() -> None:
    assert portion(85200, 0.35) == 29820  # int(85200 * 0.35) would be 29819
    assert portion(85200, 0.30) == 25560


def test_output_reserve_is_taken_before_the_dynamic_budget() -> None:
    plan = plan_context_budget(128000, 30000, output_reserve=8000)
    assert plan["dynamic_budget"] == 85200 - 8000
    assert plan["history"] == (85200 - 8000) // 4


def test_fixed_part_that_does_not_fit_raises() -> None:
    with pytest.raises(ValueError, match="does not fit"):
        plan_context_budget(128000, 120000)
    assert plan_context_budget(128000, 115200)["dynamic_budget"] == 0


@pytest.mark.parametrize("args", [(-1, 0), (1000, -5), (1000.0, 0), (1000, 10.5)])
def test_bad_figures_raise(args: tuple) -> None:
    with pytest.raises(ValueError, match="non-negative integer"):
        plan_context_budget(*args)


def test_shares_over_one_raise() -> None:
    with pytest.raises(ValueError, match="sum above 1"):
        plan_context_budget(1000, 0, shares={"a": 0.6, "b": 0.5})


def test_budget_planner_uses_the_same_table() -> None:
    planner = create_strategy("budget_planner")
    assert planner.plan(Budget(128000, 0, 30000, COUNTER)) == NOTE_003
    with pytest.raises(ContextOverflow, match="does not fit"):
        planner.preflight(Budget(128000, 4000, 120000, COUNTER))
