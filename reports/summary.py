"""Per-strategy summaries of a runs DataFrame: completion, stability, pass@k, tokens, failures."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from ctxbench.harness.records import FAILURE_REASONS
from ctxbench.reports.stats import clustered_rate_interval, pass_at_k, pass_hat_k

__all__ = ["StrategySummary", "summarize", "summarize_strategy", "summary_frame", "failure_frame",
           "task_table", "repeat_rates", "split_harness_errors", "outcome_grid", "called_no_tool",
           "arms_without_tool_calls", "masked_per_run"]


def split_harness_errors(runs: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(countable runs, harness_error runs): a harness error is a fault of ctxbench, not an outcome of
    the strategy, so it counts in no rate and no comparison (the reports list it instead)."""
    errors = runs["failure_reason"] == "harness_error"
    return runs[~errors], runs[errors]


def called_no_tool(runs: pd.DataFrame) -> bool:
    """Whether an arm's runs (harness_error runs left out; at least one left) never called a tool: then
    nothing of its strategy was measured (a model whose calls the endpoint does not read, say)."""
    countable, _ = split_harness_errors(runs)
    return not countable.empty and not any(bool(calls) for calls in countable["tool_calls"])


def arms_without_tool_calls(runs: pd.DataFrame, order: list[str] | None = None) -> list[str]:
    """The arms (in `order`, default first appearance) in which no run called a tool (`called_no_tool`)."""
    order = order or list(dict.fromkeys(runs["strategy"]))
    return [s for s in order if called_no_tool(runs[runs["strategy"] == s])]


@dataclass(frozen=True)
class StrategySummary:
    """Everything the report says about one strategy."""

    strategy: str
    runs: int
    """Runs counted in the rates (harness_error runs excluded)."""
    resolved: int
    completion_rate: float
    ci_low: float
    """95% interval of the completion rate over the population of tasks like these: Wilson with the
    effective sample size of runs clustered by task (`clustered_rate_interval`)."""
    ci_high: float
    repeats: int
    """Distinct repeat indices."""
    repeat_mean: float
    """Mean over repeats of the per-repeat completion rate."""
    repeat_std: float
    """Sample standard deviation (ddof=1) of the per-repeat completion rate; NaN with one repeat."""
    repeat_min: float
    repeat_max: float
    pass_at_k: dict[int, float]
    """Unbiased pass@k averaged over tasks, k = 1..(fewest repeats of any task)."""
    pass_hat_k: dict[int, float]
    """Unbiased pass^k (all k succeed) averaged over tasks, same k."""
    tokens_mean: float
    tokens_median: float
    tokens_p90: float
    tokens_per_resolved: float
    """All tokens the strategy spent / runs it resolved (NaN when none resolved)."""
    turns_mean: float
    wall_mean: float
    wall_median: float
    failures: dict[str, int]
    """Unresolved runs per failure reason (every reason, zeros included; harness_error too)."""
    cost_mean: float = math.nan
    """Mean dollars per run (`cost_usd`); NaN when the runs carry no price."""
    cost_total: float = math.nan
    """Dollars of all the runs."""
    cost_per_resolved: float = math.nan
    """Dollars of all the runs / runs resolved (NaN when none resolved)."""
    harness_errors: int = 0
    """Runs that ended in harness_error, left out of every rate."""
    masked_mean: float = math.nan
    """Mean per run of the tool outputs the strategy masked (`masked_per_run`), over the runs with a
    transcript; NaN when none has one."""

    def failure_share(self, reason: str) -> float:
        """Share of all recorded runs of this strategy (harness errors included) that failed for `reason`."""
        return self.failures[reason] / (self.runs + self.harness_errors)


def repeat_rates(runs: pd.DataFrame) -> pd.DataFrame:
    """Completion rate per (strategy, repeat): columns strategy, repeat, completion_rate."""
    return (runs.groupby(["strategy", "repeat"], sort=False)["resolved"].mean()
            .rename("completion_rate").reset_index())


def _pass_curves(runs: pd.DataFrame) -> tuple[dict[int, float], dict[int, float]]:
    per_task = runs.groupby("task_id")["resolved"].agg(["size", "sum"])
    kmax = int(per_task["size"].min())
    counts = [(int(n), int(c)) for n, c in zip(per_task["size"], per_task["sum"])]
    at = {k: float(np.mean([pass_at_k(n, c, k) for n, c in counts])) for k in range(1, kmax + 1)}
    hat = {k: float(np.mean([pass_hat_k(n, c, k) for n, c in counts])) for k in range(1, kmax + 1)}
    return at, hat


def masked_per_run(turns: pd.DataFrame) -> pd.Series:
    """Per run (`run_id`) of a `turns_df` frame, how many tool outputs its strategy masked: the distinct
    call ids of its `masked` actions (a mask kept turn after turn counts once)."""
    masked: dict[str, set[str]] = {run: set() for run in turns["run_id"]}
    acting = turns[turns["actions_masked"] > 0]
    for run, actions in zip(acting["run_id"], acting["actions"]):
        masked[run].update(a["target"] for a in json.loads(actions) if a["kind"] == "masked")
    return pd.Series({run: len(calls) for run, calls in masked.items()}, dtype=float)


def _masked_mean(runs: pd.DataFrame, masked: pd.Series | None) -> float:
    if masked is None:
        return math.nan
    counts = masked.reindex(runs["run_id"]).dropna()
    return float(counts.mean()) if len(counts) else math.nan


