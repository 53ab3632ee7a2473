"""Paired comparisons on (task, repeat): inside one experiment, and between two results folders."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from ctxbench.harness.errors import InputError
from ctxbench.reports.fixed import FixedDifference, check_fixed_variables
from ctxbench.reports.loading import ResultsFolder
from ctxbench.reports.stats import bootstrap_ci, mcnemar_exact, min_detectable_difference

__all__ = ["PairedComparison", "Verdict", "compare_paired", "compare_strategies", "FolderComparison",
           "compare_folders", "verdict_line", "comparison_frame", "ALPHA"]

ALPHA = 0.05
Verdict = Literal["better", "worse", "no detectable difference"]


@dataclass(frozen=True)
class PairedComparison:
    """A candidate against a reference on the (task, repeat) pairs both ran."""

    strategy: str
    """The candidate being judged."""
    reference: str
    """What it is judged against (a strategy, or the same strategy in another folder)."""
    pairs: int
    both: int
    only_reference: int
    """Discordant pairs where only the reference resolved the task (b)."""
    only_candidate: int
    """Discordant pairs where only the candidate resolved the task (c)."""
    neither: int
    rate_reference: float
    rate_candidate: float
    difference: float
    """rate_candidate - rate_reference."""
    difference_ci: tuple[float, float]
    """Bootstrap 95% interval of the difference (pairs resampled, seeded)."""
    p_value: float
    """Exact McNemar p-value on the discordant pairs."""
    tokens_reference: float
    """Mean total tokens per run."""
    tokens_candidate: float
    token_ratio: float
    """tokens_candidate / tokens_reference (NaN when the reference used no tokens)."""
    token_ratio_ci: tuple[float, float]
    min_detectable: float
    """Smallest difference in completion rate this design detects with 80% power at alpha = 0.05."""
    seed_mismatches: int = 0
    """Pairs whose two runs had different seeds (possible between folders)."""

    @property
    def verdict(self) -> Verdict:
        """better / worse when McNemar p < ALPHA, else no detectable difference."""
        if self.p_value < ALPHA and self.difference != 0:
            return "better" if self.difference > 0 else "worse"
        return "no detectable difference"


def compare_paired(reference: pd.DataFrame, candidate: pd.DataFrame, *, strategy: str, reference_label: str,
                   seed: int = 0, n_boot: int = 2000) -> PairedComparison:
    """Pair two sets of runs on (task_id, repeat) and compare them.

    Args:
        reference: Runs of the reference (one strategy's rows of a runs frame).
        candidate: Runs of the candidate.
        strategy: Label of the candidate.
        reference_label: Label of the reference.
        seed: Bootstrap seed.
        n_boot: Bootstrap resamples.

    Raises:
        InputError: the two sets share no (task, repeat) pair.
    """
    cols = ["task_id", "repeat", "resolved", "total_tokens", "seed"]
    pairs = reference[cols].merge(candidate[cols], on=["task_id", "repeat"], suffixes=("_ref", "_cand"))
    if pairs.empty:
        raise InputError(f"{strategy} vs {reference_label}: no (task, repeat) pair in common")
    ref = pairs["resolved_ref"].to_numpy(dtype=float)
    cand = pairs["resolved_cand"].to_numpy(dtype=float)
    tok_ref = pairs["total_tokens_ref"].to_numpy(dtype=float)
    tok_cand = pairs["total_tokens_cand"].to_numpy(dtype=float)
    b = int(((ref == 1) & (cand == 0)).sum())
    c = int(((ref == 0) & (cand == 1)).sum())
    both = int(((ref == 1) & (cand == 1)).sum())
    n = len(pairs)
    mean_ref, mean_cand = float(tok_ref.mean()), float(tok_cand.mean())
    return PairedComparison(
        strategy=strategy, reference=reference_label, pairs=n, both=both, only_reference=b, only_candidate=c,
        neither=n - both - b - c, rate_reference=float(ref.mean()), rate_candidate=float(cand.mean()),
        difference=float(cand.mean() - ref.mean()),
        difference_ci=bootstrap_ci(lambda r, k: k.mean(axis=1) - r.mean(axis=1), ref, cand, n_boot=n_boot, seed=seed),
        p_value=mcnemar_exact(b, c),
        tokens_reference=mean_ref, tokens_candidate=mean_cand,
        token_ratio=mean_cand / mean_ref if mean_ref else math.nan,
        token_ratio_ci=bootstrap_ci(lambda r, k: k.mean(axis=1) / r.mean(axis=1), tok_ref, tok_cand,
                                    n_boot=n_boot, seed=seed),
        min_detectable=min_detectable_difference(n, b + c, alpha=ALPHA),
        seed_mismatches=int((pairs["seed_ref"] != pairs["seed_cand"]).sum()),
    )


def compare_strategies(runs: pd.DataFrame, reference: str = "baseline", order: list[str] | None = None,
                       seed: int = 0) -> list[PairedComparison]:
    """Every other strategy of one experiment against `reference`.

    Raises:
        InputError: `reference` has no runs (the message lists the strategies that do).
    """
    order = order or list(dict.fromkeys(runs["strategy"]))
    if reference not in set(runs["strategy"]):
        raise InputError(f"reference strategy {reference!r} has no runs; strategies: {', '.join(order)}")
    ref = runs[runs["strategy"] == reference]
    return [compare_paired(ref, runs[runs["strategy"] == s], strategy=s, reference_label=reference, seed=seed)
            for s in order if s != reference]


@dataclass(frozen=True)
class FolderComparison:
    """Folder B against folder A, strategy by strategy."""

    a: ResultsFolder
    b: ResultsFolder
    differences: list[FixedDifference]
    """Fixed variables that differ (non-empty only when forced)."""
    comparisons: list[PairedComparison]
    """Each strategy in both folders: B's runs (candidate) against A's (reference)."""
    only_a: list[str]
    only_b: list[str]


def compare_folders(a: ResultsFolder, b: ResultsFolder, force: bool = False, seed: int = 0,
                    a_label: str = "A") -> FolderComparison:
    """Compare B with A per shared strategy, after the controlled-variable guard.

    Args:
        a: The reference folder.
        b: The candidate folder.
        force: Compare even when the fixed variables differ (they are listed in the result).
        seed: Bootstrap seed.
        a_label: How A is named in the comparisons' reference label, e.g. "`baseline (A)`".

    Raises:
        FixedVariablesDiffer: the fixed variables differ and `force` is false.
        InputError: the folders share no strategy.
    """
    differences = check_fixed_variables(a.manifest, b.manifest, force=force)
    shared = [s for s in b.strategies if s in a.strategies]
    if not shared:
        raise InputError(f"{a.path} and {b.path} share no strategy")
    comparisons = [compare_paired(a.runs[a.runs["strategy"] == s], b.runs[b.runs["strategy"] == s],
                                  strategy=s, reference_label=f"{s} ({a_label})", seed=seed) for s in shared]
    return FolderComparison(a, b, differences, comparisons,
                            [s for s in a.strategies if s not in shared], [s for s in b.strategies if s not in shared])


def _pts(x: float) -> str:
    return f"{x * 100:+.1f}"


def _ratio(x: float) -> str:
    return "n/a" if math.isnan(x) else f"×{x:.2f}"


def verdict_line(c: PairedComparison) -> str:
    """One Markdown line: the verdict, the difference with its interval, p, and the token ratio."""
    lo, hi = c.difference_ci
    rlo, rhi = c.token_ratio_ci
    if c.verdict == "no detectable difference":
        mdd = "no difference" if math.isinf(c.min_detectable) else f"differences of ±{c.min_detectable * 100:.1f} pts"
        head = f"no detectable difference from `{c.reference}` (this design detects {mdd} with 80% power)"
    else:
        head = f"**{c.verdict}** than `{c.reference}`"
    tokens = f"tokens {_ratio(c.token_ratio)} [{_ratio(rlo)}, {_ratio(rhi)}]"
    return (f"`{c.strategy}`: {head} — completion {_pts(c.difference)} pts [95% CI {_pts(lo)}, {_pts(hi)}], "
            f"McNemar p = {c.p_value:.4g} (discordant pairs +{c.only_candidate}/−{c.only_reference} of {c.pairs}); "
            f"{tokens}")


def comparison_frame(comparisons: list[PairedComparison]) -> pd.DataFrame:
    """The comparisons as a display table (formatted strings)."""
    rows = []
    for c in comparisons:
        rows.append({
            "strategy": c.strategy, "vs": c.reference, "pairs": c.pairs,
            "rate": f"{c.rate_candidate:.1%} vs {c.rate_reference:.1%}",
            "Δ completion (pts)": f"{_pts(c.difference)} [{_pts(c.difference_ci[0])}, {_pts(c.difference_ci[1])}]",
            "discordant (+/−)": f"{c.only_candidate}/{c.only_reference}",
            "McNemar p": f"{c.p_value:.4g}",
            "MDD (pts)": "∞" if math.isinf(c.min_detectable) else f"{c.min_detectable * 100:.1f}",
            "token ratio": f"{_ratio(c.token_ratio)} [{_ratio(c.token_ratio_ci[0])}, {_ratio(c.token_ratio_ci[1])}]",
            "verdict": c.verdict,
        })
    return pd.DataFrame(rows)
