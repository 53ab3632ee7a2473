"""No verdict stronger than its data: non-inferiority and equivalence hold their level whatever the
per-task differences' distribution (ties and bounds included), and the token and cost verdicts answer
for the bill."""

import itertools
import math

import numpy as np
import pandas as pd
import pytest

from ctxbench.reports.compare import compare_strategies, verdict_line
from ctxbench.reports.exact import sign_flip
from ctxbench.reports.metrics import Completion
from ctxbench.reports.power import variance_parts
from ctxbench.reports.stats import clustered_mean


def frame(runs):
    return pd.DataFrame([r.model_dump() for r in runs])


def completion(per_task) -> Completion:
    """The completion record of one repeat per task with these differences (candidate − reference)."""
    x = np.asarray(per_task, dtype=float)
    tasks = np.arange(x.size)
    return Completion(rate_reference=float((x < 0).mean()), rate_candidate=float((x > 0).mean()),
                      tasks_better=int((x > 0).sum()), tasks_worse=int((x < 0).sum()), mean=clustered_mean(x, tasks),
                      test=sign_flip(x), parts=variance_parts(x, tasks))


@pytest.mark.parametrize("tasks", [5, 8, 24, 58])
def test_tied_tasks_cannot_rule_out_a_loss_the_size_of_the_margin(tasks):
    """T tasks, every one tied: a population where 5 % of the tasks are lost outright (−1) and the rest
    tied is worse by exactly the 5-pt margin and gives T ties 0.95^T of the time (more than 5 % up to 58
    tasks). A test that rejected "worse by 5 pts" here would reject it that often under the null."""
    m = completion(np.zeros(tasks))
    assert 0.95 ** tasks > 0.05
    assert m.ni_p > 0.05 and m.equivalence_p > 0.05
    low, high = m.bounds
    assert low < -0.05 and high > 0.05


def test_enough_tied_tasks_do_bound_the_difference():
    """From 59 tasks on 0.95^T < 5 %: 80 tied tasks put the difference within ±5 pts."""
    m = completion(np.zeros(80))
    assert m.ni_p < 0.05 and m.equivalence_p < 0.05


def _size(tasks: int, probabilities: dict[float, float], alpha: float = 0.05) -> float:
    """The exact chance that the non-inferiority test rejects "worse by the margin", over every sequence
    of per-task differences (one repeat: −1, 0 or 1) drawn from `probabilities`."""
    values = list(probabilities)
    total = 0.0
    for outcome in itertools.product(values, repeat=tasks):
        chance = math.prod(probabilities[v] for v in outcome)
        if completion(outcome).ni_p <= alpha:
            total += chance
    return total


@pytest.mark.parametrize("probabilities", [
    {-1.0: 0.05, 0.0: 0.95},                 # 95 % of tasks tied, the loss on the rest
    {-1.0: 0.525, 1.0: 0.475},               # no ties: the population most likely to give five wins
    {-1.0: 0.30, 0.0: 0.45, 1.0: 0.25},      # some of each
    {-1.0: 0.10, 0.0: 0.85, 1.0: 0.05},      # mostly tied, a few of each
])
def test_the_non_inferiority_test_holds_its_level_exactly_at_the_margin(probabilities):
    """Every population whose mean is exactly −5 pts: the test's rejection rate at 5 tasks, computed over
    all 3^5 outcomes, is within its 5 % (the sign-flip test shifted by the margin rejected five ties)."""
    assert sum(v * p for v, p in probabilities.items()) == pytest.approx(-0.05)
    assert _size(5, probabilities) <= 0.05


def test_a_bill_that_rises_is_not_called_cheaper_because_the_typical_task_is(build):
    """Eleven small tasks halved, one large task tripled: the typical task's ratio is ×0.58 (and the
    geometric-mean test calls it cheaper), the total is ×1.69. The verdict answers for the total: not
    cheaper."""
    runs = []
    for t in range(12):
        ref, cand = (10_000, 30_000) if t == 11 else (1_000, 500)
        runs += [build.run("baseline", f"task-{t:02d}", r, True, tokens=ref + r) for r in range(3)]
        runs += [build.run("lean", f"task-{t:02d}", r, True, tokens=cand + r) for r in range(3)]
    (c,) = compare_strategies(frame(runs), "baseline")
    assert c.tokens.verdict != "cheaper"
    assert c.tokens.ratio == pytest.approx((30_000 + 11 * 500 + 12) / (10_000 + 11 * 1_000 + 12), rel=1e-3)
    assert c.tokens.typical == pytest.approx(0.5 ** (11 / 12) * 3 ** (1 / 12), rel=1e-2)
    line = verdict_line(c)
    assert "in total tokens (total ×1.69 [" in line and "typical task ×0.58)" in line


def test_a_cheaper_bill_is_cheaper_with_an_interval_around_the_ratio_of_totals(build):
    runs = []
    for t in range(8):
        size = 1_000 * (t + 1)
        runs += [build.run("baseline", f"task-{t}", r, True, tokens=size + 10 * r) for r in range(3)]
        runs += [build.run("lean", f"task-{t}", r, True, tokens=int(size * (0.5 + 0.02 * t)) + r) for r in range(3)]
    (c,) = compare_strategies(frame(runs), "baseline")
    low, high = c.tokens.ci
    assert c.tokens.verdict == "cheaper" and low < c.tokens.ratio < high < 1
    assert c.tokens.p_value == pytest.approx(2 / 2 ** 8)


def test_an_arm_without_tokens_is_named_not_blamed_on_the_tasks(build):
    runs = [build.run("baseline", f"task-{t}", r, True, tokens=1000 + t) for t in range(8) for r in range(2)]
    runs += [build.run("lean", f"task-{t}", r, True, tokens=0) for t in range(8) for r in range(2)]
    (c,) = compare_strategies(frame(runs), "baseline")
    line = verdict_line(c)
    assert "fewer than two tasks" not in line
    assert "**cheaper** in total tokens (total ×0.00 [0.00, 0.00], 95% CI; `lean` recorded no tokens)" in line
    (back,) = compare_strategies(frame(runs), "lean")
    line = verdict_line(back)
    assert "fewer than two tasks" not in line
    assert "in total tokens (total n/a, interval not estimable: `lean` recorded no tokens;" in line


def test_plan_never_claims_to_detect_more_than_100_points(tmp_path, build):
    """Six tasks whose arms swap every outcome: the noncentral t puts the MDD at 177 pts, a difference no
    completion rate can have; the design detects nothing up to 100 pts, and says so."""
    from click.testing import CliRunner

    from ctxbench.harness.cli import cli

    runs = build.grid("baseline", [[True] * 3, [False] * 3] * 3) + build.grid("lean", [[False] * 3, [True] * 3] * 3)
    folder = build.write_folder(tmp_path / "pilot", runs, build.manifest(["baseline", "lean"]), transcripts=False)
    result = CliRunner().invoke(cli, ["plan", str(folder), "--difference", "5"])
    assert result.exit_code == 0, result.output
    assert "(6 tasks × 3 repeats) cannot detect any difference up to 100 pts with 80% power" in result.output
    assert " pts with 80% power" in result.output and "detects 1" not in result.output
