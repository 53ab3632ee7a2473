"""The records of a paired comparison, one per metric: completion, tokens, cost.

Each metric record holds its figures, its Holm correction, its interval, its p-value and its verdict,
all from the per-task values (the task is the unit of inference),
decided in that record's `verdict` alone. Each verdict rests on one test and prints that test's interval:
better / worse on the sign-flip test of "the candidate changes nothing" (exact), non-inferior and
equivalent on the bounded-mean test of the difference (valid whatever the per-task differences'
distribution within [−1, 1], ties included), cheaper / dearer on the sign-flip test of the ratio of
totals (the bill). `PairedComparison` is the pairing (who, how many pairs, who
was left out) with one record per metric.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Final, Literal, TypeVar

import numpy as np

from ctxbench.reports.bounded import BoundedMean, bounded_mean
from ctxbench.reports.exact import RatioSignFlip, SignFlip, expected_size, smallest_p
from ctxbench.reports.power import mdd as power_mdd
from ctxbench.reports.stats import ClusteredMean, VarianceParts

__all__ = ["ALPHA", "MARGIN", "SAME_RATIO", "NOTHING_MEASURED", "Verdict", "CostVerdict", "Completion", "Ratio",
           "PairedComparison", "with_holm"]

ALPHA = 0.05
"""Family-wise significance level (Holm-corrected across the strategies compared with one reference)."""
MARGIN = 0.05
"""Default non-inferiority margin: 5 points of completion rate."""
SAME_RATIO = 0.10
"""A token or cost ratio whose whole interval lies within ×(1 ± 0.10) reads "same"."""

NOTHING_MEASURED: Final = "no tool calls: nothing measured"
"""The verdict of a comparison with an arm in which no run called a tool: its runs measured no strategy."""

Verdict = Literal["better", "worse", "equivalent", "non-inferior", "too few tasks", "inconclusive",
                  "no tool calls: nothing measured"]
CostVerdict = Literal["cheaper", "dearer", "same", "too few tasks", "inconclusive", "no tool calls: nothing measured"]


def _too_few(tasks: int, family: int, alpha: float) -> bool:
    """No sign pattern of `tasks` tasks can give a two-sided p that passes Holm's first step, α / family."""
    return smallest_p(tasks) * family >= alpha


