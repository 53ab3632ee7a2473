"""Anytime-valid confidence sequences for the paired completion difference, and the verdicts they give.

A sequential experiment runs in rounds: every task once more per round, both arms on the same seeds.
One round gives one paired difference per task, candidate − reference, in [−1, 1] (a task's mean
difference over the round's repeats). The estimand is Δ, the mean over the experiment's tasks of each
task's expected difference (this taskset: its tasks are fixed, their repeats are the draws).

The confidence sequence is the betting one of Waudby-Smith & Ramdas (2024, JRSS-B 86(1), "Estimating
means of bounded random variables by betting"), with the bets of its "diversified Kelly" (dKelly)
mixture: for a candidate value m, a gambler who bets the fraction c of her wealth that Δ > m multiplies
it by 1 + c (x − m) / (1 + m) at each difference x; the wealth is averaged over a grid of fixed c
(uniform weights). Within one round the tasks are independent, so under Δ = m the round multiplies the
expected wealth by Π_t (1 + λ (δ_t − m)) ≤ exp(λ Σ_t (δ_t − m)) = 1 (δ_t: task t's expected
difference; the bets are the same for every task of the round): the wealth is a non-negative
supermartingale over rounds, and by Ville's inequality it ever reaches 2 / α with chance at most α / 2,
however many rounds are looked at and whenever the experiment stops. The lower bound of the sequence
is the smallest m whose "greater" wealth has not reached 2 / α, the upper bound the same with bets
that Δ < m (hedged capital with θ = 1/2). Looks are at the end of a round only: a part of a round
is no such supermartingale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence as Seq

import numpy as np

__all__ = ["Goal", "SequentialVerdict", "BETS", "Bounds", "log_wealth", "confidence_sequence", "decide",
           "stops", "arm_level", "fewest_deciding_pairs"]

Goal = Literal["superiority", "non_inferiority"]
SequentialVerdict = Literal["better", "worse", "non-inferior", "futile", "undecided"]

BETS = (np.arange(40) + 0.5) / 40
"""The fractions of wealth bet (c), the grid of the dKelly mixture: a midpoint rule for a uniform
prior on (0, 1), so that the mixture adapts to the size of the difference."""

_EDGE = 1 - 1e-9


@dataclass(frozen=True)
class Bounds:
    """A confidence sequence after some rounds, at level 1 − alpha."""

    low: float
    high: float
    estimate: float
    """Mean of every paired difference so far (NaN without any)."""
    pairs: int
    """Paired differences so far (tasks × rounds, less any task missing from a round)."""
    alpha: float


def _pooled(rounds: Seq[Seq[float] | np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct differences and how often each occurs (the wealth depends on nothing else)."""
    values = np.concatenate([np.asarray(r, dtype=float).ravel() for r in rounds]) if rounds else np.zeros(0)
    if values.size and (np.nanmin(values) < -1 - 1e-12 or np.nanmax(values) > 1 + 1e-12):
        raise ValueError("confidence_sequence: differences must lie in [-1, 1]")
    values = np.clip(values[~np.isnan(values)], -1.0, 1.0)
    distinct, counts = np.unique(values, return_counts=True)
    return distinct, counts.astype(float)


def log_wealth(distinct: np.ndarray, counts: np.ndarray, m: float, side: Literal["greater", "less"]) -> float:
    """Log of the mixture's wealth against Δ = m: betting Δ > m ("greater") or Δ < m ("less")."""
    m = min(max(m, -_EDGE), _EDGE)
    if side == "greater":
        factors = 1 + np.outer(BETS, distinct - m) / (1 + m)
    else:
        factors = 1 - np.outer(BETS, distinct - m) / (1 - m)
    logs = np.log(np.maximum(factors, 1e-300)) @ counts
    top = float(logs.max())
    return top + math.log(float(np.exp(logs - top).mean()))


