"""Paired comparisons in words and tables: the verdict line, the display table and comparisons.csv."""

from __future__ import annotations

import math
from typing import Callable

import pandas as pd

from ctxbench.reports.metrics import Completion, PairedComparison, Ratio

__all__ = ["completion_phrase", "ratio_phrase", "task_phrase", "verdict_line", "accounting_lines",
           "comparison_frame", "comparison_csv"]


def _pts(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x * 100:+.1f}"


def _times(x: float) -> str:
    return "n/a" if math.isnan(x) else f"×{x:.2f}"


def _two(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.2f}"


def _p(p: float) -> str:
    if math.isnan(p):
        return "n/a"
    return "< 0.0001" if p < 1e-4 else f"{p:.2g}" if p < 0.01 else f"{p:.3f}".rstrip("0").rstrip(".")


def _interval(low: float, high: float, fmt: Callable[[float], str]) -> str:
    return "[not estimable]" if math.isnan(low) else f"[{fmt(low)}, {fmt(high)}]"


def _level(confidence: float) -> str:
    return f"{confidence:.1%}".replace(".0%", "%")


def _why_not_estimable(c: PairedComparison) -> str:
    m = c.completion
    if c.tasks < 2:
        return "one task: no task-level interval"
    if not (m.tasks_better or m.tasks_worse):
        return "no task differs between the arms"
    if m.test.constant:
        return "every task differs by the same amount"
    return f"too few tasks ({c.tasks}) for a {_level(m.confidence)} interval"


def completion_phrase(c: PairedComparison) -> str:
    """e.g. "**non-inferior** in completion (+12.5 pts [−3.1, +28.1], 90% CI, margin 5 pts)": the interval
    the verdict rests on, at its level."""
    m = c.completion
    low, high = m.ci
    if math.isnan(low):
        figure = f"{_pts(m.difference)} pts, interval not estimable: {_why_not_estimable(c)}"
    else:
        figure = f"{_pts(m.difference)} pts {_interval(low, high, _pts)}, {_level(m.ci_confidence)} CI"
    return f"**{m.verdict}** in completion ({figure}, margin {m.margin * 100:g} pts)"


_SPENT = {"tokens": "no tokens", "cost": "nothing"}


def _why_no_ratio(figure: Ratio, reference: str, candidate: str) -> str:
    if not figure.reference_spent:
        return f"`{reference}` recorded {_SPENT[figure.metric]}"
    if figure.tasks < 2:
        return "one task"
    return f"too few tasks ({figure.tasks})"


def _ratio_figure(figure: Ratio, reference: str, candidate: str) -> str:
    low, _ = figure.ci
    if math.isnan(low):
        head = f"total {_times(figure.ratio)}, interval not estimable: {_why_no_ratio(figure, reference, candidate)}"
    else:
        head = f"total {_times(figure.ratio)} {_interval(*figure.ci, _two)}, {_level(figure.confidence)} CI"
    if figure.reference_spent and not figure.candidate_spent:
        return f"{head}; `{candidate}` recorded {_SPENT[figure.metric]}"
    return f"{head}; typical task {_times(figure.typical)}"


def ratio_phrase(figure: Ratio, reference: str = "the reference", candidate: str = "the candidate") -> str:
    """e.g. "**cheaper** in total tokens (total ×0.44 [0.36, 0.54], 95% CI; typical task ×0.41)": the
    verdict on the ratio of totals (the bill), the typical task's ratio (geometric mean) beside it."""
    return f"**{figure.verdict}** in total {figure.metric} ({_ratio_figure(figure, reference, candidate)})"


def task_phrase(c: PairedComparison) -> str:
    """e.g. "tasks +1/−0 of 5; p = 0.374 (task-level sign-flip, Holm-adjusted 1)"."""
    m = c.completion
    return (f"tasks +{m.tasks_better}/−{m.tasks_worse} of {c.tasks}; p = {_p(m.p_value)} (task-level sign-flip, "
            f"Holm-adjusted {_p(m.holm_p)})")


def verdict_line(c: PairedComparison) -> str:
    """One Markdown line: the ratio verdicts and the completion verdict with their intervals, then the
    task counts, the primary p, the design effect and the secondary McNemar figure."""
    head = ratio_phrase(c.tokens, c.reference, c.strategy) + (
        "" if c.cost is None else ", " + ratio_phrase(c.cost, c.reference, c.strategy))
    deff = c.completion.design_effect
    secondary = (f"; secondary, repeats as independent: McNemar p = {_p(c.mcnemar_p)} "
                 f"(pairs +{c.only_candidate}/−{c.only_reference} of {c.pairs})")
    return (f"`{c.strategy}` vs `{c.reference}`: {head} and {completion_phrase(c)} — {task_phrase(c)}"
            f"{'' if math.isnan(deff) else f'; design effect {deff:.1f}'}{secondary}")


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


