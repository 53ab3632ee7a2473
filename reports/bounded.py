"""A test of the mean of per-task differences that holds for any distribution within their bounds.

Non-inferiority asks whether Δ, the mean over the population of tasks of each task's expected
difference, is above −margin. Nothing but the bounds is known of the per-task differences: they lie
in [−1, 1], tie (most tasks give the same outcome in both arms) and are skewed. A test that assumes
them symmetric (the sign-flip test shifted by the margin) or normal (the t test) rejects "worse by the
margin" from a handful of tied tasks, where a population with a few tasks lost outright in the
candidate (−1 each) and the rest tied is worse by the margin and gives such samples often: from T tied
tasks, 0.95^T of the time (0.66 at 8 tasks). No test can rule that population out before
0.95^T < α, 59 tasks at a 5-pt margin.

The test here bets against the null (Waudby-Smith & Ramdas 2024, "Estimating means of bounded random
variables by betting", JRSS-B 86(1)): to test Δ ≤ μ, a gambler starts with wealth 1 and at each task
multiplies it by 1 + b_t (x_t − μ), her bet b_t ≥ 0 chosen from the tasks seen before (the
"predictable plug-in" b_t = sqrt(2 log(1/α) / (T σ̂²)), σ̂² the variance of those tasks, at most
0.99 / (1 + μ) so that the factor stays positive). Under the null each factor has expectation at most
1 whatever the distribution, so the final wealth has expectation at most 1, and by Markov's inequality
it reaches k/α with chance at most α/k: p = 1 / wealth is a valid p-value at any number of tasks,
ties and skew included. The order of the tasks would move the bets; the wealth is averaged over
ORDERS seeded orders (an average of such wealths has expectation at most 1 too). The interval holds
every μ neither one-sided test rejects.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

import numpy as np

__all__ = ["ORDERS", "BoundedMean", "bounded_mean"]

ORDERS = 100
"""Orders of the tasks the wealth is averaged over: the given order and 99 seeded permutations."""
LARGEST_BET = 0.99
"""Of the wealth that could be lost: the factor of a task at the far bound stays at least 0.01."""
PRIOR_VARIANCE = 0.25
"""The variance the first bet assumes, before any task is seen (that of an even ±0.5)."""

Side = Literal["greater", "less"]


@lru_cache(maxsize=16)
def _orders(tasks: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    orders = np.vstack([np.arange(tasks)] + [rng.permutation(tasks) for _ in range(ORDERS - 1)])
    orders.flags.writeable = False
    return orders


@dataclass(frozen=True)
class BoundedMean:
    """The betting test of the mean of per-task values in [−1, 1], and its interval."""

    values: np.ndarray = field(repr=False, compare=False)
    """One value per task, in [−1, 1]."""
    alpha: float = 0.05
    """The level the bets are tuned for (a design constant: the test is valid at every level)."""
    seed: int = 0

    @property
    def tasks(self) -> int:
        return int(self.values.size)

    def log_wealth(self, mu: float, side: Side) -> float:
        """Log of the wealth against Δ = μ: betting that Δ > μ ("greater") or Δ < μ ("less")."""
        n = self.tasks
        if n == 0:
            return 0.0
        mu = min(max(mu, -1 + 1e-9), 1 - 1e-9)
        x = self.values[_orders(n, self.seed)]
        excess = x - mu if side == "greater" else mu - x
        before = np.cumsum(x, axis=1) - x
        squares = np.cumsum(x * x, axis=1) - x * x
        seen = np.arange(n)
        spread = squares - np.where(seen > 0, before ** 2 / np.maximum(seen, 1), 0.0)
        variance = (PRIOR_VARIANCE + spread) / (seen + 1)
        largest = LARGEST_BET / (1 + mu if side == "greater" else 1 - mu)
        bets = np.minimum(largest, np.sqrt(2 * math.log(1 / self.alpha) / (n * variance)))
        logs = np.log1p(bets * excess).sum(axis=1)
        top = float(logs.max())
        return top + math.log(float(np.exp(logs - top).mean()))

    def p_value(self, mu: float, side: Side) -> float:
        """One-sided p of Δ ≤ μ ("greater": against a mean above μ) or Δ ≥ μ ("less"): 1 / wealth."""
        return min(1.0, math.exp(-self.log_wealth(mu, side)))

    def _edge(self, threshold: float, side: Side) -> float:
        """The bound on one side: the wealth falls as μ moves towards that side, so bisect."""
        inside, outside = (1.0, -1.0) if side == "greater" else (-1.0, 1.0)
        if self.log_wealth(outside, side) < threshold:
            return outside
        for _ in range(50):
            mid = (inside + outside) / 2
            if self.log_wealth(mid, side) >= threshold:
                outside = mid
            else:
                inside = mid
        return outside

    def bound(self, level: float, side: Side) -> float:
        """The one-sided bound at `level`: "greater" the lower bound (every μ below it is rejected at
        `level`), "less" the upper."""
        return self._edge(math.log(1 / level), side)

    def interval(self, level: float) -> tuple[float, float]:
        """(lower, upper) bounds, each one-sided at `level`: a two-sided interval of confidence 1 − 2·level."""
        low = self.bound(level, "greater")
        return low, max(low, self.bound(level, "less"))


def bounded_mean(values: np.ndarray, alpha: float = 0.05, seed: int = 0) -> BoundedMean:
    """The betting test of the mean of per-task `values` (each in [−1, 1]).

    Raises:
        ValueError: a value outside [−1, 1].
    """
    x = np.asarray(values, dtype=float)
    if x.size and (x.min() < -1 - 1e-9 or x.max() > 1 + 1e-9):
        raise ValueError("bounded_mean: per-task values must lie in [-1, 1]")
    return BoundedMean(np.clip(x, -1.0, 1.0), alpha, seed)
