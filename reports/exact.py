"""The sign-flip randomization test over tasks, with its test-inverted interval.

One value per task (a task's mean pair difference, or its log token ratio). Under the null hypothesis
that the values are symmetric around `mu` (true of an A/A comparison, where swapping the arms' labels
of a task changes nothing), every pattern of signs of `value - mu` is as likely as the observed one:
the p-value is the share of sign patterns whose |mean| is at least the observed one. It is exact for
any number of tasks (all 2^T patterns up to EXACT_TASKS tasks, a seeded sample beyond), needs no
standard error, and so stays honest when every task differs by nearly the same amount. Its interval
holds every `mu` the test does not reject. With T tasks no p below 2 / 2^T can occur: that is the
`smallest_p`, and a design whose smallest p cannot pass the level has too few tasks to decide.
(Fisher 1935, §21; Pitman 1937; Good, *Permutation, Parametric and Bootstrap Tests*, 2005, ch. 3.)
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal

import numpy as np

__all__ = ["EXACT_TASKS", "SAMPLED_PATTERNS", "SignFlip", "sign_flip", "RatioSignFlip", "ratio_sign_flip", "smallest_p",
           "attained_level", "expected_size"]

EXACT_TASKS = 14
"""Up to this many tasks every sign pattern is enumerated (2^14 = 16,384)."""
SAMPLED_PATTERNS = 9_999
"""Beyond EXACT_TASKS, the observed pattern plus this many seeded random ones."""

Alternative = Literal["two-sided", "greater", "less"]


def smallest_p(tasks: int, alternative: Alternative = "two-sided") -> float:
    """The smallest p-value the test can give with `tasks` tasks: 2 / 2^T two-sided, 1 / 2^T one-sided."""
    if tasks < 1:
        return 1.0
    exact = math.ldexp(2.0 if alternative == "two-sided" else 1.0, -tasks)  # 0.0, not an overflow, for huge T
    return exact if tasks <= EXACT_TASKS else max(exact, 1 / (SAMPLED_PATTERNS + 1))


@lru_cache(maxsize=16)
def _patterns(tasks: int, seed: int) -> np.ndarray:
    """The sign patterns of `tasks` tasks (read-only; the same array for the same arguments: every
    comparison of one report draws the same ones)."""
    if tasks <= EXACT_TASKS:
        patterns = np.array(list(itertools.product((1.0, -1.0), repeat=tasks)))
    else:
        rng = np.random.default_rng(seed)
        sampled = rng.choice((1.0, -1.0), size=(SAMPLED_PATTERNS, tasks))
        patterns = np.vstack([np.ones((1, tasks)), sampled])
    patterns.flags.writeable = False
    return patterns


@dataclass(frozen=True)
class SignFlip:
    """The randomization distribution of one set of per-task values."""

    values: np.ndarray = field(repr=False, compare=False)
    """One value per task."""
    sums: np.ndarray = field(repr=False, compare=False)
    """Σ s_i · value_i for every sign pattern s (the observed pattern first)."""
    counts: np.ndarray = field(repr=False, compare=False)
    """Σ s_i for every sign pattern."""

    @property
    def tasks(self) -> int:
        return int(self.values.size)

    @property
    def estimate(self) -> float:
        """Mean of the per-task values."""
        return float(self.values.mean())

    @property
    def constant(self) -> bool:
        """Every task has the same value: there is no spread to invert a test over."""
        return bool(np.ptp(self.values) < 1e-12)

    def p_value(self, mu: float = 0.0, alternative: Alternative = "two-sided") -> float:
        """p of the hypothesis that the values are symmetric around `mu` ("greater": against a mean above
        `mu`; "less": below)."""
        observed = float(self.values.sum()) - mu * self.tasks
        shifted = self.sums - mu * self.counts
        tol = 1e-9 * max(1.0, abs(observed))
        if alternative == "two-sided":
            hits = np.abs(shifted) >= abs(observed) - tol
        elif alternative == "greater":
            hits = shifted >= observed - tol
        else:
            hits = shifted <= observed + tol
        return float(np.count_nonzero(hits)) / self.sums.size

    def _bound(self, inside: float, outside: float, level: float) -> float:
        """The edge of the accepted set between `inside` (accepted) and `outside` (rejected)."""
        for _ in range(60):
            mid = (inside + outside) / 2
            if self.p_value(mid) > level:
                inside = mid
            else:
                outside = mid
            if abs(outside - inside) < 1e-7 * max(1.0, abs(mid)):
                break
        return inside

    def interval(self, confidence: float) -> tuple[float, float]:
        """Every `mu` the two-sided test does not reject at 1 − confidence; (−inf, inf) when no `mu` can be
        rejected (too few tasks), NaN when every task has the same value."""
        level = 1 - confidence
        if self.constant or self.tasks == 0:
            return math.nan, math.nan
        if smallest_p(self.tasks) > level:
            return -math.inf, math.inf
        low, high = float(self.values.min()), float(self.values.max())
        span = high - low
        # beyond the range of the values every sign pattern of the shifted values is the same: rejected
        below, above = low - span, high + span
        return self._bound(self.estimate, below, level), self._bound(self.estimate, above, level)


def sign_flip(values: np.ndarray, seed: int = 0) -> SignFlip:
    """The sign-flip randomization distribution of per-task `values` (seeded when sampled)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return SignFlip(x, np.zeros(1), np.zeros(1))
    patterns = _patterns(x.size, seed)
    return SignFlip(x, patterns @ x, patterns.sum(axis=1))


