"""The report's first screen: one row per strategy against the reference, verdicts first."""

from __future__ import annotations

import math

import pandas as pd

from ctxbench.reports.metrics import Completion, PairedComparison, Ratio

__all__ = ["VERDICT_COLOURS", "verdict_frame", "verdict_caption"]

VERDICT_COLOURS: dict[str, str] = {
    "better": "#2ca02c", "cheaper": "#2ca02c",
    "worse": "#d62728", "dearer": "#d62728",
    "non-inferior": "#1f77b4", "same": "#1f77b4", "equivalent": "#1f77b4",
    "inconclusive": "#7f7f7f", "too few tasks": "#7f7f7f",
}
"""The colour of each verdict word, in the HTML report and in the forest plot."""


def _pts(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{x * 100:+.1f}"


def _times(x: float) -> str:
    return "n/a" if math.isnan(x) else f"×{x:.2f}"


def _completion_cell(m: Completion) -> str:
    low, high = m.ci
    interval = "" if math.isnan(low) else f" [{_pts(low)}, {_pts(high)}]"
    return f"{_pts(m.difference)}{interval}"


def _ratio_cell(r: Ratio) -> str:
    low, high = r.ci
    interval = "" if math.isnan(low) else f" [{low:.2f}, {high:.2f}]"
    return f"{_times(r.ratio)}{interval}"


def _detectable(m: Completion) -> str:
    if math.isnan(m.mdd):
        return "n/a (no variance seen)"
    if math.isinf(m.mdd):
        return "nothing (too few tasks)"
    return f"±{m.mdd * 100:.1f} pts"


def verdict_frame(comparisons: list[PairedComparison], regimes: dict[str, str] | None = None) -> pd.DataFrame:
    """One row per candidate: completion difference and its verdict, token and cost ratios and theirs,
    whether the cost verdict holds under every pricing regime (`regimes`: strategy -> `holds` or which
    flip it), and the smallest completion difference the design detects (80% power). Verdict cells
    hold the bare verdict word (the HTML report colours it)."""
    rows = []
    for c in comparisons:
        m = c.completion
        row = {
            "strategy": c.strategy,
            "completion": m.verdict,
            "Δ completion, pts [CI]": _completion_cell(m),
            "tokens": c.tokens.verdict,
            "token ratio [CI]": _ratio_cell(c.tokens),
        }
        if c.cost is not None:
            row["cost"] = c.cost.verdict
            row["cost ratio [CI]"] = _ratio_cell(c.cost)
            if regimes:
                row["cost under every pricing regime"] = regimes.get(c.strategy, "–")
        row["design detects"] = _detectable(m)
        rows.append(row)
    return pd.DataFrame(rows)


def verdict_caption(comparisons: list[PairedComparison], reference: str) -> str:
    """The line under the verdict table: what was compared with what, and the interval levels."""
    tasks = max((c.tasks for c in comparisons), default=0)
    pairs = max((c.pairs for c in comparisons), default=0)
    level = min((c.completion.confidence for c in comparisons), default=0.95)
    return (f"Each strategy against `{reference}` on {tasks} tasks ({pairs} paired runs); intervals "
            f"Holm-adjusted (completion at least {level:.1%}); ratios are candidate ÷ `{reference}`; "
            "“design detects”: the completion difference this design finds with 80% power. "
            "How each verdict is decided: below.")
