"""runs.jsonl: one RunResult (see ctxbench.harness.records) per line, appended as each run ends and fsynced
right after it (by the writer's own thread)."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from pydantic import ValidationError

from ctxbench.harness.errors import InputError, validation_problems
from ctxbench.harness.records import RESULT_VERSION, RunResult

__all__ = ["RunResult", "RESULT_VERSION", "ResultsWriter", "read_results", "repair_jsonl"]


class ResultsWriter:
    """The one writer of runs.jsonl: each line appended whole, or not at all, as its run ends.

    A line is in the file (the system's) once `write` returns, so a crash of ctxbench loses no
    recorded run; a thread of the writer's own fsyncs what was written, one fsync for every line that
    arrived while the one before it ran, so a line is on disk within about one fsync (milliseconds)
    of its write, without the caller waiting for the disk at each run. `close` waits for the last.
    A crash of the machine can lose only the lines of that last moment: their runs are not recorded,
    and --resume runs them again.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._cond = threading.Condition()
        self._written = 0
        self._synced = 0
        self._closing = False
        self._error: OSError | None = None
        self._syncer: threading.Thread | None = None
        """Started by the first line: worker processes forked before it inherit no running thread."""

    def write(self, result: RunResult) -> None:
        """Append one line.

        Raises:
            OSError: the line could not be written whole (a full disk): the file is as it was before;
                or the fsync of earlier lines failed.
        """
        self._raise_sync_error()
        line = memoryview((result.model_dump_json() + "\n").encode("utf-8"))
        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            while line:
                line = line[os.write(self._fd, line):]
        except OSError:
            os.ftruncate(self._fd, start)  # never a torn line: every line of runs.jsonl is a run
            raise
        with self._cond:
            self._written += 1
            self._cond.notify_all()
        if self._syncer is None:
            self._syncer = threading.Thread(target=self._sync_loop, name="runs.jsonl fsync", daemon=True)
            self._syncer.start()

    def sync(self) -> None:
        """Wait until every line written so far is on disk.

        Raises:
            OSError: the fsync failed.
        """
        with self._cond:
            target = self._written
            while self._synced < target and self._error is None:
                self._cond.wait()
        self._raise_sync_error()

    def close(self) -> None:
        """Wait for the last fsync and close the file.

        Raises:
            OSError: an fsync failed (what was written may not be on disk).
        """
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        if self._syncer is not None:
            self._syncer.join()
        os.close(self._fd)
        self._raise_sync_error()

    def _sync_loop(self) -> None:
        while True:
            with self._cond:
                while self._synced == self._written and not self._closing:
                    self._cond.wait()
                if self._synced == self._written:  # closing, nothing left to sync
                    return
                target = self._written
            try:
                os.fsync(self._fd)
            except OSError as exc:
                with self._cond:
                    self._error = self._error or exc
                    self._synced = target
                    self._cond.notify_all()
                continue
            with self._cond:
                self._synced = target
                self._cond.notify_all()

    def _raise_sync_error(self) -> None:
        with self._cond:
            error, self._error = self._error, None
        if error is not None:
            raise error


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
