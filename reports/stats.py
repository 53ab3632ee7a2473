"""The statistics the reports rely on, each a small pure function (no pandas, no scipy).

The task is the unit of independence: repeats of one task are correlated, so the primary test of a
paired difference is a t test on the pair differences with standard errors clustered by task (which,
with every task run the same number of times, is the paired t test on per-task means), and power is
planned from the between-task and within-task variance of those differences.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = ["wilson_interval", "mcnemar_exact", "pass_at_k", "pass_hat_k", "bootstrap_ci", "t_cdf", "t_ppf",
           "ClusteredMean", "clustered_mean", "sign_test", "holm", "cluster_bootstrap_ratio", "VarianceParts",
           "variance_parts", "min_detectable_difference", "tasks_needed", "repeats_needed"]


def _z(two_sided_alpha: float) -> float:
    return NormalDist().inv_cdf(1 - two_sided_alpha / 2)


def wilson_interval(successes: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion.

    Args:
        successes: Number of successes.
        n: Number of trials (> 0).
        confidence: Two-sided confidence level.

    Returns:
        (low, high); e.g. 8 of 10 gives (0.4902, 0.9433). The bounds are exact at the edges (0 of n
        gives low = 0.0, n of n gives high = 1.0) and always enclose successes / n, so rounding can
        never put the observed rate outside its own interval.

    Raises:
        ValueError: n is not positive or successes is outside 0..n.
    """
    if n <= 0 or not 0 <= successes <= n:
        raise ValueError(f"wilson_interval: need 0 <= successes <= n and n > 0, got {successes}/{n}")
    z = _z(1 - confidence)
    p = successes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    if successes == 0:
        return 0.0, min(1.0, center + half)
    if successes == n:
        return max(0.0, center - half), 1.0
    return max(0.0, min(p, center - half)), min(1.0, max(p, center + half))


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar test: a binomial(b + c, 1/2) test on the discordant pairs.

    Args:
        b: Pairs where only the reference succeeded.
        c: Pairs where only the candidate succeeded.

    Returns:
        The p-value `min(1, 2 * P[X <= min(b, c)])`, X ~ Binomial(b + c, 1/2); 1.0 without discordant
        pairs. b=1, c=8 gives 0.0390625.
    """
    if b < 0 or c < 0:
        raise ValueError(f"mcnemar_exact: counts must be >= 0, got b={b}, c={c}")
    n = b + c
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


def _check_nck(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k for one task (Chen et al. 2021): `1 - C(n-c, k) / C(n, k)`.

    The chance that at least one of k repeats drawn without replacement from the n observed ones
    succeeded, given c successes.
    """
    _check_nck(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k for one task: `C(c, k) / C(n, k)`, the chance that all k drawn repeats succeed."""
    _check_nck(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def bootstrap_ci(statistic: Callable[..., np.ndarray], *samples: np.ndarray, n_boot: int = 2000, seed: int = 0,
                 confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap interval, resampling rows (pairs) of equally long samples together.

    Args:
        statistic: Maps resampled arrays of shape (n_boot, n) to n_boot values (one per resample).
        *samples: 1-d arrays of the same length n; row i of every array is resampled together.
        n_boot: Number of resamples.
        seed: Seed of the numpy generator: same inputs and seed give the same interval.
        confidence: Two-sided confidence level.

    Returns:
        (low, high), NaN where the statistic is undefined on every resample (e.g. a ratio over zeros).
    """
    n = len(samples[0])
    if n == 0 or any(len(s) != n for s in samples):
        raise ValueError("bootstrap_ci: samples must be non-empty and of equal length")
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, n, size=(n_boot, n))
    with np.errstate(divide="ignore", invalid="ignore"):
        values = np.asarray(statistic(*(np.asarray(s, dtype=float)[idx] for s in samples)), dtype=float)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return math.nan, math.nan
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(values, [tail, 100 - tail])
    return float(low), float(high)


def _betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) (continued fraction, modified Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1.0 - x)
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * f / a


