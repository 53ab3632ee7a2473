"""Paired comparisons on (task, repeat), with the task as the unit of inference.

A candidate is paired with a reference on (task, repeat). The primary figure for completion is the
mean pair difference with a t interval clustered by task (the paired t test on per-task means when
every task has as many repeats); the exact McNemar test on the (task, repeat) pairs is kept as a
secondary figure that treats repeats as independent. Token and cost ratios get a cluster bootstrap
over tasks. Verdicts come from one interval each, at the confidence Holm's correction gives the
strategy when several are compared with one reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
import pandas as pd

from ctxbench.harness.errors import InputError
from ctxbench.reports.fixed import FixedDifference, check_fixed_variables
from ctxbench.reports.loading import ResultsFolder
from ctxbench.reports.stats import (ClusteredMean, clustered_mean, cluster_bootstrap_ratio, holm, mcnemar_exact,
                                    min_detectable_difference, sign_test, variance_parts)
from ctxbench.reports.summary import split_harness_errors

__all__ = ["PairedComparison", "Verdict", "CostVerdict", "compare_paired", "compare_strategies", "apply_holm",
           "FolderComparison", "compare_folders", "verdict_line", "comparison_frame", "comparison_csv",
           "ALPHA", "MARGIN", "SAME_RATIO"]

ALPHA = 0.05
"""Family-wise significance level (Holm-corrected across the strategies compared with one reference)."""
MARGIN = 0.05
"""Default non-inferiority margin: 5 points of completion rate."""
SAME_RATIO = 0.10
"""A token or cost ratio whose whole interval lies within ×(1 ± 0.10) reads "same"."""

Verdict = Literal["better", "worse", "non-inferior", "inconclusive"]
CostVerdict = Literal["cheaper", "dearer", "same", "inconclusive"]


@dataclass(frozen=True)
class RatioFigure:
    """A ratio of mean tokens (or cost), candidate / reference, with its task-bootstrap draws."""

    reference: float
    """Mean per run of the reference."""
    candidate: float
    ratio: float
    """NaN when the reference mean is zero."""
    tasks: int
    draws: np.ndarray = field(repr=False, compare=False)
    """Sorted bootstrap draws of the ratio (tasks resampled)."""

    @property
    def estimable(self) -> bool:
        """At least two tasks (one task gives a bootstrap without spread that says nothing). With two or
        more, draws without spread mean every task had the same ratio: the interval is that ratio."""
        return self.tasks >= 2 and self.draws.size > 0

    @property
    def p_value(self) -> float:
        """Two-sided bootstrap p of ratio = 1 (NaN when not estimable)."""
        if not self.estimable:
            return math.nan
        below = (np.count_nonzero(self.draws <= 1.0) + 1) / (self.draws.size + 1)
        above = (np.count_nonzero(self.draws >= 1.0) + 1) / (self.draws.size + 1)
        return min(1.0, 2 * min(below, above))

    def interval(self, confidence: float) -> tuple[float, float]:
        """Percentile interval; (NaN, NaN) when not estimable."""
        if not self.estimable:
            return math.nan, math.nan
        tail = (1 - confidence) / 2 * 100
        low, high = np.percentile(self.draws, [tail, 100 - tail])
        return float(low), float(high)


@dataclass(frozen=True)
class PairedComparison:
    """A candidate against a reference on the (task, repeat) pairs both ran."""

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
    tasks_better: int
    """Tasks where the candidate's mean outcome is higher."""
    tasks_worse: int
    rate_reference: float
    rate_candidate: float
    completion: ClusteredMean
    """Pair differences (candidate - reference), standard error clustered by task."""
    mcnemar_p: float
    """Secondary: exact McNemar p on the (task, repeat) pairs, as if repeats were independent."""
    tokens: RatioFigure
    cost: RatioFigure | None
    """Cost in USD, when the runs record it."""
    mdd: float
    """Smallest difference the task-level test detects with 80% power at alpha (NaN: no variance seen)."""
    excluded: tuple[str, ...] = ()
    """harness_error runs left out of the comparison (`strategy task#repeat`)."""
    unpaired: tuple[str, ...] = ()
    """Runs without a partner in the other arm (`strategy task#repeat`)."""
    seed_mismatches: int = 0
    """Pairs whose two runs had different seeds (possible between folders)."""
    margin: float = MARGIN
    """Non-inferiority margin, as a proportion."""
    alpha: float = ALPHA
    holm_factor: int = 1
    """Holm multiplier of the completion test: the interval has confidence 1 - alpha / holm_factor."""
    holm_p: float = math.nan
    """Holm-adjusted p of the completion test."""
    token_holm_factor: int = 1
    token_holm_p: float = math.nan
    cost_holm_factor: int = 1
    cost_holm_p: float = math.nan

    @property
    def difference(self) -> float:
        """rate_candidate - rate_reference over the pairs."""
        return self.completion.estimate

    @property
    def confidence(self) -> float:
        return 1 - self.alpha / self.holm_factor

    @property
    def difference_ci(self) -> tuple[float, float]:
        """Task-clustered t interval at `confidence`, clipped to the possible range [-1, 1] (NaN when not
        estimable)."""
        low, high = self.completion.interval(self.confidence)
        return (low, high) if math.isnan(low) else (max(-1.0, low), min(1.0, high))

    @property
    def p_value(self) -> float:
        """Primary, unadjusted: task-clustered t test; the exact sign test over tasks when every task
        differs by the same amount (no spread to estimate a standard error from)."""
        if self.completion.estimable:
            return self.completion.p_value
        if self.tasks_better or self.tasks_worse:
            return sign_test(self.tasks_better, self.tasks_worse)
        return math.nan

    @property
    def design_effect(self) -> float:
        return self.completion.design_effect

    @property
    def token_ratio(self) -> float:
        return self.tokens.ratio

    @property
    def token_ratio_ci(self) -> tuple[float, float]:
        return self.tokens.interval(1 - self.alpha / self.token_holm_factor)

    @property
    def verdict(self) -> Verdict:
        """better / worse when the Holm-adjusted test rejects (the interval then excludes 0);
        non-inferior when the interval's lower bound lies above -margin; inconclusive otherwise."""
        significant = not math.isnan(self.holm_p) and self.holm_p < self.alpha
        if significant and self.difference != 0:
            return "better" if self.difference > 0 else "worse"
        low, _ = self.difference_ci
        if not math.isnan(low) and low > -self.margin:
            return "non-inferior"
        return "inconclusive"

    def ratio_verdict(self, which: Literal["tokens", "cost"]) -> CostVerdict:
        """cheaper / dearer when the Holm-adjusted bootstrap test rejects ratio 1; same when the whole
        interval lies within ×(1 ± SAME_RATIO); inconclusive otherwise."""
        figure = self.tokens if which == "tokens" else self.cost
        if figure is None:
            return "inconclusive"
        holm_p, factor = ((self.token_holm_p, self.token_holm_factor) if which == "tokens"
                          else (self.cost_holm_p, self.cost_holm_factor))
        if not math.isnan(holm_p) and holm_p < self.alpha:
            return "cheaper" if figure.ratio < 1 else "dearer"
        low, high = figure.interval(1 - self.alpha / factor)
        if not math.isnan(low) and 1 - SAME_RATIO <= low and high <= 1 + SAME_RATIO:
            return "same"
        return "inconclusive"


