"""Builders of synthetic results folders: RunResult lines, a manifest dict and transcripts."""

from __future__ import annotations

import copy
import gzip
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ctxbench.harness.config import config_hash
from ctxbench.harness.records.failures import FailureReason
from ctxbench.harness.records import ContextLedger, RunResult, TranscriptEnd, TranscriptHeader, TranscriptTurn

BASE_CONFIG: dict[str, Any] = {
    "name": "synthetic",
    "model": {"provider": "sim", "name": "sim-coder", "temperature": 0.0, "context_window": 16000,
              "sim": {"r0": 0.95}},
    "taskset": {"path": "smoke"},
    "limits": {"max_turns": 30},
    "repeats": 3,
    "seed": 0,
}


def run(strategy: str, task: str, repeat: int, resolved: bool, tokens: int = 1000, turns: int = 5,
        reason: FailureReason | None = None, wall: float = 2.0) -> RunResult:
    """One synthetic run, one tool call a turn; unresolved runs default to `tests_failed`."""
    if not resolved and reason is None:
        reason = "tests_failed"
    return RunResult(experiment_id="exp", run_id=f"{strategy}/{task}/{repeat}", strategy=strategy, task_id=task,
                     repeat=repeat, seed=1000 + repeat, resolved=resolved, failure_reason=None if resolved else reason,
                     turns=turns, prompt_tokens=tokens - 100, completion_tokens=100, strategy_tokens=0,
                     total_tokens=tokens, peak_context_tokens=tokens // 4, wall_s=wall, tool_calls={"read_file": turns})


def manifest(strategies: list[str], *, model: dict[str, Any] | None = None, simulated: bool = True,
             created: str = "2025-01-01T02:00:00+00:00", sandbox_warning: str | None = None,
             harness_version: str = "0.1.0") -> dict[str, Any]:
    """A manifest like ctxbench.harness.run.runner.manifest_for writes, fixed hashes computed from the config."""
    config = copy.deepcopy(BASE_CONFIG)
    if model:
        config["model"].update(model)
    config["strategies"] = [{"name": s, "params": {}, "label": None} for s in strategies]
    fixed = {"model": config_hash(config["model"]), "taskset": "t" * 64, "system_prompt": "p" * 64,
             "tools": "x" * 64, "harness_version": harness_version, "limits": config_hash(config["limits"])}
    return {"version": 1, "experiment_id": config_hash(fixed)[:16], "name": "synthetic", "created": created,
            "harness_version": harness_version, "fixed": fixed, "config": config,
            "strategies": config["strategies"],
            "sandbox": {"requested": "bwrap", "used": "none" if sandbox_warning else "bwrap", "warning": sandbox_warning},
            "simulated": simulated, "runs_planned": 0}


def write_folder(path: Path, runs: list[RunResult], man: dict[str, Any], transcripts: bool = True) -> Path:
    """Write manifest.json, runs.jsonl and (optionally) one transcript per run."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "manifest.json").write_text(json.dumps(man, indent=2))
    (path / "runs.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in runs))
    if transcripts:
        for r in runs:
            folder = path / "transcripts" / r.strategy
            folder.mkdir(parents=True, exist_ok=True)
            records: list[Any] = [TranscriptHeader(run_id=r.run_id, strategy=r.strategy, task_id=r.task_id,
                                                   repeat=r.repeat, seed=r.seed)]
            for turn in range(r.turns):
                tokens = 1000 + 500 * turn * (2 if r.strategy == "baseline" else 1)
                records.append(TranscriptTurn(turn=turn, messages=[], context_tokens=tokens, fill=tokens / 16000,
                                              ledger=ContextLedger({"history": tokens})))
            records.append(TranscriptEnd(stop="finished", turns=r.turns))
            with gzip.open(folder / f"{r.task_id}.{r.repeat}.jsonl.gz", "wt") as fh:
                fh.writelines(record.model_dump_json() + "\n" for record in records)
    return path


def grid(strategy: str, outcomes: list[list[bool]], tokens: int = 1000) -> list[RunResult]:
    """Runs of one strategy: outcomes[task][repeat]."""
    return [run(strategy, f"task-{t}", r, ok, tokens=tokens) for t, row in enumerate(outcomes) for r, ok in enumerate(row)]


@pytest.fixture
def build() -> SimpleNamespace:
    """The builders above, for tests: build.run, build.manifest, build.write_folder, build.grid."""
    return SimpleNamespace(run=run, manifest=manifest, write_folder=write_folder, grid=grid)


@pytest.fixture
def two_strategy_folder(tmp_path: Path) -> Path:
    """baseline resolves 5 of 6 runs, lean 2 of 6, over 2 tasks × 3 repeats; lean uses half the tokens."""
    runs = grid("baseline", [[True, True, True], [True, False, True]], tokens=2000)
    runs += grid("lean", [[True, False, False], [False, True, False]], tokens=1000)
    runs[4] = run("baseline", "task-1", 1, False, tokens=2000, reason="max_turns")
    return write_folder(tmp_path / "exp", runs, manifest(["baseline", "lean"], sandbox_warning="sandbox fell back to none: no bwrap"))
