"""summary.json: one record per strategy under the names an evaluation script's JSON report uses
(`completion_rate`, `avg_tokens`, `avg_time_seconds`, `failures`), so such a script's readers read
ctxbench's results unchanged."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ctxbench.harness.paths import write_atomically
from ctxbench.reports.loading import ResultsFolder
from ctxbench.reports.summary import StrategySummary, split_harness_errors

__all__ = ["SUMMARY_JSON_VERSION", "summary_record", "write_summary_json"]

SUMMARY_JSON_VERSION = 1


def _number(x: float) -> float | None:
    return None if math.isnan(x) else x


def _strategy_record(folder: ResultsFolder, s: StrategySummary) -> dict[str, Any]:
    countable, _ = split_harness_errors(folder.runs)
    part = countable[countable["strategy"] == s.strategy]
    occurred = sorted((r for r, n in s.failures.items() if n), key=lambda r: -s.failures[r])
    return {
        "model": folder.manifest.model_name, "framework": s.strategy,
        "total_tasks": int(part["task_id"].nunique()), "repeat": s.repeats, "runs": s.runs,
        "completion_rate": _number(s.completion_rate), "avg_tokens": _number(s.tokens_mean),
        "avg_time_seconds": _number(s.wall_mean), "failures": occurred,
        "failure_counts": {r: s.failures[r] for r in occurred}, "harness_errors": s.harness_errors,
    }


def summary_record(folder: ResultsFolder, summaries: list[StrategySummary]) -> dict[str, Any]:
    """The content of summary.json: the experiment, then one record per strategy (in report order)."""
    m = folder.manifest
    return {"version": SUMMARY_JSON_VERSION, "experiment": m.name, "experiment_id": m.experiment_id,
            "model": m.model_name, "runs_planned": m.runs_planned or None, "runs": len(folder.runs),
            "strategies": [_strategy_record(folder, s) for s in summaries]}


def write_summary_json(folder: ResultsFolder, summaries: list[StrategySummary], path: Path) -> Path:
    """Write summary.json (indented, UTF-8) and return its path."""
    return write_atomically(path, json.dumps(summary_record(folder, summaries), indent=2, ensure_ascii=False) + "\n")