def _label(row: pd.Series) -> str:
    return f"{row['strategy']} {row['task_id']}#{row['repeat']}"


def _ratio(pairs: pd.DataFrame, column: str, seed: int, n_boot: int) -> RatioFigure:
    ref = pairs[f"{column}_ref"].to_numpy(dtype=float)
    cand = pairs[f"{column}_cand"].to_numpy(dtype=float)
    mean_ref, mean_cand = float(ref.mean()), float(cand.mean())
    tasks = pairs["task_id"].to_numpy()
    draws = cluster_bootstrap_ratio(ref, cand, tasks, n_boot=n_boot, seed=seed)
    return RatioFigure(mean_ref, mean_cand, mean_cand / mean_ref if mean_ref else math.nan,
                       len(set(tasks)), draws)


def _has_cost(runs: pd.DataFrame) -> bool:
    return "cost_usd" in runs.columns and bool(runs["cost_usd"].notna().all())


def compare_paired(reference: pd.DataFrame, candidate: pd.DataFrame, *, strategy: str, reference_label: str,
                   seed: int = 0, n_boot: int = 4000, margin: float = MARGIN, alpha: float = ALPHA) -> PairedComparison:
    """Pair two sets of runs on (task_id, repeat) and compare them, the task as the unit.

    harness_error runs are left out of both arms (and named in `excluded`); runs left without a
    partner are named in `unpaired`.

    Args:
        reference: Runs of the reference (one strategy's rows of a runs frame).
        candidate: Runs of the candidate.
        strategy: Label of the candidate.
        reference_label: Label of the reference.
        seed: Bootstrap seed.
        n_boot: Bootstrap resamples.
        margin: Non-inferiority margin (proportion).
        alpha: Significance level before any Holm correction.

    Raises:
        InputError: the two sets share no (task, repeat) pair.
    """
    reference, ref_errors = split_harness_errors(reference)
    candidate, cand_errors = split_harness_errors(candidate)
    excluded = tuple(_label(r) for _, r in pd.concat([ref_errors, cand_errors]).iterrows())
    with_cost = _has_cost(reference) and _has_cost(candidate)
    cols = ["strategy", "task_id", "repeat", "resolved", "total_tokens", "seed"] + (["cost_usd"] if with_cost else [])
    merged = reference[cols].merge(candidate[cols], on=["task_id", "repeat"], how="outer",
                                   suffixes=("_ref", "_cand"), indicator=True)
    unpaired = tuple(
        f"{(row['strategy_ref'] if row['_merge'] == 'left_only' else row['strategy_cand'])} "
        f"{row['task_id']}#{row['repeat']}" for _, row in merged[merged["_merge"] != "both"].iterrows())
    pairs = merged[merged["_merge"] == "both"]
    if pairs.empty:
        raise InputError(f"{strategy} vs {reference_label}: no (task, repeat) pair in common")
    ref = pairs["resolved_ref"].to_numpy(dtype=float)
    cand = pairs["resolved_cand"].to_numpy(dtype=float)
    tasks = pairs["task_id"].to_numpy()
    diff = cand - ref
    per_task = pd.Series(diff).groupby(tasks).mean()
    b, c = int(((ref == 1) & (cand == 0)).sum()), int(((ref == 0) & (cand == 1)).sum())
    both = int(((ref == 1) & (cand == 1)).sum())
    return PairedComparison(
        strategy=strategy, reference=reference_label, pairs=len(pairs), tasks=int(per_task.size), both=both,
        only_reference=b, only_candidate=c, neither=len(pairs) - both - b - c,
        tasks_better=int((per_task > 0).sum()), tasks_worse=int((per_task < 0).sum()),
        rate_reference=float(ref.mean()), rate_candidate=float(cand.mean()),
        completion=clustered_mean(diff, tasks), mcnemar_p=mcnemar_exact(b, c),
        tokens=_ratio(pairs, "total_tokens", seed, n_boot),
        cost=_ratio(pairs, "cost_usd", seed, n_boot) if with_cost else None,
        mdd=min_detectable_difference(variance_parts(diff, tasks), alpha=alpha),
        excluded=excluded, unpaired=unpaired,
        seed_mismatches=int((pairs["seed_ref"] != pairs["seed_cand"]).sum()), margin=margin, alpha=alpha,
    )