def _mdd(m: Completion) -> str:
    return "n/a" if math.isnan(m.mdd) else "∞" if math.isinf(m.mdd) else "> 100" if m.mdd > 1 else f"{m.mdd * 100:.1f}"


def comparison_frame(comparisons: list[PairedComparison]) -> pd.DataFrame:
    """The comparisons as a display table (formatted strings)."""
    rows = []
    for c in comparisons:
        m = c.completion
        row = {
            "strategy": c.strategy, "vs": c.reference, "tasks": c.tasks, "pairs": c.pairs,
            "rate": f"{m.rate_candidate:.1%} vs {m.rate_reference:.1%}",
            "Δ completion (pts)": f"{_pts(m.difference)} {_interval(*m.ci, _pts)}",
            "CI level": f"{m.ci_confidence:.1%}",
            "p (task-level, Holm)": _p(m.holm_p),
            "design effect": "n/a" if math.isnan(m.design_effect) else f"{m.design_effect:.1f}",
            "MDD (pts)": _mdd(m),
            "verdict": m.verdict,
            "token ratio (total)": f"{_times(c.tokens.ratio)} {_interval(*c.tokens.ci, _two)}",
            "token ratio (typical task)": _times(c.tokens.typical),
            "token CI level": f"{c.tokens.confidence:.1%}",
            "tokens": c.tokens.verdict,
            "McNemar p (secondary)": _p(c.mcnemar_p),
        }
        if c.cost is not None:
            row["cost ratio (total)"] = f"{_times(c.cost.ratio)} {_interval(*c.cost.ci, _two)} ({c.cost.confidence:.1%})"
            row["cost ratio (typical task)"] = _times(c.cost.typical)
            row["cost"] = c.cost.verdict
        rows.append(row)
    return pd.DataFrame(rows)


def _ratio_columns(figure: Ratio, prefix: str, singular: str) -> dict[str, object]:
    low, high = figure.ci
    return {f"{singular}_candidate": figure.candidate, f"{singular}_reference": figure.reference,
            f"{prefix}_ratio": figure.ratio, f"{prefix}_ratio_low": low, f"{prefix}_ratio_high": high,
            f"{prefix}_ratio_typical": figure.typical,
            f"{prefix}_confidence": figure.confidence,
            f"{prefix}_p_holm": figure.holm_p, f"{prefix}_verdict": figure.verdict}


def comparison_csv(comparisons: list[PairedComparison]) -> pd.DataFrame:
    """The comparisons as numbers (comparisons.csv): one row per candidate."""
    rows = []
    for c in comparisons:
        m = c.completion
        low, high = m.ci
        row = {
            "strategy": c.strategy, "reference": c.reference, "tasks": c.tasks, "pairs": c.pairs,
            "rate_candidate": m.rate_candidate, "rate_reference": m.rate_reference,
            "difference": m.difference, "difference_low": low, "difference_high": high,
            "confidence": m.ci_confidence, "bounds_low": m.bounds[0], "bounds_high": m.bounds[1],
            "bounds_confidence": m.bounds_confidence,
            "se_task_clustered": m.mean.se, "se_independent": m.mean.se_iid,
            "design_effect": m.design_effect, "p_task_level": m.p_value, "p_holm": m.holm_p,
            "p_noninferior": m.ni_p, "p_noninferior_holm": m.ni_holm_p, "p_equivalence": m.equivalence_p,
            "tasks_better": m.tasks_better, "tasks_worse": m.tasks_worse,
            "pairs_only_candidate": c.only_candidate, "pairs_only_reference": c.only_reference,
            "mcnemar_p": c.mcnemar_p, "mdd": m.mdd, "margin": m.margin, "verdict": m.verdict,
            **_ratio_columns(c.tokens, "token", "tokens"),
            "harness_errors": len(c.excluded), "unpaired": len(c.unpaired),
        }
        if c.cost is not None:
            row.update(_ratio_columns(c.cost, "cost", "cost"))
        rows.append(row)
    return pd.DataFrame(rows)
