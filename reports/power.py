"""Power of the task-level test from the noncentral t distribution, at the level the verdicts use.

With m strategies compared with one reference, Holm's first step tests at α/m: a design planned at α
would claim power the verdicts do not have. The power of T tasks is P(|t'| > t(1 − α/(2m), T − 1))
for t' noncentral t with T − 1 degrees of freedom and noncentrality δ·√T / sd (exact, not the normal
approximation). Fewer tasks than the sign-flip test needs to reach α/m have no power at all.

The verdicts' test is the sign-flip test over tasks, which is discrete where per-task values are few or
tied (completion differences of 0/1 outcomes over a few repeats): at level α/m it can spend only its
attained size (`ctxbench.reports.exact.attained_level`), often well below α/m. Given that size, the
power is the noncentral-t power at it (`size=`): at α/m instead it would claim power the test does not
have.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist

import numpy as np

from typing import Callable

from ctxbench.reports.exact import smallest_p
from ctxbench.reports.tdist import t_ppf

__all__ = ["nct_sf", "power", "ncp_for_power", "mdd", "design_power", "enough_tasks", "VarianceParts",
           "variance_parts", "min_detectable_difference", "tasks_needed", "repeats_needed"]

Size = Callable[[int], float]
"""The size the test reaches at a level with a given number of tasks (the attained size of a discrete
test), or None for the level itself."""

_NORMAL_SF = np.vectorize(lambda x: 0.5 * math.erfc(x / math.sqrt(2)))


def _integral(y: np.ndarray, x: np.ndarray) -> float:
    return float(((y[1:] + y[:-1]) * np.diff(x)).sum() / 2)


def nct_sf(x: float, df: float, ncp: float) -> float:
    """P(T > x) for T noncentral t(df, ncp): E over V ~ χ²(df) of P(Z > x·√(V/df) − ncp), integrated on a
    log grid of V (error below 1e-8 for df ≥ 1)."""
    top = df + 60 * math.sqrt(2 * df) + 200
    w = np.linspace(math.log(1e-14), math.log(top), 6000)
    v = np.exp(w)
    log_density = (df / 2) * w - v / 2 - (df / 2) * math.log(2) - math.lgamma(df / 2)  # density of log V
    weights = np.exp(log_density)
    values = _NORMAL_SF(x * np.sqrt(v / df) - ncp) * weights
    return _integral(values, w) / _integral(weights, w)


def power(ncp: float, df: float, alpha: float) -> float:
    """Two-sided power of the t test at level `alpha` with noncentrality `ncp`."""
    c = t_ppf(1 - alpha / 2, df)
    return nct_sf(c, df, ncp) + (1 - nct_sf(-c, df, ncp))


@lru_cache(maxsize=4096)
def ncp_for_power(df: float, alpha: float, wanted: float) -> float:
    """The noncentrality at which the two-sided t test at `alpha` has power `wanted` (bisection)."""
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(wanted)
    low, high = 0.0, max(4 * z, 10.0)
    while power(high, df, alpha) < wanted:
        high *= 2
    for _ in range(50):
        mid = (low + high) / 2
        low, high = (mid, high) if power(mid, df, alpha) < wanted else (low, mid)
        if high - low < 1e-6:
            break
    return (low + high) / 2


def enough_tasks(tasks: int, alpha: float) -> bool:
    """The task-level randomization test with `tasks` tasks can reach a two-sided p below `alpha`."""
    return tasks >= 2 and smallest_p(tasks) < alpha


def mdd(sd: float, tasks: int, alpha: float, wanted: float, size: float | None = None) -> float:
    """Smallest true mean difference that T tasks with task-mean sd `sd` detect with power `wanted` at
    two-sided level `alpha` (by a test whose attained size there is `size`, default `alpha`); inf when
    the tasks are too few for any p below `alpha` or the test can reach none."""
    level = alpha if size is None else min(alpha, size)
    if not enough_tasks(tasks, alpha) or level <= 0:
        return math.inf
    return ncp_for_power(tasks - 1, level, wanted) * sd / math.sqrt(tasks)


def design_power(sd: float, difference: float, tasks: int, alpha: float, size: float | None = None) -> float:
    """Power of T tasks with task-mean sd `sd` to detect `difference` at two-sided `alpha` (attained size
    `size`, default `alpha`): 0 with too few tasks for any p below `alpha`."""
    level = alpha if size is None else min(alpha, size)
    if not enough_tasks(tasks, alpha) or level <= 0:
        return 0.0
    return power(difference * math.sqrt(tasks) / sd, tasks - 1, level)


@dataclass(frozen=True)
class VarianceParts:
    """Variance of the per-pair difference split into tasks and repeats (one-way random effects, ANOVA).

    A part the pilot cannot estimate is NaN ("not identifiable"), never 0: with one repeat per task the
    within-task variance, with one task the between-task variance."""

    between: float
    """Variance of the true per-task differences, sigma_b² (floored at 0); NaN with fewer than two tasks
    or without a task run twice."""
    within: float
    """Variance between repeats of one task, sigma_w² (pooled); NaN without a task run twice."""
    tasks: int
    repeats: float
    """Harmonic mean of the repeats per task."""
    task_means: float = math.nan
    """Sample variance of the per-task mean differences (NaN with one task)."""

    def task_mean_variance(self, repeats: float) -> float:
        """Variance of one task's mean difference over `repeats` repeats: sigma_b² + sigma_w² / repeats. At the
        pilot's own repeats it is known even when its two parts are not; NaN where it is not identifiable."""
        if math.isnan(self.within) and abs(repeats - self.repeats) < 1e-9:
            return self.task_means
        return self.between + self.within / repeats

    @property
    def icc(self) -> float:
        """Share of the variance that is between tasks (NaN when there is none or it is not identifiable)."""
        total = self.between + self.within
        return self.between / total if total > 0 else math.nan