def apply_holm(comparisons: list[PairedComparison]) -> list[PairedComparison]:
    """Holm's correction across comparisons with one reference, separately for completion, tokens and cost."""
    if not comparisons:
        return comparisons
    done = list(comparisons)
    fam_p, fam_f = holm([c.p_value for c in done])
    tok_p, tok_f = holm([c.tokens.p_value for c in done])
    cost_p, cost_f = holm([c.cost.p_value if c.cost else math.nan for c in done])
    return [replace(c, holm_p=fam_p[i], holm_factor=fam_f[i], token_holm_p=tok_p[i], token_holm_factor=tok_f[i],
                    cost_holm_p=cost_p[i], cost_holm_factor=cost_f[i]) for i, c in enumerate(done)]


def compare_strategies(runs: pd.DataFrame, reference: str = "baseline", order: list[str] | None = None,
                       seed: int = 0, margin: float = MARGIN, alpha: float = ALPHA) -> list[PairedComparison]:
    """Every other strategy of one experiment against `reference`, Holm-corrected across them.

    Raises:
        InputError: `reference` has no runs (the message lists the strategies that do).
    """
    order = order or list(dict.fromkeys(runs["strategy"]))
    if reference not in set(runs["strategy"]):
        raise InputError(f"reference strategy {reference!r} has no runs; strategies: {', '.join(order)}")
    ref = runs[runs["strategy"] == reference]
    return apply_holm([compare_paired(ref, runs[runs["strategy"] == s], strategy=s, reference_label=reference,
                                      seed=seed, margin=margin, alpha=alpha) for s in order if s != reference])


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
                    a_label: str = "A", margin: float = MARGIN) -> FolderComparison:
    """Compare B with A per shared strategy, after the controlled-variable guard (Holm across strategies).

    Args:
        a: The reference folder.
        b: The candidate folder.
        force: Compare even when the fixed variables differ (they are listed in the result).
        seed: Bootstrap seed.
        a_label: How A is named in the comparisons' reference label, e.g. "`baseline (A)`".
        margin: Non-inferiority margin.

    Raises:
        FixedVariablesDiffer: the fixed variables differ and `force` is false.
        InputError: the folders share no strategy.
    """
    differences = check_fixed_variables(a.manifest, b.manifest, force=force)
    shared = [s for s in b.strategies if s in a.strategies]
    if not shared:
        raise InputError(f"{a.path} and {b.path} share no strategy")
    comparisons = apply_holm([compare_paired(a.runs[a.runs["strategy"] == s], b.runs[b.runs["strategy"] == s],
                                             strategy=s, reference_label=f"{s} ({a_label})", seed=seed, margin=margin)
                              for s in shared])
    return FolderComparison(a, b, differences, comparisons,
                            [s for s in a.strategies if s not in shared], [s for s in b.strategies if s not in shared])