@dataclass(frozen=True)
class RatioSignFlip:
    """The sign-flip test of a ratio of totals over tasks, Σ candidate / Σ reference, and its interval.

    The ratio is ρ when Σ_t (c_t − ρ r_t) = 0, c_t and r_t a task's totals in the two arms. The test of ρ
    flips the sign of each task's c_t − ρ r_t: at ρ = 1, where the candidate changes nothing (each task's
    totals as likely to come from either arm), every sign pattern is as likely as the observed one, and
    the test is exact; its interval holds every ρ it does not reject (Fieller's construction, with the
    randomization test in place of the t test)."""

    reference: np.ndarray = field(repr=False, compare=False)
    """Per-task totals of the reference."""
    candidate: np.ndarray = field(repr=False, compare=False)
    reference_sums: np.ndarray = field(repr=False, compare=False)
    """Σ s_t · r_t for every sign pattern s (the observed pattern first)."""
    candidate_sums: np.ndarray = field(repr=False, compare=False)

    @property
    def tasks(self) -> int:
        return int(self.reference.size)

    @property
    def ratio(self) -> float:
        """Σ candidate / Σ reference; NaN when the reference totals 0."""
        total = float(self.reference.sum())
        return float(self.candidate.sum()) / total if total > 0 else math.nan

    def p_value(self, rho: float = 1.0) -> float:
        """Two-sided p of the hypothesis that each task's c_t − ρ r_t is symmetric around 0."""
        observed = float(self.candidate.sum() - rho * self.reference.sum())
        shifted = self.candidate_sums - rho * self.reference_sums
        tol = 1e-9 * max(float(np.abs(self.candidate).sum() + rho * np.abs(self.reference).sum()), 1e-300)
        return float(np.count_nonzero(np.abs(shifted) >= abs(observed) - tol)) / shifted.size

    def _bound(self, inside: float, outside: float, level: float) -> float:
        for _ in range(80):
            mid = (inside + outside) / 2
            if self.p_value(mid) > level:
                inside = mid
            else:
                outside = mid
            if abs(outside - inside) < 1e-7 * max(abs(mid), 1e-12):
                break
        return inside

    def interval(self, confidence: float) -> tuple[float, float]:
        """Every ρ the test does not reject at 1 − confidence (the upper end inf when no ρ above the ratio
        is rejected); NaN when the reference totals 0 or the tasks are too few for this level."""
        level = 1 - confidence
        estimate = self.ratio
        if math.isnan(estimate) or smallest_p(self.tasks) > level:
            return math.nan, math.nan
        low = 0.0 if self.p_value(0.0) > level else self._bound(estimate, 0.0, level)
        above = max(estimate, 1e-12) * 2
        while self.p_value(above) > level:
            if above > 1e6 * max(estimate, 1e-12):
                return low, math.inf
            above *= 2
        return low, self._bound(estimate, above, level)


def ratio_sign_flip(reference: np.ndarray, candidate: np.ndarray, seed: int = 0) -> RatioSignFlip:
    """The sign-flip test of Σ candidate / Σ reference over tasks (per-task totals, seeded when sampled)."""
    r, c = np.asarray(reference, dtype=float), np.asarray(candidate, dtype=float)
    if r.size == 0:
        return RatioSignFlip(r, c, np.zeros(1), np.zeros(1))
    patterns = _patterns(r.size, seed)
    return RatioSignFlip(r, c, patterns @ r, patterns @ c)