def variance_parts(values: np.ndarray, clusters: np.ndarray) -> VarianceParts:
    """Estimate sigma_b² and sigma_w² from pair differences grouped by task.

    sigma_w² is the pooled within-task variance (tasks with one repeat add nothing to it); sigma_b² is
    the variance of the task means minus sigma_w² / r (r the harmonic mean of the repeats), floored at
    0. With equal repeats this is the ANOVA (and REML) estimator.
    """
    x = np.asarray(values, dtype=float)
    _, codes = np.unique(np.asarray(clusters), return_inverse=True)
    g = int(codes.max()) + 1
    sizes = np.bincount(codes, minlength=g).astype(float)
    means = np.bincount(codes, weights=x, minlength=g) / sizes
    resid = float(((x - means[codes]) ** 2).sum())
    dof = float((sizes - 1).sum())
    within = resid / dof if dof > 0 else math.nan
    r = float(g / (1.0 / sizes).sum())
    var_means = float(means.var(ddof=1)) if g > 1 else math.nan
    between = max(0.0, var_means - within / r) if g > 1 and dof > 0 else math.nan
    return VarianceParts(between, within, g, r, var_means)


def min_detectable_difference(parts: VarianceParts, tasks: int | None = None, repeats: float | None = None,
                              alpha: float = 0.05, power: float = 0.8, size: float | None = None) -> float:
    """Smallest true difference the task-level test detects with the given power at two-sided `alpha`
    (pass α / m for m strategies compared with one reference, the level of Holm's first step).

    The exact noncentral-t power of T tasks with r repeats each (default: the pilot's design), task-mean
    variance sigma_b² + sigma_w² / r, at the test's attained `size` where it is discrete (default
    `alpha`). A simulation in the tests checks that a difference of this size is detected with the
    stated power.

    Returns:
        The difference as a proportion (0.2 = 20 points); `inf` with too few tasks for any p below `alpha`;
        NaN when the pilot shows no variance at all or the variance needed is not identifiable from it.
    """
    tasks = parts.tasks if tasks is None else tasks
    repeats = parts.repeats if repeats is None else repeats
    var = parts.task_mean_variance(repeats)
    if not enough_tasks(tasks, alpha):
        return math.inf
    if math.isnan(var) or var <= 0:
        return math.nan
    return mdd(math.sqrt(var), tasks, alpha, power, size)


def tasks_needed(parts: VarianceParts, difference: float, repeats: float | None = None, alpha: float = 0.05,
                 power: float = 0.8, limit: int = 100_000, size: Size | None = None) -> int | None:
    """Fewest tasks (each run `repeats` times) whose MDD is at most `difference`, at the attained
    `size(tasks)` of a discrete test (default `alpha`); None beyond `limit` or when the variance at
    `repeats` is not identifiable from the pilot. With `size`, the fewest found by bisection over the
    tasks (a discrete test's power is saw-toothed in the tasks: a count a few below may also do)."""
    repeats = parts.repeats if repeats is None else repeats
    var = parts.task_mean_variance(repeats)
    if math.isnan(var) or var <= 0 or difference <= 0:
        return None
    sd = math.sqrt(var)
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    start = max(2, int((z * sd / difference) ** 2) - 2)
    if start > limit:
        return None
    if size is None:
        for t in range(start, limit + 1):
            if mdd(sd, t, alpha, power) <= difference:
                return t
        return None
    nominal = tasks_needed(parts, difference, repeats, alpha, power, limit)
    if nominal is None:
        return None

    def enough(t: int) -> bool:
        return design_power(sd, difference, t, alpha, size(t)) >= power

    low = nominal - 1  # a test at its attained size has no more power than at `alpha`
    step, high = 1, low + 1
    while high < limit and not enough(high):
        low, step = high, 2 * step
        high = min(limit, low + step)
    if not enough(high):
        return None
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


def repeats_needed(parts: VarianceParts, difference: float, tasks: int | None = None, alpha: float = 0.05,
                   power: float = 0.8, limit: int = 1000, size: float | None = None) -> int | None:
    """Fewest repeats per task, with `tasks` tasks, whose MDD is at most `difference`; None when no
    number of repeats up to `limit` is enough (the between-task variance alone is too large) or the
    pilot cannot tell the two parts apart. `size`: the test's attained size at `alpha`, as for the MDD."""
    tasks = parts.tasks if tasks is None else tasks
    if math.isnan(parts.between) or math.isnan(parts.within):
        return None
    if not enough_tasks(tasks, alpha) or math.isinf(min_detectable_difference(parts, tasks, limit, alpha, power, size)):
        return None
    if min_detectable_difference(parts, tasks, limit, alpha, power, size) > difference:
        return None
    for r in range(1, limit + 1):
        found = min_detectable_difference(parts, tasks, r, alpha, power, size)
        if not math.isnan(found) and found <= difference:
            return r
    return None