def _pts(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x * 100:+.1f}"


def _times(x: float) -> str:
    return "n/a" if math.isnan(x) else f"×{x:.2f}"


def _p(p: float) -> str:
    if math.isnan(p):
        return "n/a"
    return "< 0.0001" if p < 1e-4 else f"{p:.2g}" if p < 0.01 else f"{p:.3f}".rstrip("0").rstrip(".")


def _interval(low: float, high: float, fmt) -> str:
    return "[not estimable]" if math.isnan(low) else f"[{fmt(low)}, {fmt(high)}]"


def _why_not_estimable(c: PairedComparison) -> str:
    if c.tasks < 2:
        return "one task: no task-level interval"
    if not (c.tasks_better or c.tasks_worse):
        return "no task differs between the arms"
    return "every task differs by the same amount"


def completion_phrase(c: PairedComparison) -> str:
    """e.g. "non-inferior in completion (+12.5 pts [−3.1, +28.1], 97.5% CI, margin 5 pts)"."""
    low, high = c.difference_ci
    level = f"{c.confidence:.1%}".replace(".0%", "%")
    if math.isnan(low):
        figure = f"{_pts(c.difference)} pts, interval not estimable: {_why_not_estimable(c)}"
    else:
        figure = f"{_pts(c.difference)} pts {_interval(low, high, _pts)}, {level} CI"
    return f"**{c.verdict}** in completion ({figure}, margin {c.margin * 100:g} pts)"


def ratio_phrase(c: PairedComparison, which: Literal["tokens", "cost"]) -> str:
    """e.g. "**cheaper** in tokens (×0.44 [0.36, 0.54])"."""
    figure = c.tokens if which == "tokens" else c.cost
    assert figure is not None
    factor = c.token_holm_factor if which == "tokens" else c.cost_holm_factor
    low, high = figure.interval(1 - c.alpha / factor)
    span = "[not estimable]" if math.isnan(low) else f"[{low:.2f}, {high:.2f}]"
    return f"**{c.ratio_verdict(which)}** in {which} ({_times(figure.ratio)} {span})"


def verdict_line(c: PairedComparison) -> str:
    """One Markdown line: the ratio verdicts and the completion verdict with their intervals, then the
    task counts, the primary p, the design effect and the secondary McNemar figure."""
    head = ratio_phrase(c, "tokens")
    if c.cost is not None:
        head += ", " + ratio_phrase(c, "cost")
    dist = (f"tasks +{c.tasks_better}/−{c.tasks_worse} of {c.tasks}; p = {_p(c.p_value)} (task-level, "
            f"Holm-adjusted {_p(c.holm_p)})")
    deff = "" if math.isnan(c.design_effect) else f"; design effect {c.design_effect:.1f}"
    secondary = (f"; secondary, repeats as independent: McNemar p = {_p(c.mcnemar_p)} "
                 f"(pairs +{c.only_candidate}/−{c.only_reference} of {c.pairs})")
    return f"`{c.strategy}` vs `{c.reference}`: {head} and {completion_phrase(c)} — {dist}{deff}{secondary}"