def summarize_strategy(strategy: str, runs: pd.DataFrame, masked: pd.Series | None = None) -> StrategySummary:
    """Summarize the runs of one strategy (a non-empty slice of a runs frame; `masked`: `masked_per_run`
    of the folder's turns, None without them); harness_error runs are counted apart and left out of
    every rate (all figures are NaN when nothing else is left)."""
    failures = runs["failure_reason"].dropna().value_counts()
    runs, errors = split_harness_errors(runs)
    n, resolved = len(runs), int(runs["resolved"].sum())
    counts = {r: int(failures.get(r, 0)) for r in FAILURE_REASONS}
    if n == 0:
        nan = math.nan
        return StrategySummary(strategy, 0, 0, nan, nan, nan, 0, nan, nan, nan, nan, {}, {}, nan, nan, nan, nan,
                               nan, nan, nan, counts, harness_errors=len(errors))
    low, high = clustered_rate_interval(runs["resolved"].to_numpy(dtype=float), runs["task_id"].to_numpy())
    per_repeat = runs.groupby("repeat")["resolved"].mean()
    at, hat = _pass_curves(runs)
    tokens = runs["total_tokens"].astype(float)
    return StrategySummary(
        strategy=strategy, runs=n, resolved=resolved, completion_rate=resolved / n, ci_low=low, ci_high=high,
        repeats=len(per_repeat), repeat_mean=float(per_repeat.mean()),
        repeat_std=float(per_repeat.std(ddof=1)) if len(per_repeat) > 1 else math.nan,
        repeat_min=float(per_repeat.min()), repeat_max=float(per_repeat.max()),
        pass_at_k=at, pass_hat_k=hat,
        tokens_mean=float(tokens.mean()), tokens_median=float(tokens.median()),
        tokens_p90=float(np.percentile(tokens, 90)),
        tokens_per_resolved=float(tokens.sum() / resolved) if resolved else math.nan,
        turns_mean=float(runs["turns"].mean()), wall_mean=float(runs["wall_s"].mean()),
        wall_median=float(runs["wall_s"].median()),
        failures=counts, harness_errors=len(errors), masked_mean=_masked_mean(runs, masked),
        **_costs(runs, resolved),
    )


def _costs(runs: pd.DataFrame, resolved: int) -> dict[str, float]:
    """Cost figures, only when every run has a price (a partial sum would understate it)."""
    if "cost_usd" not in runs.columns or runs["cost_usd"].isna().any():
        return {}
    cost = runs["cost_usd"].astype(float)
    return {"cost_mean": float(cost.mean()), "cost_total": float(cost.sum()),
            "cost_per_resolved": float(cost.sum() / resolved) if resolved else math.nan}


def summarize(runs: pd.DataFrame, order: list[str] | None = None, turns: pd.DataFrame | None = None
              ) -> list[StrategySummary]:
    """One summary per strategy, in `order` (default: order of first appearance); `turns` (a `turns_df`
    frame) gives the masked outputs."""
    order = order or list(dict.fromkeys(runs["strategy"]))
    masked = None if turns is None or turns.empty else masked_per_run(turns)
    return [summarize_strategy(s, runs[runs["strategy"] == s], masked) for s in order]


def summary_frame(summaries: list[StrategySummary]) -> pd.DataFrame:
    """One row per strategy (the summary.csv): pass@k as `pass@K`, pass^k as `pass^K`, failures as `fail_REASON`."""
    rows = []
    for s in summaries:
        row = {k: v for k, v in asdict(s).items() if k not in ("pass_at_k", "pass_hat_k", "failures")}
        row.update({f"pass@{k}": v for k, v in s.pass_at_k.items()})
        row.update({f"pass^{k}": v for k, v in s.pass_hat_k.items()})
        row.update({f"fail_{r}": c for r, c in s.failures.items()})
        rows.append(row)
    frame = pd.DataFrame(rows)
    numeric = frame.select_dtypes("float").columns
    frame[numeric] = frame[numeric].mask(frame[numeric].abs() < 1e-12, 0.0).round(10)
    return frame


def failure_frame(summaries: list[StrategySummary], share: bool = False) -> pd.DataFrame:
    """Failure reasons (rows, only those that occurred) × strategies (columns): counts, or shares of runs."""
    data = {s.strategy: {r: (s.failure_share(r) if share else s.failures[r]) for r in FAILURE_REASONS}
            for s in summaries}
    frame = pd.DataFrame(data, index=list(FAILURE_REASONS))
    occurred = [r for r in FAILURE_REASONS if any(s.failures[r] for s in summaries)]
    return frame.loc[occurred]


def outcome_grid(runs: pd.DataFrame, strategy: str) -> pd.DataFrame:
    """Tasks (rows) × repeats (columns) of one strategy: 1 resolved, 0 not, NaN harness error or not run."""
    part = runs[runs["strategy"] == strategy]
    values = part["resolved"].astype(float).where(part["failure_reason"] != "harness_error")
    return (pd.DataFrame({"task_id": part["task_id"], "repeat": part["repeat"], "v": values})
            .pivot_table(index="task_id", columns="repeat", values="v", aggfunc="mean", dropna=False)
            .sort_index())


def task_table(runs: pd.DataFrame, order: list[str] | None = None) -> pd.DataFrame:
    """Tasks (rows) × strategies (columns): resolved repeats as "c/n" (harness_error runs left out)."""
    order = order or list(dict.fromkeys(runs["strategy"]))
    runs, _ = split_harness_errors(runs)
    grouped = runs.groupby(["task_id", "strategy"])["resolved"].agg(["sum", "size"])
    cells = (grouped["sum"].astype(int).astype(str) + "/" + grouped["size"].astype(str)).unstack("strategy")
    return cells.reindex(columns=order).astype(object).fillna("–")  # an arm with no runs left is all NaN
