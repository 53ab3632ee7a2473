"""The report's first screen: one row per strategy against the reference, verdicts first."""

from __future__ import annotations

import math

import pandas as pd

from ctxbench.harness.config.sequential import SequentialRecord
from ctxbench.reports.metrics import NOTHING_MEASURED, Completion, PairedComparison, Ratio

__all__ = ["VERDICT_COLOURS", "verdict_frame", "verdict_caption", "detectable"]

VERDICT_COLOURS: dict[str, str] = {
    "better": "#2ca02c", "cheaper": "#2ca02c",
    "worse": "#d62728", "dearer": "#d62728",
    "non-inferior": "#1f77b4", "same": "#1f77b4", "equivalent": "#1f77b4",
    "inconclusive": "#7f7f7f", "too few tasks": "#7f7f7f", "futile": "#7f7f7f", "undecided": "#7f7f7f",
    NOTHING_MEASURED: "#7f7f7f",
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


def _bound(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.2f}"


def _ratio_cell(r: Ratio) -> str:
    low, high = r.ci
    interval = "" if math.isnan(low) else f" [{_bound(low)}, {_bound(high)}]"
    return f"{_times(r.ratio)}{interval} (typical task {_times(r.typical)})"


def detectable(mdd: float) -> str:
    """The smallest difference a design detects, in words: never more than 100 pts, which no completion
    difference can exceed."""
    if math.isnan(mdd):
        return "n/a (no variance seen)"
    if math.isinf(mdd):
        return "nothing (too few tasks)"
    if mdd > 1:
        return "nothing up to 100 pts"
    return f"±{mdd * 100:.1f} pts"


def _detectable(m: Completion) -> str:
    return detectable(m.mdd)


def sequential_cells(record: SequentialRecord | None) -> dict[str, tuple[str, str]]:
    """Per candidate of a finished sequential experiment, its completion verdict and "Δ [confidence
    sequence]" cell: the rounds decided completion, and the fixed-design test does not hold after them."""
    if record is None or not record.finished or record.against is not None:
        return {}
    estimates = {look.strategy: look.estimate for rnd in record.rounds for look in rnd.arms if look.estimate is not None}
    out: dict[str, tuple[str, str]] = {}
    for d in record.decisions:
        estimate = estimates.get(d.strategy, math.nan)
        out[d.strategy] = (d.verdict, f"{_pts(estimate)} [{_pts(d.low)}, {_pts(d.high)}]")
    return out


def verdict_frame(comparisons: list[PairedComparison], regimes: dict[str, str] | None = None,
                  sequential: SequentialRecord | None = None) -> pd.DataFrame:
    """One row per candidate: completion difference and its verdict, token and cost ratios and theirs,
    whether the cost verdict holds under every pricing regime (`regimes`: strategy -> `holds` or which
    flip it), and the smallest completion difference the design detects (80% power). A finished
    sequential experiment (`sequential`) gives the completion verdict and interval of its rounds (the
    anytime-valid confidence sequence). Verdict cells hold the bare verdict word (the HTML report
    colours it)."""
    rounds = sequential_cells(sequential)
    rows = []
    for c in comparisons:
        m = c.completion
        verdict, cell = rounds.get(c.strategy, (m.verdict, _completion_cell(m)))
        row = {
            "strategy": c.strategy,
            "completion": verdict,
            "Δ completion, pts [CI]": cell,
            "tokens": c.tokens.verdict,
            "total tokens ratio [CI]": _ratio_cell(c.tokens),
        }
        if c.cost is not None:
            row["cost"] = c.cost.verdict
            row["total cost ratio [CI]"] = _ratio_cell(c.cost)
            if regimes:
                row["cost under every pricing regime"] = regimes.get(c.strategy, "–")
        row["design detects"] = _detectable(m)
        rows.append(row)
    return pd.DataFrame(rows)


def verdict_caption(comparisons: list[PairedComparison], reference: str,
                    sequential: SequentialRecord | None = None) -> str:
    """The line under the verdict table: what was compared with what, and the interval levels."""
    tasks = max((c.tasks for c in comparisons), default=0)
    pairs = max((c.pairs for c in comparisons), default=0)
    if sequential_cells(sequential):
        assert sequential is not None
        intervals = (f"completion: the verdict of the rounds and its anytime-valid confidence sequence "
                     f"({1 - sequential.arm_alpha:.1%}, Bonferroni over the candidates), which holds however early "
                     "the rounds stopped; the other intervals Holm-adjusted")
    else:
        level = min((c.completion.ci_confidence for c in comparisons), default=0.95)
        intervals = (f"intervals Holm-adjusted (completion at least {level:.1%}: the interval of the verdict, the "
                     "sign-flip one for better or worse, else the bounded-mean one)")
    return (f"Each strategy against `{reference}` on {tasks} tasks ({pairs} paired runs); {intervals}; ratios are "
            f"candidate ÷ `{reference}`, of the totals (the bill), the typical task's ratio beside them; “design "
            "detects”: the completion difference this design finds "
            "with 80% power. How each verdict is decided: below.")
