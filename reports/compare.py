"""Paired comparisons on (task, repeat), with the task as the unit of inference.

A candidate is paired with a reference on (task, repeat). The primary figure for completion is the
mean over tasks of the per-task mean difference, with the exact sign-flip randomization test over
tasks and its test-inverted interval (ctxbench.reports.exact); the exact McNemar test on the (task,
repeat) pairs is kept as a secondary figure that treats repeats as independent. Non-inferiority and
equivalence rest on the bounded-mean test of the same per-task differences (ctxbench.reports.bounded).
Token and cost ratios are ratios of totals (the bill), with the sign-flip test of the per-task totals.
Verdicts come from those tests, at the level Holm's correction gives the strategy when several are
compared with one reference: each metric's record (ctxbench.reports.metrics) decides its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import pandas as pd

from ctxbench.harness.errors import InputError
from ctxbench.reports.fixed import FixedDifference, check_fixed_variables
from ctxbench.reports.loading import ResultsFolder
from ctxbench.reports.metrics import (ALPHA, MARGIN, SAME_RATIO, Completion, CostVerdict, PairedComparison, Ratio,
                                      Verdict, with_holm)
from ctxbench.reports.exact import ratio_sign_flip, sign_flip
from ctxbench.reports.stats import clustered_mean, holm, mcnemar_exact, variance_parts
from ctxbench.reports.summary import called_no_tool, split_harness_errors
from ctxbench.reports.verdicts import (accounting_lines, comparison_csv, comparison_frame, completion_phrase,
                                       ratio_phrase, task_phrase, verdict_line)

__all__ = ["PairedComparison", "Completion", "Ratio", "Verdict", "CostVerdict", "compare_paired",
           "compare_strategies", "apply_holm", "FolderComparison", "compare_folders", "verdict_line",
           "completion_phrase", "ratio_phrase", "task_phrase", "accounting_lines", "comparison_frame",
           "comparison_csv", "ALPHA", "MARGIN", "SAME_RATIO"]


def _label(row: pd.Series) -> str:
    return f"{row['strategy']} {row['task_id']}#{row['repeat']}"


def _per_task(values: np.ndarray, tasks: np.ndarray) -> pd.Series:
    return pd.Series(values).groupby(tasks).mean()


def _ratio(pairs: pd.DataFrame, metric: Literal["tokens", "cost"], seed: int, alpha: float) -> Ratio:
    column = "total_tokens" if metric == "tokens" else "cost_usd"
    ref = pairs[f"{column}_ref"].to_numpy(dtype=float)
    cand = pairs[f"{column}_cand"].to_numpy(dtype=float)
    tasks = pairs["task_id"].to_numpy()
    ref_t = pd.Series(ref).groupby(tasks).sum().to_numpy()
    cand_t = pd.Series(cand).groupby(tasks).sum().to_numpy()
    return Ratio(metric, float(ref.mean()), float(cand.mean()), len(ref_t), ratio_sign_flip(ref_t, cand_t, seed),
                 alpha=alpha)


def _completion(pairs: pd.DataFrame, margin: float, alpha: float, seed: int) -> Completion:
    ref = pairs["resolved_ref"].to_numpy(dtype=float)
    cand = pairs["resolved_cand"].to_numpy(dtype=float)
    tasks = pairs["task_id"].to_numpy()
    diff = cand - ref
    per_task = _per_task(diff, tasks)
    return Completion(rate_reference=float(ref.mean()), rate_candidate=float(cand.mean()),
                      tasks_better=int((per_task > 0).sum()), tasks_worse=int((per_task < 0).sum()),
                      mean=clustered_mean(diff, tasks), test=sign_flip(per_task.to_numpy(), seed),
                      parts=variance_parts(diff, tasks), margin=margin, alpha=alpha)


def _has_cost(runs: pd.DataFrame) -> bool:
    return "cost_usd" in runs.columns and bool(runs["cost_usd"].notna().all())


def compare_paired(reference: pd.DataFrame, candidate: pd.DataFrame, *, strategy: str, reference_label: str,
                   seed: int = 0, margin: float = MARGIN, alpha: float = ALPHA) -> PairedComparison:
    """Pair two sets of runs on (task_id, repeat) and compare them, the task as the unit.

    harness_error runs are left out of both arms (and named in `excluded`); runs left without a
    partner are named in `unpaired`. When no run of one of the arms called a tool, every verdict is
    `NOTHING_MEASURED`.

    Args:
        reference: Runs of the reference (one strategy's rows of a runs frame).
        candidate: Runs of the candidate.
        strategy: Label of the candidate.
        reference_label: Label of the reference.
        seed: Seed of the sampled sign patterns (more tasks than EXACT_TASKS).
        margin: Non-inferiority margin (proportion).
        alpha: Significance level before any Holm correction.

    Raises:
        InputError: the two sets share no (task, repeat) pair.
    """
    unmeasured = called_no_tool(reference) or called_no_tool(candidate)
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
    ref = pairs["resolved_ref"].to_numpy(dtype=float) == 1
    cand = pairs["resolved_cand"].to_numpy(dtype=float) == 1
    b, c, both = int((ref & ~cand).sum()), int((~ref & cand).sum()), int((ref & cand).sum())
    return PairedComparison(
        strategy=strategy, reference=reference_label, pairs=len(pairs), tasks=int(pairs["task_id"].nunique()),
        both=both, only_reference=b, only_candidate=c, neither=len(pairs) - both - b - c, mcnemar_p=mcnemar_exact(b, c),
        completion=replace(_completion(pairs, margin, alpha, seed), unmeasured=unmeasured),
        tokens=replace(_ratio(pairs, "tokens", seed, alpha), unmeasured=unmeasured),
        cost=replace(_ratio(pairs, "cost", seed, alpha), unmeasured=unmeasured) if with_cost else None,
        excluded=excluded, unpaired=unpaired, seed_mismatches=int((pairs["seed_ref"] != pairs["seed_cand"]).sum()),
    )


def apply_holm(comparisons: list[PairedComparison]) -> list[PairedComparison]:
    """Holm's correction across comparisons with one reference, one family each for the completion
    difference, completion non-inferiority, tokens and cost."""
    if not comparisons:
        return comparisons
    m = len(comparisons)
    completion_p, completion_k = holm([c.completion.p_value for c in comparisons])
    ni_p, ni_k = holm([c.completion.ni_p for c in comparisons])
    tokens_p, tokens_k = holm([c.tokens.p_value for c in comparisons])
    cost_p, cost_k = holm([c.cost.p_value if c.cost else math.nan for c in comparisons])
    out = []
    for i, c in enumerate(comparisons):
        completion = replace(with_holm(c.completion, completion_p[i], completion_k[i], m),
                             ni_holm_p=ni_p[i], ni_holm_factor=ni_k[i])
        out.append(replace(c, completion=completion, tokens=with_holm(c.tokens, tokens_p[i], tokens_k[i], m),
                           cost=None if c.cost is None else with_holm(c.cost, cost_p[i], cost_k[i], m)))
    return out


def compare_strategies(runs: pd.DataFrame, reference: str = "baseline", order: list[str] | None = None,
                       seed: int = 0, margin: float = MARGIN, alpha: float = ALPHA) -> list[PairedComparison]:
    """Every other strategy of one experiment against `reference`, Holm-corrected across them. A strategy
    with only harness_error runs is in no comparison (none at all when it is the reference); the report
    names it.

    Raises:
        InputError: `reference` has no runs (the message lists the strategies that do).
    """
    order = order or list(dict.fromkeys(runs["strategy"]))
    if reference not in set(runs["strategy"]):
        raise InputError(f"reference strategy {reference!r} has no runs; strategies: {', '.join(order)}")
    countable, _ = split_harness_errors(runs)
    ref = runs[runs["strategy"] == reference]
    if reference not in set(countable["strategy"]):
        return []
    return apply_holm([compare_paired(ref, runs[runs["strategy"] == s], strategy=s, reference_label=reference,
                                      seed=seed, margin=margin, alpha=alpha)
                       for s in order if s != reference and s in set(countable["strategy"])])


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
