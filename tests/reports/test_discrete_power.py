"""Power and MDD of the task-level sign-flip test, which is discrete where per-task values are few or tied:
the size it reaches at α/m, and the power that size gives, against enumeration and simulation."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from ctxbench.reports.exact import attained_level, expected_size, sign_flip
from ctxbench.reports.planning import plan_rows
from ctxbench.reports.power import design_power, min_detectable_difference, tasks_needed
from ctxbench.reports.stats import mcnemar_exact


def enumerated_size(values: np.ndarray, level: float) -> float:
    """Share of the 2^T sign patterns of `values` whose own sign-flip p is at or below `level`."""
    hits = [sign_flip(np.array(s) * values).p_value(0.0) <= level + 1e-12
            for s in itertools.product((1.0, -1.0), repeat=values.size)]
    return float(np.mean(hits))


@pytest.mark.parametrize("values", [
    np.array([1.0, 1, 0, -1, 1, 0, 1, 1]),  # one repeat: ternary
    np.array([1 / 3, 2 / 3, 0, -1 / 3, 1, 2 / 3, 1 / 3, 0, 1]),  # three repeats
    np.array([0.5, 1.0, -0.5, 0.5, 0.5, 1.0, 0.0, 0.5, -1.0, 0.5]),  # two repeats
    np.array([0.31, -1.2, 0.77, 2.05, -0.4, 0.93, 1.4, -0.08]),  # off any lattice (log ratios)
])
@pytest.mark.parametrize("level", [0.01, 0.05, 0.1])
def test_attained_level_is_the_exact_size_of_the_sign_flip_test(values, level):
    assert attained_level(values, level) == pytest.approx(enumerated_size(values, level), abs=1e-12)


def test_attained_level_at_one_repeat_is_that_of_the_exact_sign_test():
    """Per-task differences in {−1, 0, 1}: the sign-flip test is the exact sign test on the tasks that
    differ, and its size at a level is that of the binomial's rejection region."""
    values = np.array([1.0] * 20 + [-1.0] * 15 + [0.0] * 25)
    n = 35
    size = sum(math.comb(n, k) for k in range(n + 1) if mcnemar_exact(k, n - k) <= 0.01) / 2 ** n
    assert attained_level(values, 0.01) == pytest.approx(size, rel=1e-9)
    assert 0 < size < 0.0075  # well below the level: what the power must count
    assert attained_level(np.zeros(10), 0.05) == 0.0


def test_continuous_values_reach_the_level():
    rng = np.random.default_rng(3)
    assert attained_level(rng.normal(size=30), 0.01) == pytest.approx(0.01, abs=2e-4)
    assert expected_size(rng.normal(size=30), 60, 0.05) == pytest.approx(0.05, abs=2e-4)


def test_stated_power_is_that_of_the_sign_flip_test_in_simulation():
    """60 tasks, one repeat, a true difference of 15 points (25 % of tasks better, 10 % worse), at
    0.05 / 5: the rejection rate of the exact test over 4,000 simulated experiments against the power
    each experiment's own plan states. At α/m itself the power would be overstated by 8 points."""
    rng = np.random.default_rng(12)
    tasks, better, worse, level, sims = 60, 0.25, 0.10, 0.01, 4000
    u = rng.random((sims, tasks))
    values = np.where(u < better, 1.0, np.where(u < better + worse, -1.0, 0.0))
    pos, neg = (values > 0).sum(axis=1), (values < 0).sum(axis=1)
    simulated = np.mean([mcnemar_exact(int(b), int(c)) <= level for b, c in zip(neg, pos)])
    difference = better - worse
    stated = [design_power(float(v.std(ddof=1)), difference, tasks, level, expected_size(v, tasks, level))
              for v in values[:300]]
    nominal = [design_power(float(v.std(ddof=1)), difference, tasks, level) for v in values[:300]]
    assert abs(np.mean(stated) - simulated) <= 0.03
    assert np.mean(nominal) - simulated > 0.05


def pilot(tasks: int, repeats: int, seed: int) -> pd.DataFrame:
    """Two arms of 0/1 outcomes with a task effect and a 10-point difference."""
    rng = np.random.default_rng(seed)
    base = rng.beta(0.7, 0.9, tasks)
    rows = []
    for strategy, shift in (("baseline", 0.0), ("lean", 0.10)):
        resolved = rng.random((tasks, repeats)) < np.clip(base + shift, 0, 1)[:, None]
        rows += [{"strategy": strategy, "task_id": f"t{t}", "repeat": r, "resolved": bool(resolved[t, r]),
                  "failure_reason": None if resolved[t, r] else "tests_failed"}
                 for t in range(tasks) for r in range(repeats)]
    return pd.DataFrame(rows)


def test_the_plan_counts_the_size_its_test_reaches():
    (row,) = plan_rows(pilot(40, 1, 4), "baseline", 0.10, family=5)
    assert 0 < row.size(row.tasks) < row.level
    nominal_mdd = min_detectable_difference(row.parts, alpha=row.level)
    assert row.mdd > nominal_mdd
    assert row.power_at(row.mdd) == pytest.approx(0.8, abs=1e-3)
    needed = row.tasks_needed
    nominal_needed = tasks_needed(row.parts, 0.10, 1, row.level)
    assert needed is not None and nominal_needed is not None and needed > nominal_needed
    sd = math.sqrt(row.parts.task_mean_variance(1))
    assert design_power(sd, 0.10, needed, row.level, row.size(needed)) >= 0.8
    assert design_power(sd, 0.10, needed - 1, row.level, row.size(needed - 1)) < 0.8