def accounting_lines(comparisons: list[PairedComparison]) -> list[str]:
    """Warnings for runs left out: harness errors and runs without a partner, each named."""
    lines = []
    errors = sorted({e for c in comparisons for e in c.excluded})
    if errors:
        lines.append(f"{len(errors)} harness_error runs were left out of every rate and comparison: "
                     + ", ".join(f"`{e}`" for e in errors))
    for c in comparisons:
        if c.unpaired:
            lines.append(f"`{c.strategy}` vs `{c.reference}`: {len(c.unpaired)} runs without a partner were not "
                         "compared: " + ", ".join(f"`{u}`" for u in c.unpaired))
    return lines


def comparison_frame(comparisons: list[PairedComparison]) -> pd.DataFrame:
    """The comparisons as a display table (formatted strings)."""
    rows = []
    for c in comparisons:
        row = {
            "strategy": c.strategy, "vs": c.reference, "tasks": c.tasks, "pairs": c.pairs,
            "rate": f"{c.rate_candidate:.1%} vs {c.rate_reference:.1%}",
            "Δ completion (pts)": f"{_pts(c.difference)} {_interval(*c.difference_ci, _pts)}",
            "CI level": f"{c.confidence:.1%}",
            "p (task-level, Holm)": _p(c.holm_p),
            "design effect": "n/a" if math.isnan(c.design_effect) else f"{c.design_effect:.1f}",
            "MDD (pts)": "n/a" if math.isnan(c.mdd) else "∞" if math.isinf(c.mdd) else f"{c.mdd * 100:.1f}",
            "verdict": c.verdict,
            "token ratio": f"{_times(c.token_ratio)} {_interval(*c.token_ratio_ci, lambda v: f'{v:.2f}')}",
            "tokens": c.ratio_verdict("tokens"),
            "McNemar p (secondary)": _p(c.mcnemar_p),
        }
        if c.cost is not None:
            row["cost ratio"] = f"{_times(c.cost.ratio)} " + _interval(
                *c.cost.interval(1 - c.alpha / c.cost_holm_factor), lambda v: f"{v:.2f}")
            row["cost"] = c.ratio_verdict("cost")
        rows.append(row)
    return pd.DataFrame(rows)


def comparison_csv(comparisons: list[PairedComparison]) -> pd.DataFrame:
    """The comparisons as numbers (comparisons.csv): one row per candidate."""
    rows = []
    for c in comparisons:
        low, high = c.difference_ci
        tlow, thigh = c.token_ratio_ci
        row = {
            "strategy": c.strategy, "reference": c.reference, "tasks": c.tasks, "pairs": c.pairs,
            "rate_candidate": c.rate_candidate, "rate_reference": c.rate_reference,
            "difference": c.difference, "difference_low": low, "difference_high": high,
            "confidence": c.confidence, "se_task_clustered": c.completion.se, "se_independent": c.completion.se_iid,
            "design_effect": c.design_effect, "p_task_level": c.p_value, "p_holm": c.holm_p,
            "tasks_better": c.tasks_better, "tasks_worse": c.tasks_worse,
            "pairs_only_candidate": c.only_candidate, "pairs_only_reference": c.only_reference,
            "mcnemar_p": c.mcnemar_p, "mdd": c.mdd, "margin": c.margin, "verdict": c.verdict,
            "tokens_candidate": c.tokens.candidate, "tokens_reference": c.tokens.reference,
            "token_ratio": c.token_ratio, "token_ratio_low": tlow, "token_ratio_high": thigh,
            "token_p_holm": c.token_holm_p, "token_verdict": c.ratio_verdict("tokens"),
            "harness_errors": len(c.excluded), "unpaired": len(c.unpaired),
        }
        if c.cost is not None:
            clow, chigh = c.cost.interval(1 - c.alpha / c.cost_holm_factor)
            row.update({"cost_candidate": c.cost.candidate, "cost_reference": c.cost.reference,
                        "cost_ratio": c.cost.ratio, "cost_ratio_low": clow, "cost_ratio_high": chigh,
                        "cost_p_holm": c.cost_holm_p, "cost_verdict": c.ratio_verdict("cost")})
        rows.append(row)
    return pd.DataFrame(rows)
