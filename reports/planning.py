"""Power planning from a pilot: the design's minimum detectable difference at the task level, and the
tasks or repeats a given difference would need."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from ctxbench.harness.errors import InputError
from ctxbench.reports.loading import ResultsFolder
from ctxbench.reports.stats import (VarianceParts, min_detectable_difference, repeats_needed, tasks_needed,
                                    variance_parts)
from ctxbench.reports.summary import split_harness_errors

__all__ = ["PlanRow", "plan_rows", "plan_frame", "plan_text"]


@dataclass(frozen=True)
class PlanRow:
    """What one candidate-vs-reference pilot says about the design."""

    strategy: str
    reference: str
    tasks: int
    repeats: float
    """Harmonic mean of the paired repeats per task."""
    parts: VarianceParts
    difference: float
    """The difference to detect (proportion)."""
    alpha: float
    power: float

    @property
    def mdd(self) -> float:
        """Minimum detectable difference of the pilot's own design (NaN: no variance seen)."""
        return min_detectable_difference(self.parts, alpha=self.alpha, power=self.power)

    @property
    def tasks_needed(self) -> int | None:
        """Tasks needed at the pilot's repeats (None: beyond 100,000 or not estimable)."""
        return tasks_needed(self.parts, self.difference, round(self.repeats), self.alpha, self.power)

    @property
    def repeats_needed(self) -> int | None:
        """Repeats per task needed with the pilot's tasks (None: no number of repeats is enough)."""
        return repeats_needed(self.parts, self.difference, self.tasks, self.alpha, self.power)

    @property
    def estimable(self) -> bool:
        return self.parts.task_mean_variance(self.repeats) > 0


def plan_rows(runs: pd.DataFrame, reference: str, difference: float, order: list[str] | None = None,
              alpha: float = 0.05, power: float = 0.8) -> list[PlanRow]:
    """One plan per candidate, from the pilot's paired differences (harness_error runs left out).

    Raises:
        InputError: the reference has no runs, or there is no other strategy to pair it with.
    """
    runs, _ = split_harness_errors(runs)
    order = order or list(dict.fromkeys(runs["strategy"]))
    if reference not in order:
        raise InputError(f"reference strategy {reference!r} has no runs; strategies: {', '.join(order)}")
    if len(order) < 2:
        raise InputError(f"the pilot has only `{reference}`: planning needs a second strategy to pair it with")
    if not 0 < difference < 1:
        raise InputError(f"the difference to detect must be between 0 and 100 points, got {difference * 100:g}")
    ref = runs[runs["strategy"] == reference][["task_id", "repeat", "resolved"]]
    rows = []
    for s in order:
        if s == reference:
            continue
        cand = runs[runs["strategy"] == s][["task_id", "repeat", "resolved"]]
        pairs = ref.merge(cand, on=["task_id", "repeat"], suffixes=("_ref", "_cand"))
        if pairs.empty:
            continue
        diff = pairs["resolved_cand"].to_numpy(dtype=float) - pairs["resolved_ref"].to_numpy(dtype=float)
        parts = variance_parts(diff, pairs["task_id"].to_numpy())
        rows.append(PlanRow(s, reference, parts.tasks, parts.repeats, parts, difference, alpha, power))
    return rows


def _count(n: int | None, unit: str) -> str:
    return f"more than {'100,000' if unit == 'tasks' else '1,000'}" if n is None else f"{n:,}"


def plan_frame(rows: list[PlanRow]) -> pd.DataFrame:
    """The plans as a display table."""
    out = []
    for r in rows:
        if not r.estimable:
            out.append({"strategy": r.strategy, "vs": r.reference, "tasks × repeats": f"{r.tasks} × {r.repeats:g}",
                        "sd between tasks (pts)": "0", "sd between repeats (pts)": "0", "MDD now (pts)": "n/a",
                        f"tasks for {r.difference * 100:g} pts": "n/a", f"repeats for {r.difference * 100:g} pts": "n/a"})
            continue
        mdd = r.mdd
        out.append({
            "strategy": r.strategy, "vs": r.reference, "tasks × repeats": f"{r.tasks} × {r.repeats:g}",
            "sd between tasks (pts)": f"{math.sqrt(r.parts.between) * 100:.1f}",
            "sd between repeats (pts)": f"{math.sqrt(r.parts.within) * 100:.1f}",
            "MDD now (pts)": "∞" if math.isinf(mdd) else f"{mdd * 100:.1f}",
            f"tasks for {r.difference * 100:g} pts": _count(r.tasks_needed, "tasks") + f" (× {round(r.repeats)} repeats)",
            f"repeats for {r.difference * 100:g} pts": _count(r.repeats_needed, "repeats") + f" (× {r.tasks} tasks)",
        })
    return pd.DataFrame(out)


def plan_sentence(r: PlanRow) -> str:
    """One line answering "how many runs do I need to detect this difference?"."""
    pts = f"{r.difference * 100:g} pts"
    if not r.estimable:
        return (f"`{r.strategy}` vs `{r.reference}`: the pilot shows no variation in the paired outcomes "
                f"({r.tasks} tasks): it cannot say what {pts} would need — run more tasks or repeats first.")
    parts = [f"`{r.strategy}` vs `{r.reference}`: this design ({r.tasks} tasks × {r.repeats:g} repeats) detects "
             f"{'no difference' if math.isinf(r.mdd) else f'{r.mdd * 100:.1f} pts'} with {r.power:.0%} power "
             f"at α = {r.alpha:g}"]
    t = r.tasks_needed
    parts.append(f"{pts} needs {_count(t, 'tasks')} tasks × {round(r.repeats)} repeats"
                 + ("" if t is None else f" = {t * round(r.repeats):,} runs per strategy"))
    n = r.repeats_needed
    if n is None:
        parts.append(f"with these {r.tasks} tasks no number of repeats is enough (the tasks themselves differ)")
    else:
        parts.append(f"or {r.tasks} tasks × {n} repeats = {r.tasks * n:,} runs per strategy")
    return "; ".join(parts) + "."


def plan_text(folder: ResultsFolder, difference: float, reference: str = "baseline", alpha: float = 0.05,
              power: float = 0.8) -> str:
    """What `ctxbench plan` prints: one sentence per candidate and how the figures were obtained."""
    rows = plan_rows(folder.runs, reference, difference, folder.strategies, alpha, power)
    if not rows:
        raise InputError(f"{folder.path}: no strategy shares a (task, repeat) pair with `{reference}`")
    lines = [f"Pilot `{folder.path}` ({folder.manifest.name}); to detect {difference * 100:g} pts of completion "
             f"with {power:.0%} power at α = {alpha:g} (two-sided, task-level paired t test):", ""]
    lines += [f"- {plan_sentence(r)}" for r in rows]
    lines += ["", "The variance of the paired difference is split into a part between tasks and a part between "
              "repeats of one task (one-way random effects); more repeats shrink only the second. Planning from a "
              "small pilot is itself uncertain: treat the counts as a floor."]
    if folder.manifest.simulated:
        lines.insert(0, "Figures from the simulated model (a stand-in for a model, not a model).")
    return "\n".join(lines) + "\n"