LATTICE = 2520
"""Per-task values that are multiples of 1/q for some q up to this (a task's mean of 0/1 pair differences
over q repeats; 2520 = lcm(1, …, 10)) get the exact randomization distribution by convolution."""
LARGEST_SUM = 1 << 22
"""A lattice sum beyond this many steps has so many atoms that the test is not discrete: its size is
the level."""
LARGEST_PATTERNS = 2000
"""Values off any lattice: the attained size from the sampled sign patterns up to this many tasks; beyond,
the level (so many tasks off a lattice leave few ties)."""


def _lattice(x: np.ndarray) -> int | None:
    for q in range(1, LATTICE + 1):
        if np.all(np.abs(x * q - np.round(x * q)) < 1e-9):
            return q
    return None


def _lattice_sizes(steps: np.ndarray) -> np.ndarray:
    """P(|S| = j), j = 0..Σ steps, for S = Σ ±steps_i with every sign pattern equally likely (FFT
    convolution of one scaled binomial per distinct step)."""
    total = int(steps.sum())
    size = 1 << max(1, (2 * total).bit_length())
    spectrum = np.ones(size // 2 + 1, dtype=complex)
    for step, n in zip(*np.unique(steps[steps > 0], return_counts=True)):
        b = np.arange(n + 1)
        log_pmf = np.concatenate([[0.0], np.cumsum(np.log((n - b[1:] + 1) / b[1:]))]) - n * math.log(2)
        pmf = np.zeros(size)
        np.add.at(pmf, ((2 * b - n) * int(step)) % size, np.exp(log_pmf))
        spectrum *= np.fft.rfft(pmf)
    dist = np.clip(np.fft.irfft(spectrum, size), 0.0, None)
    j = np.arange(total + 1)
    sizes = dist[j] + np.where(j > 0, dist[(-j) % size], 0.0)
    return sizes / sizes.sum()


def attained_level(values: np.ndarray, level: float, seed: int = 0) -> float:
    """The exact size of the two-sided sign-flip test at `level` given the values' magnitudes: the share
    of the equally likely sign patterns whose p is at or below `level`.

    A randomization test of few or tied values is discrete: its p-values take a few steps, and the
    largest step at or below `level` is all the test can spend. Its power is that of a test at this
    size, not at `level` (the discrete test's "actual significance level": Chernick & Liu 2002). Values
    on a lattice of step 1/q (q up to LATTICE: completion means over q repeats) get the exact
    distribution at any number of tasks; other values that of the sign patterns `sign_flip` uses.
    0 when no pattern passes (all values 0, or too few tasks)."""
    x = np.abs(np.asarray(values, dtype=float))
    if x.size == 0 or not np.any(x > 1e-12):
        return 0.0
    q = _lattice(x)
    if (q is not None and float(np.round(x * q).sum()) > LARGEST_SUM) or (q is None and x.size > LARGEST_PATTERNS):
        return level
    if q is not None:
        tail = np.cumsum(_lattice_sizes(np.round(x * q).astype(np.int64))[::-1])[::-1]  # P(|S| >= j)
    else:
        sums = np.sort(np.abs(_patterns(x.size, seed) @ x))[::-1]
        ends = np.r_[sums[1:] < sums[:-1] * (1 - 1e-9) - 1e-12, True]
        tail = (np.flatnonzero(ends) + 1) / sums.size  # the p of each distinct |sum|
    passing = tail <= level * (1 + 1e-9)
    return float(tail[passing].max()) if passing.any() else 0.0


def expected_size(values: np.ndarray, tasks: int, level: float, draws: int = 32, seed: int = 0) -> float:
    """The size the sign-flip test is expected to reach at `level` in a design of `tasks` tasks whose
    values are like `values`: the mean attained size over `draws` seeded sets of `tasks` values drawn
    with replacement from them. One set's ties make its size saw-toothed; the mean is that of the
    design (a task-level bootstrap of the pilot)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0 or tasks < 1:
        return 0.0
    return _expected_size(x.tobytes(), tasks, level, draws, seed)


@lru_cache(maxsize=1024)
def _expected_size(values: bytes, tasks: int, level: float, draws: int, seed: int) -> float:
    """expected_size of float64 values as bytes: the plan asks it for each number of tasks it tries, and
    the report again for the MDD of the same differences."""
    rng = np.random.default_rng(seed)
    x = np.frombuffer(values)
    return float(np.mean([attained_level(rng.choice(x, tasks), level) for _ in range(draws)]))
