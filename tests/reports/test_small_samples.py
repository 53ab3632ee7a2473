"""Verdicts at small sizes and on degenerate data: what the exact task-level tests support."""

import math

import numpy as np
import pandas as pd
import pytest

from ctxbench.reports import write_report
from ctxbench.reports.compare import compare_strategies, verdict_line
from ctxbench.reports.exact import sign_flip, smallest_p
from ctxbench.reports.planning import plan_rows, plan_sentence
from ctxbench.reports.stats import holm


def frame(build, grids):
    return pd.DataFrame([r.model_dump() for s, g in grids.items() for r in build.grid(s, g)])


def test_nearly_constant_differences_give_the_exact_p_not_a_t_test_of_zero_spread(build):
    """6 tasks, one discordant pair each in the candidate's favour, one run removed: the t test said
    p < 0.0001 with design effect 0; the sign-flip over 6 tasks, all positive, gives 2/64."""
    grids = {"baseline": [[False, True, True]] * 6, "lean": [[True, True, True]] * 6}
    runs = frame(build, grids)
    runs = runs[~((runs["task_id"] == "task-5") & (runs["repeat"] == 2))]
    (c,) = compare_strategies(runs, "baseline")
    assert c.completion.p_value == pytest.approx(2 / 64)
    assert c.completion.verdict == "better"
    low, high = c.completion.ci
    assert low <= c.completion.difference <= high and low > 0
    assert "p = 0.031 (task-level sign-flip" in verdict_line(c)


def test_five_tasks_all_at_plus_100_points_are_non_inferior_but_too_few_for_better(build):
    """Five tasks can give no two-sided p below 2/32, so "better" is out of reach. "Worse by 5 pts" is
    rejected: the population worse by 5 pts most likely to give five wins wins 47.5 % of its tasks and
    loses the rest, and gives five wins 0.475^5 = 0.024 of the time; the bounded-mean test's p is within
    5 % of that, and non-inferior is what five of five tasks support."""
    grids = {"baseline": [[False] * 3] * 5, "lean": [[True] * 3] * 5}
    (c,) = compare_strategies(frame(build, grids), "baseline")
    assert c.completion.p_value == pytest.approx(2 / 32)  # the smallest p five tasks can give
    assert c.completion.too_few_tasks and c.completion.ni_p == pytest.approx(0.475 ** 5, rel=0.05)
    assert c.completion.verdict == "non-inferior"
    low, high = c.completion.ci
    assert -0.05 < low and high == 1.0 and "90% CI" in verdict_line(c)
    four = {"baseline": [[False] * 3] * 4, "lean": [[True] * 3] * 4}
    (c4,) = compare_strategies(frame(build, four), "baseline")
    assert c4.completion.verdict == "too few tasks"
    six = {"baseline": [[False] * 3] * 6, "lean": [[True] * 3] * 6}
    (c6,) = compare_strategies(frame(build, six), "baseline")
    assert c6.completion.verdict == "better" and c6.completion.p_value == pytest.approx(2 / 64)


def test_tied_p_values_get_the_same_holm_level_in_any_order():
    for p in ([0.01, 0.01, 0.04], [0.04, 0.01, 0.01], [0.01, 0.04, 0.01]):
        adjusted, factors = holm(p)
        assert sorted(zip(p, factors)) == [(0.01, 3), (0.01, 3), (0.04, 1)]
        assert [a for q, a in sorted(zip(p, adjusted))] == pytest.approx([0.03, 0.03, 0.04])


def test_holm_verdicts_do_not_depend_on_the_order_of_the_strategies(build):
    grids = {"baseline": [[False] * 2] * 8, "a": [[True] * 2] * 8, "b": [[True] * 2] * 8,
             "c": [[False, True]] * 8}
    runs = frame(build, grids)
    one = {c.strategy: (c.completion.holm_factor, c.completion.verdict)
           for c in compare_strategies(runs, "baseline", ["baseline", "a", "b", "c"])}
    two = {c.strategy: (c.completion.holm_factor, c.completion.verdict)
           for c in compare_strategies(runs, "baseline", ["baseline", "c", "b", "a"])}
    assert one == two and one["a"] == one["b"] == (3, "better")


def test_a_one_repeat_pilot_says_the_split_is_not_identifiable(build):
    grids = {"baseline": [[True], [False], [True], [False]] * 3, "lean": [[False], [True], [True], [True]] * 3}
    runs = frame(build, grids)
    (row,) = plan_rows(runs, "baseline", 0.10)
    assert math.isnan(row.parts.within) and math.isnan(row.parts.between)
    assert not math.isnan(row.mdd) and row.tasks_needed is not None  # at one repeat the task variance is known
    assert row.repeats_needed is None
    assert "not identifiable from this pilot" in plan_sentence(row)


def test_a_one_task_pilot_says_the_between_task_variance_is_not_identifiable(build):
    grids = {"baseline": [[True, False, True, False]], "lean": [[True, True, False, True]]}
    (row,) = plan_rows(frame(build, grids), "baseline", 0.10)
    assert math.isnan(row.parts.between) and not math.isnan(row.parts.within)
    assert row.tasks_needed is None and row.repeats_needed is None
    assert "not identifiable from this pilot" in plan_sentence(row)


def test_an_arm_of_only_harness_errors_still_gets_a_report_naming_it(tmp_path, build):
    runs = build.grid("baseline", [[True, False]] * 3)
    runs += [build.run("broken", f"task-{t}", r, False, tokens=0, reason="harness_error")
             for t in range(3) for r in range(2)]
    folder = build.write_folder(tmp_path / "r", runs, build.manifest(["baseline", "broken"]))
    text = write_report(folder).markdown.read_text()
    assert "6 runs ended in `harness_error`" in text
    assert "`broken` has only `harness_error` runs" in text


def test_the_sign_flip_interval_is_the_set_the_test_does_not_reject():
    rng = np.random.default_rng(3)
    values = rng.normal(0.1, 0.3, 9)
    test = sign_flip(values)
    low, high = test.interval(0.95)
    assert low < values.mean() < high
    assert test.p_value(low + 1e-4) > 0.05 and test.p_value(low - 1e-3) <= 0.05
    assert test.p_value(high - 1e-4) > 0.05 and test.p_value(high + 1e-3) <= 0.05
    assert smallest_p(5) == 1 / 16 and math.isinf(sign_flip(values[:5]).interval(0.95)[0])


def test_the_smallest_p_of_many_tasks_is_the_sampled_tests_floor_not_an_overflow():
    """Planning asks about thousands of tasks (a difference the design could barely see): 2^T overflows a
    float past T = 1023, which once crashed the report after the runs were done."""
    from ctxbench.reports.exact import SAMPLED_PATTERNS
    from ctxbench.reports.power import enough_tasks

    assert smallest_p(5000) == smallest_p(5000, "greater") == 1 / (SAMPLED_PATTERNS + 1)
    assert enough_tasks(100_000, 0.05)
