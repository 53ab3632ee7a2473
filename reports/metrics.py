"""The records of a paired comparison, one per metric: completion, tokens, cost.

Each metric record holds its figures, its Holm correction, its interval, its p-value and its verdict,
decided in that record's `verdict` alone. `PairedComparison` is the pairing (who, how many pairs, who
was left out) with one record per metric.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal, TypeVar

import numpy as np

from ctxbench.reports.stats import ClusteredMean, sign_test

__all__ = ["ALPHA", "MARGIN", "SAME_RATIO", "Verdict", "CostVerdict", "Completion", "Ratio", "PairedComparison",
           "with_holm"]

ALPHA = 0.05
"""Family-wise significance level (Holm-corrected across the strategies compared with one reference)."""
MARGIN = 0.05
"""Default non-inferiority margin: 5 points of completion rate."""
SAME_RATIO = 0.10
"""A token or cost ratio whose whole interval lies within ×(1 ± 0.10) reads "same"."""

Verdict = Literal["better", "worse", "non-inferior", "inconclusive"]
CostVerdict = Literal["cheaper", "dearer", "same", "inconclusive"]


@dataclass(frozen=True)
class Completion:
    """Completion of the candidate against the reference: the mean pair difference (candidate −
    reference, resolved 1 / unresolved 0), its standard error clustered by task, its test and verdict."""

    rate_reference: float
    rate_candidate: float
    tasks_better: int
    """Tasks where the candidate's mean outcome is higher."""
    tasks_worse: int
    mean: ClusteredMean
    """Pair differences (candidate − reference), standard error clustered by task."""
    mdd: float
    """Smallest difference the task-level test detects with 80% power at alpha (NaN: no variance seen)."""
    margin: float = MARGIN
    """Non-inferiority margin, as a proportion."""
    alpha: float = ALPHA
    holm_factor: int = 1
    """Holm multiplier: the interval has confidence 1 − alpha / holm_factor."""
    holm_p: float = math.nan
    """Holm-adjusted p of the task-level test."""

    @property
    def difference(self) -> float:
        """rate_candidate − rate_reference over the pairs."""
        return self.mean.estimate

    @property
    def confidence(self) -> float:
        return 1 - self.alpha / self.holm_factor

    @property
    def ci(self) -> tuple[float, float]:
        """Task-clustered t interval at `confidence`, clipped to the possible range [−1, 1] (NaN when not
        estimable)."""
        low, high = self.mean.interval(self.confidence)
        return (low, high) if math.isnan(low) else (max(-1.0, low), min(1.0, high))

    @property
    def p_value(self) -> float:
        """Primary, unadjusted: task-clustered t test; the exact sign test over tasks when every task
        differs by the same amount (no spread to estimate a standard error from)."""
        if self.mean.estimable:
            return self.mean.p_value
        if self.tasks_better or self.tasks_worse:
            return sign_test(self.tasks_better, self.tasks_worse)
        return math.nan

    @property
    def design_effect(self) -> float:
        return self.mean.design_effect

    @property
    def verdict(self) -> Verdict:
        """better / worse when the Holm-adjusted test rejects (the interval then excludes 0);
        non-inferior when the interval's lower bound lies above −margin; inconclusive otherwise."""
        if not math.isnan(self.holm_p) and self.holm_p < self.alpha and self.difference != 0:
            return "better" if self.difference > 0 else "worse"
        low, _ = self.ci
        if not math.isnan(low) and low > -self.margin:
            return "non-inferior"
        return "inconclusive"


@dataclass(frozen=True)
class Ratio:
    """A ratio of means per run, candidate / reference (tokens or cost), with task-bootstrap draws,
    its test and verdict."""

    metric: Literal["tokens", "cost"]
    reference: float
    """Mean per run of the reference."""
    candidate: float
    ratio: float
    """NaN when the reference mean is zero."""
    tasks: int
    draws: np.ndarray = field(repr=False, compare=False)
    """Sorted bootstrap draws of the ratio (tasks resampled)."""
    alpha: float = ALPHA
    holm_factor: int = 1
    """Holm multiplier: the interval has confidence 1 − alpha / holm_factor."""
    holm_p: float = math.nan
    """Holm-adjusted bootstrap p of ratio = 1."""

    @property
    def estimable(self) -> bool:
        """At least two tasks (one task gives a bootstrap without spread that says nothing). With two or
        more, draws without spread mean every task had the same ratio: the interval is that ratio."""
        return self.tasks >= 2 and self.draws.size > 0

    @property
    def p_value(self) -> float:
        """Two-sided bootstrap p of ratio = 1, unadjusted (NaN when not estimable)."""
        if not self.estimable:
            return math.nan
        below = (np.count_nonzero(self.draws <= 1.0) + 1) / (self.draws.size + 1)
        above = (np.count_nonzero(self.draws >= 1.0) + 1) / (self.draws.size + 1)
        return min(1.0, 2 * min(below, above))

    @property
    def confidence(self) -> float:
        return 1 - self.alpha / self.holm_factor

    @property
    def ci(self) -> tuple[float, float]:
        """Percentile interval at `confidence`; (NaN, NaN) when not estimable."""
        if not self.estimable:
            return math.nan, math.nan
        tail = (1 - self.confidence) / 2 * 100
        low, high = np.percentile(self.draws, [tail, 100 - tail])
        return float(low), float(high)

    @property
    def verdict(self) -> CostVerdict:
        """cheaper / dearer when the Holm-adjusted bootstrap test rejects ratio 1; same when the whole
        interval lies within ×(1 ± SAME_RATIO); inconclusive otherwise."""
        if not math.isnan(self.holm_p) and self.holm_p < self.alpha:
            return "cheaper" if self.ratio < 1 else "dearer"
        low, high = self.ci
        if not math.isnan(low) and 1 - SAME_RATIO <= low and high <= 1 + SAME_RATIO:
            return "same"
        return "inconclusive"


Metric = TypeVar("Metric", Completion, Ratio)


def with_holm(metric: Metric, holm_p: float, holm_factor: int) -> Metric:
    """The metric with its Holm-adjusted p and multiplier set."""
    return replace(metric, holm_p=holm_p, holm_factor=holm_factor)


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
