"""runs.jsonl: one RunResult (see ctxbench.harness.records) per line, appended and flushed as each run ends."""

from __future__ import annotations

import json
import os
from pathlib import Path

from pydantic import ValidationError

from ctxbench.harness.errors import InputError, validation_problems
from ctxbench.harness.records import RESULT_VERSION, RunResult

__all__ = ["RunResult", "RESULT_VERSION", "ResultsWriter", "read_results", "repair_jsonl"]


class ResultsWriter:
    """The one writer of runs.jsonl: append and fsync each line whole, or not at all."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def write(self, result: RunResult) -> None:
        """Append one line.

        Raises:
            OSError: the line could not be written whole (a full disk): the file is as it was before.
        """
        line = memoryview((result.model_dump_json() + "\n").encode("utf-8"))
        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            while line:
                line = line[os.write(self._fd, line):]
            os.fsync(self._fd)
        except OSError:
            os.ftruncate(self._fd, start)  # never a torn line: every line of runs.jsonl is a run
            raise

    def close(self) -> None:
        os.close(self._fd)


def _problem(line: bytes) -> str | None:
    """Why `line` is not a run record, or None when it is one."""
    try:
        RunResult.model_validate_json(line)
    except ValidationError as exc:
        problems = validation_problems(exc)
        return problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
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
    out: list[RunResult] = []
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
