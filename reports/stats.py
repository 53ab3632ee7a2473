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

from ctxbench.reports.power import (VarianceParts, min_detectable_difference, repeats_needed, tasks_needed,
                                    variance_parts)
from ctxbench.reports.tdist import t_cdf, t_ppf

__all__ = ["wilson_interval", "clustered_rate_interval", "mcnemar_exact", "pass_at_k", "pass_hat_k", "bootstrap_ci", "t_cdf", "t_ppf",
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


def clustered_rate_interval(outcomes: np.ndarray, clusters: np.ndarray, confidence: float = 0.95
                            ) -> tuple[float, float]:
    """Wilson interval of a rate whose runs are clustered by task (Korn & Graubard 1998).

    The estimand is the success rate over the population of tasks like these, not over more repeats of
    these tasks: repeats of one task are correlated, so the interval uses the effective sample size
    n · (binomial variance / task-clustered variance), at most n, scaled by (z / t(G − 1))² for G tasks.
    When the rate is 0 or 1 there is no variance to compare: the effective size is then the number of
    tasks (the most correlated case). One task gives (0, 1): nothing is known of other tasks.

    Args:
        outcomes: 1 resolved / 0 not, one per run.
        clusters: The task of each run.
        confidence: Two-sided confidence level.
    """
    x = np.asarray(outcomes, dtype=float)
    if x.size == 0:
        raise ValueError("clustered_rate_interval: no runs")
    c = clustered_mean(x, clusters)
    if c.tasks < 2:
        return 0.0, 1.0
    p, n = float(x.mean()), float(x.size)
    binomial = p * (1 - p) / n
    n_eff = float(c.tasks) if binomial <= 0 or c.se <= 0 else min(n, p * (1 - p) / c.se ** 2)
    z = _z(1 - confidence)
    n_eff *= (z / t_ppf(1 - (1 - confidence) / 2, c.tasks - 1)) ** 2
    denom = 1 + z * z / n_eff
    center = (p + z * z / (2 * n_eff)) / denom
    half = z * math.sqrt(p * (1 - p) / n_eff + z * z / (4 * n_eff * n_eff)) / denom
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
    """Holm's step-down correction, with ties treated alike whatever their order.

    Returns:
        (adjusted p-values, multipliers): the i-th smallest p is compared with alpha / (m - i + 1),
        its multiplier; equal p-values all get the multiplier of the first of them (the largest), so the
        order in which strategies are listed changes nothing. Adjusted p = running max of
        min(1, multiplier * p). NaN p-values are left out (adjusted NaN, multiplier 1) and do not count in m.
    """
    known = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    adjusted = [math.nan] * len(p_values)
    factors = [1] * len(p_values)
    running, first = 0.0, 0
    for rank, (p, i) in enumerate(known):
        if rank == 0 or p != known[rank - 1][0]:
            first = rank
        factors[i] = len(known) - first
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
