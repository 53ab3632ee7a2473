"""Power planning from a pilot: the design's minimum detectable difference at the task level, and the
tasks or repeats a given difference would need."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ctxbench.harness.errors import InputError
from ctxbench.reports.exact import expected_size
from ctxbench.reports.loading import ResultsFolder
from ctxbench.reports.power import design_power
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
    family: int = 1
    """Strategies compared with the reference: the verdicts test at α / family (Holm's first step), and so
    does the plan."""
    per_task: np.ndarray | None = field(default=None, repr=False, compare=False)
    """The pilot's per-task mean differences: the sign-flip test on values like these is discrete, and
    the plan counts only the size it can reach (None: planned at `level` itself)."""

    @property
    def level(self) -> float:
        """The two-sided level the plan is made at: α / family."""
        return self.alpha / self.family

    def size(self, tasks: int) -> float:
        """The size the verdicts' sign-flip test is expected to reach at `level` with `tasks` tasks whose
        per-task differences are like the pilot's (its mean attained size over task-level resamples of
        the pilot: at most `level`)."""
        if self.per_task is None or self.per_task.size == 0:
            return self.level
        return expected_size(self.per_task, tasks, self.level)

    @property
    def mdd(self) -> float:
        """Minimum detectable difference of the pilot's own design at the test's attained size (NaN: no
        variance seen or not identifiable, inf: too few tasks)."""
        return min_detectable_difference(self.parts, alpha=self.level, power=self.power, size=self.size(self.tasks))

    def power_at(self, difference: float) -> float:
        """The power the pilot's own design has to detect `difference` (NaN where `mdd` is NaN)."""
        var = self.parts.task_mean_variance(self.repeats)
        if math.isnan(var) or var <= 0:
            return math.nan
        return design_power(math.sqrt(var), difference, self.tasks, self.level, self.size(self.tasks))

    @property
    def tasks_needed(self) -> int | None:
        """Tasks needed at the pilot's repeats (None: beyond 100,000 or not identifiable)."""
        return tasks_needed(self.parts, self.difference, round(self.repeats), self.level, self.power, size=self.size)

    @property
    def repeats_needed(self) -> int | None:
        """Repeats per task needed with the pilot's tasks (None: no number of repeats is enough, or the pilot
        cannot split its variance into tasks and repeats). At the size the pilot's own test reaches: more
        repeats tie fewer tasks, so this errs on the side of more."""
        return repeats_needed(self.parts, self.difference, self.tasks, self.level, self.power,
                              size=self.size(self.tasks))

    @property
    def identifiable(self) -> bool:
        """The pilot estimates the variance of a task's mean at its own repeats (two tasks or more)."""
        return not math.isnan(self.parts.task_mean_variance(self.repeats))

    @property
    def split_identifiable(self) -> bool:
        """The pilot splits that variance into tasks and repeats (two tasks, and a task run twice)."""
        return not (math.isnan(self.parts.between) or math.isnan(self.parts.within))

    @property
    def estimable(self) -> bool:
        """Identifiable and not zero (the pilot saw some variation)."""
        return self.identifiable and self.parts.task_mean_variance(self.repeats) > 0


