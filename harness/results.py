"""Run results: one JSON object per line in runs.jsonl, appended and flushed as each run ends."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from ctxbench.harness.errors import InputError
from ctxbench.harness.failures import FailureReason

__all__ = ["RunResult", "RESULT_VERSION", "ResultsWriter", "read_results", "repair_jsonl"]

RESULT_VERSION = 1


class RunResult(BaseModel):
    """One run of one strategy on one task at one repeat."""

    model_config = ConfigDict(extra="forbid")
    version: int = RESULT_VERSION
    experiment_id: str = Field(description="Hash of the experiment's name, resolved config and taskset.")
    run_id: str = Field(description="strategy/task/repeat, unique in the experiment.")
    strategy: str = Field(description="Strategy label.")
    task_id: str
    repeat: int
    seed: int = Field(description="Depends on (task, repeat) only: every strategy meets the same seeds.")
    resolved: bool
    failure_reason: FailureReason | None
    turns: int
    prompt_tokens: int
    completion_tokens: int
    strategy_tokens: int = Field(description="Tokens the strategy itself spent on model calls.")
    total_tokens: int
    cached_tokens: int = 0
    cost_usd: float | None = Field(None, description="Dollars at the experiment's prices (manifest `pricing`); None when unknown.")
    peak_context_tokens: int
    wall_s: float
    model_s: float = 0.0
    tool_s: float = 0.0
    test_s: float = Field(0.0, description="Seconds spent in test subprocesses (agent runs and evaluation).")
    tool_calls: dict[str, int] = Field(default_factory=dict)
    invalid_actions: int = 0
    context_loss_events: int = Field(0, description="Strategy actions that dropped or cut content.")
    tests: dict[str, str] = Field(default_factory=dict, description="Outcome per FAIL_TO_PASS/PASS_TO_PASS id.")
    patch: str = ""
    error: str | None = Field(None, description="Traceback when the harness failed; the provider's error for "
                                                 "`model_error`; the test output for `taskset_error`.")
    workspace: str | None = Field(None, description="The run's workspace folder when keep_workspaces kept it.")
    _transcript: bytes | None = PrivateAttr(None)
    """The gzipped per-turn ledger on its way from the worker to the writer; never in runs.jsonl."""


class ResultsWriter:
    """The one writer of runs.jsonl: append, flush and fsync each line."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh = path.open("a", encoding="utf-8")

    def write(self, result: RunResult) -> None:
        self._fh.write(result.model_dump_json() + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        self._fh.close()


def _problem(line: bytes) -> str | None:
    """Why `line` is not a run record, or None when it is one."""
    try:
        RunResult.model_validate_json(line)
    except ValidationError as exc:
        errors = exc.errors()
        loc = ".".join(str(p) for p in errors[0]["loc"])
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        return (f"{loc}: {errors[0]['msg']}" if loc else errors[0]["msg"]) + more
    return None


def repair_jsonl(path: Path) -> int:
    """Cut a torn last line (a write interrupted by a crash: no newline, not a run record), or end a
    complete last line that lacks only its newline. Returns the number of bytes removed.

    Raises:
        InputError: any other line is not a run record, or repeats a run; names the line, and
            nothing is rewritten (a valid run after it is never discarded).
    """
    if not path.exists():
        return 0
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    seen: dict[str, int] = {}
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        problem = _problem(line)
        if problem is None:
            run_id = json.loads(line)["run_id"]
            if run_id in seen:
                raise InputError(f"{path}:{n}: run {run_id} is already recorded on line {seen[run_id]}; "
                                 "remove one of the two lines (nothing was rewritten)")
            seen[run_id] = n
            continue
        if n == len(lines) and not line.endswith(b"\n"):
            with path.open("r+b") as fh:
                fh.truncate(len(data) - len(line))
            return len(line)
        raise InputError(f"{path}:{n}: not a run record ({problem}); only a torn last line is repaired: "
                         f"fix or remove line {n} (nothing was rewritten)")
    if lines and not lines[-1].endswith(b"\n"):
        with path.open("ab") as fh:
            fh.write(b"\n")
    return 0


def read_results(path: Path) -> list[RunResult]:
    """Every run in a runs.jsonl file (a torn last line, without its newline, is ignored).

    Raises:
        InputError: another line is not a run record, naming the file and the line.
    """
    out = []
    if not path.exists():
        return out
    with path.open("rb") as fh:
        lines = fh.read().splitlines(keepends=True)
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            out.append(RunResult.model_validate_json(line))
        except ValueError as exc:
            if n == len(lines) and not line.endswith(b"\n"):
                continue
            raise InputError(f"{path}:{n}: not a run record ({_problem(line)})") from exc
    return out