def _edge(distinct: np.ndarray, counts: np.ndarray, threshold: float, side: Literal["greater", "less"]) -> float:
    """The bound of the accepted set on one side: the wealth is monotone in m, so bisect."""
    inside, outside = (1.0, -1.0) if side == "greater" else (-1.0, 1.0)
    if log_wealth(distinct, counts, outside, side) < threshold:
        return outside
    for _ in range(50):
        mid = (inside + outside) / 2
        if log_wealth(distinct, counts, mid, side) >= threshold:
            outside = mid
        else:
            inside = mid
    return outside


def confidence_sequence(rounds: Seq[Seq[float] | np.ndarray], alpha: float) -> Bounds:
    """The confidence sequence of Δ after `rounds` (each: the paired differences of one round).

    Args:
        rounds: One array per round of per-task differences in [−1, 1]; NaN (a task without a pair in
            that round) is left out.
        alpha: 1 − the confidence: the chance that the sequence ever leaves out Δ, over all rounds.

    Returns:
        The bounds; [−1, 1] before any round. 24 differences of +1 in one round give a lower bound
        above 0.5 at alpha = 0.05; 24 of 0 give a sequence within ±0.2 of 0.
    """
    if not 0 < alpha < 1:
        raise ValueError(f"confidence_sequence: alpha must be in (0, 1), got {alpha}")
    distinct, counts = _pooled(rounds)
    pairs = int(counts.sum())
    if not pairs:
        return Bounds(-1.0, 1.0, math.nan, 0, alpha)
    threshold = math.log(2 / alpha)
    estimate = float(distinct @ counts / counts.sum())
    low = _edge(distinct, counts, threshold, "greater")
    high = _edge(distinct, counts, threshold, "less")
    return Bounds(low, max(low, high), estimate, pairs, alpha)


def decide(bounds: Bounds, goal: Goal, margin: float, min_effect: float) -> SequentialVerdict:
    """The verdict the sequence supports for `goal`.

    superiority: better (lower bound > 0), worse (upper < 0), futile (upper < min_effect: an
    improvement of min_effect is ruled out), else undecided. non_inferiority: better (lower > 0),
    non-inferior (lower > −margin), worse (upper < 0), else undecided. Only these stop an arm, so a
    superiority experiment never stops on "non-inferior", which would end arms before they could show
    that they are better.
    """
    if bounds.low > 0:
        return "better"
    if goal == "non_inferiority":
        if bounds.low > -margin:
            return "non-inferior"
        return "worse" if bounds.high < 0 else "undecided"
    if bounds.high < 0:
        return "worse"
    return "futile" if bounds.high < min_effect else "undecided"


def stops(verdict: SequentialVerdict) -> bool:
    """Whether an arm with this verdict runs no more rounds."""
    return verdict != "undecided"


def arm_level(alpha: float, candidates: int) -> float:
    """Each arm's alpha: Bonferroni over the candidates compared with the reference, so the chance that
    any sequence ever misses its Δ stays within alpha whichever arms stop when."""
    if candidates < 1:
        raise ValueError("arm_level: need at least one candidate")
    return alpha / candidates


def fewest_deciding_pairs(pairs: int, alpha: float) -> int | None:
    """The fewest of `pairs` paired differences that must all go one way (+1, the others 0) for the
    sequence at `alpha` to exclude 0 (better, or worse if they go the other way): no sample closer to a
    tie decides. None when even all of them going one way would not.

    A design of T tasks × R rounds has T·R pairs per candidate: its answer, read as a share of them, is
    the smallest difference in completion it can ever decide, and 5 tasks × 1 round at 0.05 decide none.
    """
    if pairs < 1 or confidence_sequence([np.ones(pairs)], alpha).low <= 0:
        return None
    low, high = 0, pairs  # `high` one-way pairs decide, `low` do not
    while high - low > 1:
        mid = (low + high) // 2
        sample = np.zeros(pairs)
        sample[:mid] = 1.0
        low, high = (low, mid) if confidence_sequence([sample], alpha).low > 0 else (mid, high)
    return high