def plan_rows(runs: pd.DataFrame, reference: str, difference: float, order: list[str] | None = None,
              alpha: float = 0.05, power: float = 0.8, family: int | None = None) -> list[PlanRow]:
    """One plan per candidate, from the pilot's paired differences (harness_error runs left out), at the
    level α / family the verdicts use (family: the candidates compared with the reference, by default).

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
    family = family or len(order) - 1
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
        per_task = pd.Series(diff).groupby(pairs["task_id"].to_numpy()).mean().to_numpy()
        rows.append(PlanRow(s, reference, parts.tasks, parts.repeats, parts, difference, alpha, power, family,
                            per_task))
    return rows


NOT_IDENTIFIABLE = "not identifiable from this pilot"


def _sd(variance: float) -> str:
    return NOT_IDENTIFIABLE if math.isnan(variance) else f"{math.sqrt(variance) * 100:.1f}"


def _count(n: int | None, unit: str) -> str:
    return f"more than {'100,000' if unit == 'tasks' else '1,000'}" if n is None else f"{n:,}"


def plan_frame(rows: list[PlanRow]) -> pd.DataFrame:
    """The plans as a display table."""
    out = []
    for r in rows:
        if not r.estimable:
            out.append({"strategy": r.strategy, "vs": r.reference, "tasks × repeats": f"{r.tasks} × {r.repeats:g}",
                        "sd between tasks (pts)": _sd(r.parts.between), "sd between repeats (pts)": _sd(r.parts.within),
                        "MDD now (pts)": "n/a", f"tasks for {r.difference * 100:g} pts": "n/a",
                        f"repeats for {r.difference * 100:g} pts": "n/a", "level": f"{r.level:.3g}",
                        "size reached": "n/a"})
            continue
        mdd = r.mdd
        out.append({
            "strategy": r.strategy, "vs": r.reference, "tasks × repeats": f"{r.tasks} × {r.repeats:g}",
            "sd between tasks (pts)": _sd(r.parts.between), "sd between repeats (pts)": _sd(r.parts.within),
            "MDD now (pts)": _mdd_cell(mdd),
            f"tasks for {r.difference * 100:g} pts": _count(r.tasks_needed, "tasks") + f" (× {round(r.repeats)} repeats)",
            f"repeats for {r.difference * 100:g} pts": (_count(r.repeats_needed, "repeats") + f" (× {r.tasks} tasks)"
                                                        if r.split_identifiable else NOT_IDENTIFIABLE),
            "level": f"{r.level:.3g}",
            "size reached": f"{r.size(r.tasks):.3g}",
        })
    return pd.DataFrame(out)


def _level_text(r: PlanRow) -> str:
    text = f"α = {r.alpha:g}" if r.family == 1 else f"α = {r.alpha:g}/{r.family} (Holm's first step)"
    size = r.size(r.tasks)
    if size < r.level * 0.995:
        text += f", where the task-level test, whose tied per-task differences make it discrete, reaches {size:.2g}"
    return text


def _unknown_sentence(r: PlanRow, pts: str) -> str:
    if not r.identifiable:
        return (f"`{r.strategy}` vs `{r.reference}`: one task: the variance between tasks is {NOT_IDENTIFIABLE}, "
                f"so it cannot say what {pts} would need — run more tasks first.")
    return (f"`{r.strategy}` vs `{r.reference}`: the pilot shows no variation in the paired outcomes "
            f"({r.tasks} tasks): it cannot say what {pts} would need — run more tasks or repeats first.")


def _detects(mdd: float) -> str:
    """What a design detects, in words: a completion difference cannot exceed 100 pts, so an MDD beyond
    it is no difference at all."""
    if math.isinf(mdd):
        return "detects no difference (too few tasks)"
    if mdd > 1:
        return "cannot detect any difference up to 100 pts"
    return f"detects {mdd * 100:.1f} pts"


def _mdd_cell(mdd: float) -> str:
    return "∞" if math.isinf(mdd) else "> 100" if mdd > 1 else f"{mdd * 100:.1f}"


def plan_sentence(r: PlanRow) -> str:
    """One line answering "how many runs do I need to detect this difference?"."""
    pts = f"{r.difference * 100:g} pts"
    if not r.estimable:
        return _unknown_sentence(r, pts)
    parts = [f"`{r.strategy}` vs `{r.reference}`: this design ({r.tasks} tasks × {r.repeats:g} repeats) "
             f"{_detects(r.mdd)} with {r.power:.0%} power at {_level_text(r)}"]
    t = r.tasks_needed
    parts.append(f"{pts} needs {_count(t, 'tasks')} tasks × {round(r.repeats)} repeats"
                 + ("" if t is None else f" = {t * round(r.repeats):,} runs per strategy"))
    n = r.repeats_needed
    if not r.split_identifiable:
        parts.append(f"what more repeats would give is {NOT_IDENTIFIABLE} (no task was run twice)")
    elif n is None:
        parts.append(f"with these {r.tasks} tasks no number of repeats is enough (the tasks themselves differ)")
    else:
        parts.append(f"or {r.tasks} tasks × {n} repeats = {r.tasks * n:,} runs per strategy")
    return "; ".join(parts) + "."


def plan_text(folder: ResultsFolder, difference: float, reference: str = "baseline", alpha: float = 0.05,
              power: float = 0.8) -> str:
    """What `ctxbench plan` prints: one sentence per candidate and how the figures were obtained."""
    rows = plan_rows(folder.runs, folder.check_strategy(reference, "reference strategy"), difference,
                     folder.strategies, alpha, power)
    if not rows:
        raise InputError(f"{folder.path}: no strategy shares a (task, repeat) pair with `{reference}`")
    lines = [f"Pilot `{folder.path}` ({folder.manifest.name}); to detect {difference * 100:g} pts of completion "
             f"with {power:.0%} power at α = {alpha:g}, divided by the {rows[0].family} strategies compared as the "
             "verdicts' Holm correction does (two-sided, task-level test; exact noncentral-t power at the size the "
             "sign-flip test reaches there, which tied per-task differences keep below the level):", ""]
    lines += [f"- {plan_sentence(r)}" for r in rows]
    lines += ["", "The variance of the paired difference is split into a part between tasks and a part between "
              "repeats of one task (one-way random effects); more repeats shrink only the second. A part the pilot "
              "cannot estimate (one repeat: the split; one task: the part between tasks) is said to be not "
              "identifiable, never taken as 0. Planning from a small pilot is itself uncertain: treat the counts "
              "as a floor."]
    if folder.manifest.simulated:
        lines.insert(0, "Figures from the simulated model (a stand-in for a model, not a model).")
    return "\n".join(lines) + "\n"