@dataclass(frozen=True)
class Completion:
    """Completion of the candidate against the reference: per-task mean differences (candidate −
    reference, resolved 1 / unresolved 0), their sign-flip randomization test and test-inverted
    interval, and the verdict.

    The estimand is the mean difference over the population of tasks like these (each task weighs the
    same), so the task is the unit: the test flips the sign of whole tasks."""

    rate_reference: float
    rate_candidate: float
    tasks_better: int
    """Tasks where the candidate's mean outcome is higher."""
    tasks_worse: int
    mean: ClusteredMean
    """Pair differences (candidate − reference), standard error clustered by task (descriptive: the
    design effect and the MDD come from it)."""
    test: SignFlip = field(repr=False, compare=False)
    """Sign-flip distribution of the per-task mean differences."""
    parts: VarianceParts = field(repr=False, compare=False)
    """The paired difference's variance between tasks and between repeats (for the MDD)."""
    margin: float = MARGIN
    """Non-inferiority (and equivalence) margin, as a proportion."""
    alpha: float = ALPHA
    holm_factor: int = 1
    """Holm multiplier of the difference test: the interval has confidence 1 − alpha / holm_factor."""
    holm_p: float = math.nan
    """Holm-adjusted p of the task-level test of no difference."""
    family: int = 1
    """Strategies in the Holm family (compared with the same reference)."""
    ni_holm_factor: int = 1
    """Holm multiplier of the non-inferiority test, in its own family."""
    ni_holm_p: float = math.nan
    """Holm-adjusted one-sided p of "the candidate is worse by the margin or more"."""
    unmeasured: bool = False
    """An arm of the pair in which no run called a tool: nothing was measured (`NOTHING_MEASURED`)."""

    @property
    def difference(self) -> float:
        """Mean over tasks of the per-task mean difference (= the pair mean when every task has as many
        pairs)."""
        return self.test.estimate

    @property
    def confidence(self) -> float:
        return 1 - self.alpha / self.holm_factor

    @property
    def too_few_tasks(self) -> bool:
        """The tasks are too few for any p below α / family: no better or worse can be decided."""
        return _too_few(self.mean.tasks, self.family, self.alpha)

    @property
    def difference_ci(self) -> tuple[float, float]:
        """The interval of the better / worse verdict: the test-inverted sign-flip interval at `confidence`,
        joined with the task-clustered t interval where that is estimable, clipped to [−1, 1]; NaN when
        every task differs by the same amount or the tasks are too few for an interval at this level."""
        low, high = self.test.interval(self.confidence)
        if math.isnan(low) or math.isinf(low) or math.isinf(high):
            return math.nan, math.nan
        if self.mean.estimable:
            t_low, t_high = self.mean.interval(self.confidence)
            low, high = min(low, t_low), max(high, t_high)
        return max(-1.0, low), min(1.0, high)

    @cached_property
    def bounded(self) -> BoundedMean:
        """The bounded-mean (betting) test of the per-task differences: non-inferiority and equivalence."""
        return bounded_mean(self.test.values, self.alpha)

    @property
    def bounds_confidence(self) -> float:
        """The confidence of `bounds`: each bound one-sided at α / (its Holm multiplier), so 1 − 2α/k."""
        return 1 - 2 * self.alpha / self.ni_holm_factor

    @property
    def bounds(self) -> tuple[float, float]:
        """The interval of the non-inferior / equivalent verdicts: the lower bound rejects "worse by more",
        the upper "better by more", each at the level of the non-inferiority test (α / its Holm
        multiplier), whatever the per-task differences' distribution within [−1, 1]."""
        return self.bounded.interval(self.alpha / self.ni_holm_factor)

    @property
    def decided_by_difference(self) -> bool:
        """The verdict is better or worse: it rests on the sign-flip test and its interval."""
        return self.verdict in ("better", "worse")

    @property
    def ci(self) -> tuple[float, float]:
        """The interval the verdict rests on: `difference_ci` for better / worse, else `bounds` (which
        every verdict short of better or worse is read from)."""
        return self.difference_ci if self.decided_by_difference else self.bounds

    @property
    def ci_confidence(self) -> float:
        """The confidence of `ci`."""
        return self.confidence if self.decided_by_difference else self.bounds_confidence

    @property
    def p_value(self) -> float:
        """Primary, unadjusted: the two-sided sign-flip p over tasks (exact); NaN when no task differs."""
        if not (self.tasks_better or self.tasks_worse):
            return math.nan
        return self.test.p_value(0.0)

    @property
    def ni_p(self) -> float:
        """Unadjusted one-sided p of "worse by the margin or more" (the non-inferiority test): the
        bounded-mean test's (ctxbench.reports.bounded)."""
        return self.bounded.p_value(-self.margin, "greater")

    @property
    def equivalence_p(self) -> float:
        """Unadjusted one-sided p of "better by the margin or more" (the other half of equivalence)."""
        return self.bounded.p_value(self.margin, "less")

    @property
    def mdd(self) -> float:
        """Smallest difference the task-level test detects with 80% power at α / family, counting only the
        size the sign-flip test is expected to reach there with per-task differences like these (as the
        plan does; NaN: the pilot shows no variance, inf: too few tasks)."""
        var = self.parts.task_mean_variance(self.parts.repeats)
        if math.isnan(var) or var <= 0:
            return math.inf if self.mean.tasks < 2 else math.nan
        level = self.alpha / self.family
        size = expected_size(self.test.values, self.mean.tasks, level)
        return power_mdd(math.sqrt(var), self.mean.tasks, level, 0.8, size)

    @property
    def design_effect(self) -> float:
        return self.mean.design_effect

    @property
    def verdict(self) -> Verdict:
        """better / worse when the Holm-adjusted test of no difference rejects; equivalent when the
        Holm-adjusted non-inferiority test rejects and so does the test of "better by the margin" at the
        same level; non-inferior when only the first does; too few tasks when no p could pass α / family;
        inconclusive otherwise; `NOTHING_MEASURED` before all, for an arm that called no tool."""
        if self.unmeasured:
            return NOTHING_MEASURED
        if not math.isnan(self.holm_p) and self.holm_p < self.alpha and self.difference != 0:
            return "better" if self.difference > 0 else "worse"
        if not math.isnan(self.ni_holm_p) and self.ni_holm_p < self.alpha:
            if self.equivalence_p * self.ni_holm_factor < self.alpha:
                return "equivalent"
            return "non-inferior"
        return "too few tasks" if self.too_few_tasks else "inconclusive"


