"""The notices that open a report: a simulated model, a sandbox fallback, arms left out for an agent not
installed, an incomplete experiment, runs that ended in `harness_error`, runs whose tokens are estimated."""

from __future__ import annotations

import pandas as pd

from ctxbench.harness.records import Manifest
from ctxbench.reports.document import Block, Notice
from ctxbench.reports.metrics import NOTHING_MEASURED
from ctxbench.reports.summary import arms_without_tool_calls, split_harness_errors

__all__ = ["SIMULATED_NOTICE", "manifest_notices", "completeness_notice", "harness_error_notice",
           "estimated_usage_notice", "no_tool_calls_notice"]

SIMULATED_NOTICE = ("Results from the simulated model `{model}` — a stand-in for a model, not a model: they measure "
                    "the strategies against the simulator's attention model, not a real LLM.")


def manifest_notices(manifest: Manifest, where: str = "") -> list[Block]:
    """Quoted warnings that must open a report: simulated model first, then a sandbox fallback."""
    prefix = f"{where}: " if where else ""
    out: list[Block] = []
    if manifest.simulated:
        out.append(Notice(prefix + SIMULATED_NOTICE.format(model=manifest.config.get("model", {}).get("provider", "sim"))))
    if manifest.sandbox.warning:
        out.append(Notice(f"{prefix}Sandbox warning: {manifest.sandbox.warning}"))
    if manifest.left_out:
        arms = "; ".join(f"`{arm}` ({install})" for arm, install in manifest.left_out.items())
        out.append(Notice(f"{prefix}Left out with `--available`, their agent not installed: {arms}. "
                          "The experiment file has more arms than this report compares."))
    return out


def harness_error_notice(runs: pd.DataFrame) -> list[Block]:
    _, errors = split_harness_errors(runs)
    if errors.empty:
        return []
    names = ", ".join(f"`{r.strategy} {r.task_id}#{r.repeat}`" for r in errors.itertuples())
    counts, failed = runs["strategy"].value_counts(), errors["strategy"].value_counts()
    only = [s for s in dict.fromkeys(errors["strategy"]) if counts[s] == failed[s]]
    return [Notice(f"{len(errors)} runs ended in `harness_error` (a fault of ctxbench, not of the strategy): they "
                   f"are left out of every rate and comparison: {names}."),
            *[Notice(f"`{s}` has only `harness_error` runs: it is in no rate and no comparison.") for s in only]]


def estimated_usage_notice(runs: pd.DataFrame) -> list[Block]:
    estimated = runs[runs["usage_estimated"].fillna(0) > 0] if "usage_estimated" in runs else runs.iloc[:0]
    if estimated.empty:
        return []
    return [Notice(f"{len(estimated)} of {len(runs)} runs have estimated tokens: the endpoint reported no usage for "
                   f"{int(estimated['usage_estimated'].sum())} of their calls, counted with the run's tokenizer "
                   "(cached tokens unknown; `usage_estimated` in runs.jsonl).")]


def completeness_notice(m: Manifest, runs: pd.DataFrame) -> list[Block]:
    """A notice when the folder holds fewer runs than the experiment planned (interrupted or stopped),
    with the count per arm; nothing for a complete folder or one that does not record its plan."""
    if not m.runs_planned or not m.strategies:
        return []
    per_arm = m.runs_planned // len(m.strategies)
    recorded = runs["strategy"].value_counts()
    counts = [(s, int(recorded.get(s, 0))) for s in m.strategy_labels]
    if sum(n for _, n in counts) >= m.runs_planned:
        return []
    arms = ", ".join(f"`{s}` {n} of {per_arm}" for s, n in counts)
    return [Notice(f"**Incomplete experiment**: {len(runs)} of {m.runs_planned} planned runs recorded ({arms}); it "
                   "was interrupted or stopped (`ctxbench run … --resume` continues it). Every figure below is "
                   "from the runs recorded only.")]


def no_tool_calls_notice(runs: pd.DataFrame, order: list[str]) -> list[Block]:
    """A notice per arm in which no run called a tool (`ctxbench run` ends with the same): nothing of its
    strategy was measured, and every verdict with it says so."""
    return [Notice(f"**No tool calls**: no run of `{s}` called a tool: nothing was measured, and every verdict "
                   f"with it reads \"{NOTHING_MEASURED}\" (is the model's `tool_calls` setting right for it? a model "
                   "that writes its calls as text needs `model.tool_calls: text`).")
            for s in arms_without_tool_calls(runs, order)]
