"""The statistics the reports rely on, each a small pure function (no pandas, no scipy)."""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Callable

import numpy as np

__all__ = ["wilson_interval", "mcnemar_exact", "pass_at_k", "pass_hat_k", "bootstrap_ci",
           "min_detectable_difference", "smallest_significant_discordant"]


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


def smallest_significant_discordant(alpha: float = 0.05) -> int:
    """Fewest discordant pairs, all in one direction, for which the exact McNemar test gives p < alpha."""
    k = 1
    while mcnemar_exact(0, k) >= alpha:
        k += 1
    return k


def min_detectable_difference(pairs: int, discordant: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest difference in completion rate a paired design of this size could detect.

    Uses the normal approximation for McNemar's test (Connor 1987): with `n` pairs and a discordant
    rate `psi = discordant / n`, a difference `delta = p_candidate - p_reference` is detected with the
    given power when

        sqrt(n) * delta = z(1 - alpha/2) * sqrt(psi) + z(power) * sqrt(psi - delta**2),

    solved here for delta by bisection on [0, sqrt(psi)]. The exact test can never reach p < alpha
    with fewer than `k_min` discordant pairs (6 at alpha = 0.05), so the result is at least
    `k_min / n`; that floor is what a design without observed discordant pairs can promise.

    Args:
        pairs: Number of (task, repeat) pairs, n.
        discordant: Pairs where exactly one side succeeded (b + c).
        alpha: Two-sided significance level.
        power: Wanted power.

    Returns:
        The difference as a proportion (0.2 = 20 points); `inf` when not even the largest difference
        the discordant rate allows could be detected.
    """
    if pairs <= 0 or not 0 <= discordant <= pairs:
        raise ValueError(f"min_detectable_difference: need 0 <= discordant <= pairs > 0, got {discordant}/{pairs}")
    floor = smallest_significant_discordant(alpha) / pairs
    psi = discordant / pairs
    za, zb = _z(alpha), NormalDist().inv_cdf(power)

    def gap(delta: float) -> float:
        return math.sqrt(pairs) * delta - za * math.sqrt(psi) - zb * math.sqrt(max(0.0, psi - delta * delta))

    if psi == 0:
        return floor if floor <= 1 else math.inf
    hi = math.sqrt(psi)
    if gap(hi) < 0:
        return math.inf
    lo = 0.0
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gap(mid) < 0 else (lo, mid)
    delta = max(hi, floor)
    return delta if delta <= 1 else math.inf