def t_cdf(x: float, df: float) -> float:
    """Cumulative distribution function of Student's t with `df` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"t_cdf: df must be > 0, got {df}")
    if math.isinf(x):
        return 1.0 if x > 0 else 0.0
    if x * x < df:
        half = 0.5 * _betainc(0.5, df / 2, x * x / (df + x * x))
        return 0.5 + half if x > 0 else 0.5 - half
    tail = 0.5 * _betainc(df / 2, 0.5, df / (df + x * x))
    return 1.0 - tail if x > 0 else tail


def t_ppf(q: float, df: float) -> float:
    """Quantile function of Student's t (bisection on t_cdf)."""
    if not 0 < q < 1:
        raise ValueError(f"t_ppf: q must be in (0, 1), got {q}")
    lo, hi = -1.0, 1.0
    while t_cdf(lo, df) > q:
        lo *= 2
    while t_cdf(hi, df) < q:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if t_cdf(mid, df) < q else (lo, mid)
        if hi - lo < 1e-12 * max(1.0, abs(mid)):
            break
    return (lo + hi) / 2


@dataclass(frozen=True)
class ClusteredMean:
    """The mean of paired differences with its standard error clustered by task."""

    estimate: float
    """Mean of the pair differences."""
    se: float
    """Cluster-robust standard error (CR1: sum over tasks, times G / (G - 1)); NaN with one task."""
    se_iid: float
    """The standard error if every pair were independent (sample sd / sqrt(pairs))."""
    pairs: int
    tasks: int
    """Clusters, G; the t distribution has G - 1 degrees of freedom."""

    @property
    def df(self) -> int:
        return self.tasks - 1

    @property
    def estimable(self) -> bool:
        """At least two tasks and a non-zero spread between them: the interval is not degenerate."""
        return self.tasks >= 2 and self.se > 1e-12

    def interval(self, confidence: float = 0.95) -> tuple[float, float]:
        """t interval with G - 1 degrees of freedom; (NaN, NaN) when not estimable."""
        if not self.estimable:
            return math.nan, math.nan
        half = t_ppf(1 - (1 - confidence) / 2, self.df) * self.se
        return self.estimate - half, self.estimate + half

    @property
    def p_value(self) -> float:
        """Two-sided p of the t test of a zero mean; NaN when not estimable."""
        if not self.estimable:
            return math.nan
        return min(1.0, 2 * t_cdf(-abs(self.estimate / self.se), self.df))

    @property
    def design_effect(self) -> float:
        """se² / se_iid²: how many times the variance exceeds that of independent pairs (NaN if undefined)."""
        if not self.estimable or self.se_iid <= 0:
            return math.nan
        return (self.se / self.se_iid) ** 2


def clustered_mean(values: np.ndarray, clusters: np.ndarray) -> ClusteredMean:
    """Mean of `values` with a standard error clustered by `clusters`.

    The CR1 estimator `G/(G-1) * sum_g (sum_{i in g} (x_i - mean))^2 / N^2`, which is what
    statsmodels' OLS on a constant with `cov_type="cluster"` computes; with equal cluster sizes it is
    the paired t test on per-cluster means.

    Args:
        values: One value per pair (e.g. candidate resolved - reference resolved).
        clusters: The task of each pair.
    """
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        raise ValueError("clustered_mean: no values")
    _, codes = np.unique(np.asarray(clusters), return_inverse=True)
    g = int(codes.max()) + 1
    mean = float(x.mean())
    sums = np.bincount(codes, weights=x - mean, minlength=g)
    se = math.sqrt(g / (g - 1) * float((sums ** 2).sum())) / x.size if g > 1 else math.nan
    se_iid = float(x.std(ddof=1)) / math.sqrt(x.size) if x.size > 1 else math.nan
    return ClusteredMean(mean, se, se_iid, int(x.size), g)


def sign_test(positive: int, negative: int) -> float:
    """Exact two-sided sign test (the same binomial test as McNemar's), e.g. on tasks that differ."""
    return mcnemar_exact(negative, positive)


def holm(p_values: list[float]) -> tuple[list[float], list[int]]:
    """Holm's step-down correction.

    Returns:
        (adjusted p-values, multipliers): the i-th smallest p is compared with alpha / (m - i + 1),
        its multiplier; adjusted p = running max of min(1, multiplier * p). NaN p-values are left out
        (adjusted NaN, multiplier 1) and do not count in m.
    """
    known = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    adjusted = [math.nan] * len(p_values)
    factors = [1] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(known):
        factors[i] = len(known) - rank
        running = max(running, min(1.0, factors[i] * p))
        adjusted[i] = running
    return adjusted, factors