@dataclass(frozen=True)
class Ratio:
    """Tokens or cost, candidate / reference: the ratio of the totals over the paired runs (the bill),
    with the sign-flip test of each task's totals and its test-inverted interval, and the verdict; the
    typical task's ratio (the geometric mean of the per-task ratios) beside it.

    The estimand is Σ candidate / Σ reference over the population of tasks like these: what the bill of
    a run of such tasks becomes. A strategy that halves most small tasks and doubles a large one is
    cheaper on the typical task and dearer in total; the verdict answers for the total."""

    metric: Literal["tokens", "cost"]
    reference: float
    """Mean per run of the reference."""
    candidate: float
    tasks: int
    test: RatioSignFlip = field(repr=False, compare=False)
    """Sign-flip distribution of the per-task totals over the paired runs."""
    alpha: float = ALPHA
    holm_factor: int = 1
    """Holm multiplier: the interval has confidence 1 − alpha / holm_factor."""
    holm_p: float = math.nan
    """Holm-adjusted sign-flip p of ratio = 1."""
    family: int = 1
    """Strategies in the Holm family."""
    unmeasured: bool = False
    """An arm of the pair in which no run called a tool: nothing was measured (`NOTHING_MEASURED`)."""

    @property
    def ratio(self) -> float:
        """Σ candidate / Σ reference over the paired runs; NaN when the reference spent nothing."""
        return self.test.ratio

    @property
    def typical(self) -> float:
        """The typical task's ratio: exp(mean per-task log ratio) over the tasks where both arms spent
        something (NaN where none did)."""
        spent = (self.test.reference > 0) & (self.test.candidate > 0)
        if not spent.any():
            return math.nan
        return float(np.exp(np.mean(np.log(self.test.candidate[spent] / self.test.reference[spent]))))

    @property
    def reference_spent(self) -> bool:
        """The reference's runs spent something (a ratio to it exists)."""
        return bool(self.test.reference.sum() > 0)

    @property
    def candidate_spent(self) -> bool:
        return bool(self.test.candidate.sum() > 0)

    @property
    def estimable(self) -> bool:
        """At least two tasks, and a reference that spent something."""
        return self.test.tasks >= 2 and self.reference_spent

    @property
    def too_few_tasks(self) -> bool:
        return _too_few(self.test.tasks, self.family, self.alpha)

    @property
    def p_value(self) -> float:
        """Two-sided sign-flip p of ratio = 1, unadjusted (NaN when not estimable or every task's totals
        are equal)."""
        if not self.estimable or np.allclose(self.test.candidate, self.test.reference, rtol=1e-12, atol=0.0):
            return math.nan
        return self.test.p_value(1.0)

    @property
    def confidence(self) -> float:
        return 1 - self.alpha / self.holm_factor

    @property
    def ci(self) -> tuple[float, float]:
        """Test-inverted interval at `confidence` (its upper end inf when the tasks reject no ratio above);
        (NaN, NaN) when not estimable or too few tasks for this level."""
        if not self.estimable:
            return math.nan, math.nan
        return self.test.interval(self.confidence)

    @property
    def verdict(self) -> CostVerdict:
        """cheaper / dearer when the Holm-adjusted test rejects a ratio of totals of 1; same when the whole
        interval lies within ×(1 ± SAME_RATIO); too few tasks when no p could pass α / family;
        inconclusive otherwise; `NOTHING_MEASURED` before all, for an arm that called no tool."""
        if self.unmeasured:
            return NOTHING_MEASURED
        if not math.isnan(self.holm_p) and self.holm_p < self.alpha:
            return "cheaper" if self.ratio < 1 else "dearer"
        low, high = self.ci
        if not math.isnan(low) and 1 - SAME_RATIO <= low and high <= 1 + SAME_RATIO:
            return "same"
        return "too few tasks" if self.too_few_tasks else "inconclusive"


Metric = TypeVar("Metric", Completion, Ratio)


def with_holm(metric: Metric, holm_p: float, holm_factor: int, family: int = 1) -> Metric:
    """The metric with its Holm-adjusted p, multiplier and family size set."""
    return replace(metric, holm_p=holm_p, holm_factor=holm_factor, family=family)


@dataclass(frozen=True)
class PairedComparison:
    """A candidate against a reference on the (task, repeat) pairs both ran, one record per metric."""

    strategy: str
    """The candidate being judged."""
    reference: str
    """What it is judged against (a strategy, or the same strategy in another folder)."""
    pairs: int
    tasks: int
    """Tasks with at least one pair: the independent units."""
    both: int
    only_reference: int
    """Discordant pairs where only the reference resolved the task (b)."""
    only_candidate: int
    """Discordant pairs where only the candidate resolved the task (c)."""
    neither: int
    mcnemar_p: float
    """Secondary: exact McNemar p on the (task, repeat) pairs, as if repeats were independent."""
    completion: Completion
    tokens: Ratio
    cost: Ratio | None
    """Cost in USD, when the runs record it."""
    excluded: tuple[str, ...] = ()
    """harness_error runs left out of the comparison (`strategy task#repeat`)."""
    unpaired: tuple[str, ...] = ()
    """Runs without a partner in the other arm (`strategy task#repeat`)."""
    seed_mismatches: int = 0
    """Pairs whose two runs had different seeds (possible between folders)."""