def cluster_bootstrap_ratio(reference: np.ndarray, candidate: np.ndarray, clusters: np.ndarray,
                            n_boot: int = 4000, seed: int = 0) -> np.ndarray:
    """Bootstrap draws of sum(candidate) / sum(reference), resampling whole tasks with replacement.

    Returns:
        The finite draws, sorted (empty when the reference sums to zero on every resample).
    """
    _, codes = np.unique(np.asarray(clusters), return_inverse=True)
    g = int(codes.max()) + 1
    ref = np.bincount(codes, weights=np.asarray(reference, dtype=float), minlength=g)
    cand = np.bincount(codes, weights=np.asarray(candidate, dtype=float), minlength=g)
    idx = np.random.default_rng(seed).integers(0, g, size=(n_boot, g))
    with np.errstate(divide="ignore", invalid="ignore"):
        draws = cand[idx].sum(axis=1) / ref[idx].sum(axis=1)
    return np.sort(draws[np.isfinite(draws)])


@dataclass(frozen=True)
class VarianceParts:
    """Variance of the per-pair difference split into tasks and repeats (one-way random effects, ANOVA)."""

    between: float
    """Variance of the true per-task differences, sigma_b² (floored at 0)."""
    within: float
    """Variance between repeats of one task, sigma_w² (pooled)."""
    tasks: int
    repeats: float
    """Harmonic mean of the repeats per task."""

    def task_mean_variance(self, repeats: float) -> float:
        """Variance of one task's mean difference over `repeats` repeats: sigma_b² + sigma_w² / repeats."""
        return self.between + self.within / repeats

    @property
    def icc(self) -> float:
        """Share of the variance that is between tasks (NaN when there is none)."""
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
    within = resid / dof if dof > 0 else 0.0
    r = float(g / (1.0 / sizes).sum())
    var_means = float(means.var(ddof=1)) if g > 1 else 0.0
    return VarianceParts(max(0.0, var_means - within / r), within, g, r)


def _mdd(sd: float, tasks: int, alpha: float, power: float) -> float:
    if tasks < 2:
        return math.inf
    return (t_ppf(1 - alpha / 2, tasks - 1) + t_ppf(power, tasks - 1)) * sd / math.sqrt(tasks)


def min_detectable_difference(parts: VarianceParts, tasks: int | None = None, repeats: float | None = None,
                              alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest true difference the task-level paired t test detects with the given power.

    `(t(1 - alpha/2, T-1) + t(power, T-1)) * sqrt(sigma_b² + sigma_w² / r) / sqrt(T)` for T tasks and r
    repeats each (default: the design the parts were estimated from). A simulation in the tests checks
    that a difference of this size is detected with the stated power.

    Returns:
        The difference as a proportion (0.2 = 20 points); `inf` with fewer than two tasks; NaN when the
        pilot shows no variance at all (nothing to plan from).
    """
    tasks = parts.tasks if tasks is None else tasks
    repeats = parts.repeats if repeats is None else repeats
    var = parts.task_mean_variance(repeats)
    if var <= 0:
        return math.nan
    return _mdd(math.sqrt(var), tasks, alpha, power)


def tasks_needed(parts: VarianceParts, difference: float, repeats: float | None = None, alpha: float = 0.05,
                 power: float = 0.8, limit: int = 100_000) -> int | None:
    """Fewest tasks (each run `repeats` times) whose MDD is at most `difference`; None beyond `limit`."""
    repeats = parts.repeats if repeats is None else repeats
    var = parts.task_mean_variance(repeats)
    if var <= 0 or difference <= 0:
        return None
    sd = math.sqrt(var)
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    start = max(2, int((z * sd / difference) ** 2))
    if start > limit:
        return None
    for t in range(start, limit + 1):
        if _mdd(sd, t, alpha, power) <= difference:
            return t
    return None


def repeats_needed(parts: VarianceParts, difference: float, tasks: int | None = None, alpha: float = 0.05,
                   power: float = 0.8, limit: int = 1000) -> int | None:
    """Fewest repeats per task, with `tasks` tasks, whose MDD is at most `difference`; None when no
    number of repeats up to `limit` is enough (the between-task variance alone is too large)."""
    tasks = parts.tasks if tasks is None else tasks
    for r in range(1, limit + 1):
        mdd = min_detectable_difference(parts, tasks, r, alpha, power)
        if not math.isnan(mdd) and mdd <= difference:
            return r
    return None
