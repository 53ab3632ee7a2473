"""Where runs execute: in-process, a local process pool, or a Ray cluster. Results come back in
completion order; the caller is the one writer of runs.jsonl."""

from __future__ import annotations

import logging
import multiprocessing
import os
import shutil
import signal
import socket
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Iterator

from ctxbench.harness.errors import ExperimentAborted, InputError
from ctxbench.harness.models.base import FatalModelError
from ctxbench.harness.records import RunResult
from ctxbench.harness.sandbox import die_with_parent
from ctxbench.harness.single_run import FinishedRun, RunContext, RunSpec
from ctxbench.harness.templates import folder_owners
from ctxbench.harness.workspace import sweep_leftovers

RunFunction = Callable[[RunContext, RunSpec], FinishedRun]
"""What executes one run where the executor puts it (ctxbench.harness.single_run.run_one)."""

__all__ = ["execute", "Progress", "ProgressCounts", "progress_line", "shorten_middle"]


class Progress:
    """done / total, completion so far and ETA: one updating line on a terminal, plain lines otherwise.

    On a terminal the line always fits its width (read at every update, so a resized window is
    followed): a line that wrapped could not be erased by the next update.
    """

    def __init__(self, total: int, already_done: int = 0, stream: Any = None, every_s: float = 5.0,
                 columns: int | None = None) -> None:
        self.total = total
        self.done = already_done
        self.start_done = already_done
        self.resolved = 0
        self.finished_now = 0
        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.columns = columns
        self.start = time.monotonic()
        self.every_s = every_s
        self.last_print: float | None = None

    def update(self, result: RunResult) -> None:
        self.done += 1
        self.finished_now += 1
        self.resolved += result.resolved
        now = time.monotonic()
        elapsed = now - self.start
        rate = self.finished_now / elapsed if elapsed > 0 else 0
        eta = (self.total - self.done) / rate if rate else 0
        counts = ProgressCounts(self.done, self.total, self.resolved, self.finished_now, _fmt(eta))
        outcome = "ok" if result.resolved else str(result.failure_reason)
        if self.tty:
            self.stream.write("\r\x1b[2K" + progress_line(counts, result.run_id, outcome, self._width()))
            if self.done == self.total:
                self.stream.write("\n")
            self.stream.flush()
        elif self.last_print is None or now - self.last_print >= self.every_s or self.done == self.total:
            self.last_print = now
            print(progress_line(counts, result.run_id, outcome), file=self.stream, flush=True)

    def _width(self) -> int:
        if self.columns:
            return self.columns
        try:
            return os.get_terminal_size(self.stream.fileno()).columns or 80
        except (AttributeError, OSError, ValueError):
            return shutil.get_terminal_size().columns


@dataclass(frozen=True)
class ProgressCounts:
    done: int
    total: int
    resolved: int
    finished: int
    """Runs finished by this process (a resumed experiment's earlier runs are not counted)."""
    eta: str


def shorten_middle(text: str, width: int) -> str:
    """`text` if it fits in `width` characters, else its start and end around `…`."""
    if len(text) <= width:
        return text
    if width <= 1:
        return "…"[:width]
    head = (width - 1 + 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head):]


def progress_line(c: ProgressCounts, run_id: str, outcome: str, width: int | None = None) -> str:
    """The progress line, fitted to `width` columns when given (the last column is left free, since
    writing into it makes some terminals wrap): the run id is shortened in the middle first, then
    the words around it go; the outcome stays visible down to a very narrow terminal."""
    pct = f"{100 * c.resolved / c.finished:.0f}%" if c.finished else "-"
    full_head = f"[{c.done}/{c.total}] resolved {c.resolved}/{c.finished} ({pct}) ETA {c.eta}"
    if width is None:
        return f"{full_head}  last: {run_id} {outcome}"
    room = width - 1
    short_head = f"[{c.done}/{c.total}] {pct} ETA {c.eta}"
    shortest_head = f"[{c.done}/{c.total}] {pct}"
    for head, label, min_id in ((full_head, "  last: ", 16), (full_head, "  ", 12), (short_head, " ", 8),
                                (shortest_head, " ", 8)):
        fixed = len(head) + len(label) + 1 + len(outcome)
        if len(run_id) + fixed <= room or room - fixed >= min_id:
            return f"{head}{label}{shorten_middle(run_id, room - fixed)} {outcome}"
    counter = f"[{c.done}/{c.total}] {outcome}"
    return counter if len(counter) <= room else shorten_middle(outcome, room)


def _fmt(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


def execute(ctx: RunContext, specs: list[RunSpec], run: RunFunction, progress: Any = None, already_done: int = 0,
            total: int | None = None) -> Iterator[FinishedRun]:
    """Run `specs` with `run`, yielding each finished run as it completes.

    Raises:
        ExperimentAborted: a fatal provider error, or a process running the runs died.
    """
    if progress is None:
        progress = Progress(total or len(specs), already_done)
    if ctx.config.executor == "ray":
        source = _ray(ctx, specs, run)
    elif ctx.config.resolved_workers == 1 or len(specs) <= 1:
        source = (run(ctx, spec) for spec in specs)
    else:
        source = _pool(ctx, specs, run, ctx.config.resolved_workers)
    try:
        for finished in source:
            if progress:
                progress.update(finished.result)
            yield finished
    except FatalModelError as exc:
        raise ExperimentAborted(str(exc)) from exc
    except ExecutorFailed as exc:
        raise ExperimentAborted(f"{exc}; the runs recorded so far are kept, --resume runs the rest") from exc


class ExecutorFailed(ExperimentAborted):
    """Runs cannot go on: a process running them died (killed by the system, e.g. for memory), or the
    Ray cluster cannot be joined."""


_CTX: RunContext | None = None
_RUN: RunFunction | None = None


def _init_worker(ctx: RunContext, run: RunFunction, runner_pid: int) -> None:
    global _CTX, _RUN
    _CTX, _RUN = ctx, run
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the runner's SIGTERM handler is not the worker's: it ends
    die_with_parent(runner_pid)  # a worker never outlives the runner, even one killed by SIGKILL


def _worker(spec: RunSpec) -> FinishedRun:
    assert _CTX is not None and _RUN is not None, "worker not initialised"
    return _RUN(_CTX, spec)


def _windowed(specs: list[RunSpec], window: int, submit: Callable[[RunSpec], Any],
              next_done: Callable[[list], tuple[FinishedRun, list]], cancel: Callable[[list], None]) -> Iterator[FinishedRun]:
    """Keep at most `window` runs submitted, so a 10,000-run experiment holds few handles at once.

    `submit(spec)` returns a handle; `next_done(pending)` waits for one and returns its result and the
    handles still pending; `cancel(pending)` drops what has not run when the experiment stops early.
    """
    queue = iter(specs)
    pending: list = []
    try:
        while True:
            pending.extend(submit(spec) for spec in islice(queue, window - len(pending)))
            if not pending:
                return
            result, pending = next_done(pending)
            yield result
    except BaseException:
        cancel(pending)
        raise


def _pool(ctx: RunContext, specs: list[RunSpec], run: RunFunction, workers: int) -> Iterator[FinishedRun]:
    """Forked worker processes: they inherit the context and the prebuilt templates."""
    mp = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp, initializer=_init_worker,
                             initargs=(ctx, run, os.getpid())) as pool:
        def next_done(pending: list[Future]) -> tuple[FinishedRun, list[Future]]:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            first = next(f for f in pending if f in finished)
            try:
                return first.result(), [f for f in pending if f is not first]
            except BrokenProcessPool as exc:
                raise ExecutorFailed(f"a worker process died ({exc})") from exc

        def cancel(pending: list[Future]) -> None:
            """Stop now: runs in flight are abandoned (they are not recorded; --resume runs them).
            The pool then fails the pending futures itself; cancelling them too trips Python 3.11."""
            for process in list(getattr(pool, "_processes", {}).values()):  # no public handle before 3.14
                process.terminate()

        yield from _windowed(specs, 4 * workers, lambda spec: pool.submit(_worker, spec), next_done, cancel)


def check_ray(address: str | None) -> None:
    """Before anything is written: is Ray installed, and does the cluster at `address` answer?
    (Ray itself retries an unreachable address for minutes.)

    Raises:
        InputError: with what to do about it.
    """
    try:
        import ray  # noqa: F401
    except ImportError:
        raise InputError("executor: ray needs the `ray` extra: pip install -e '.[ray]' in the ctxbench "
                         "checkout") from None
    if address is None or address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise InputError(f"ray_address: {address!r} is not host:port, ray://host:port or auto")
    try:
        socket.create_connection((host, int(port)), timeout=10).close()
    except OSError as exc:
        raise InputError(f"ray_address: nothing answers at {address} ({exc})") from None


def _ray(ctx: RunContext, specs: list[RunSpec], run: RunFunction) -> Iterator[FinishedRun]:
    """Each run a Ray task, on the cluster at `ray_address` or on a local Ray runtime started here
    with `workers` CPUs (and stopped at the end)."""
    import ray

    workers = ctx.config.resolved_workers
    started = not ray.is_initialized()
    if started:
        address = ctx.config.ray_address
        try:
            # "local": a runtime of its own even where `ray start` left a cluster running (None would join it)
            ray.init(address=address or "local", num_cpus=None if address else workers,
                     include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING)
        except ConnectionError as exc:
            raise ExecutorFailed(f"cannot join the Ray cluster at {address}: {exc} (a cluster with token "
                                 "authentication also needs RAY_AUTH_MODE=token and its token here)") from exc
    try:
        slots = max(workers, int(ray.cluster_resources().get("CPU", workers)))
        remote_run = ray.remote(num_cpus=1)(run)
        ctx_ref = ray.put(ctx)

        def next_done(pending: list) -> tuple[FinishedRun, list]:
            ready, rest = ray.wait(pending, num_returns=1)
            try:
                return ray.get(ready[0]), rest
            except ray.exceptions.RayTaskError as exc:
                if isinstance(exc.cause, FatalModelError):
                    raise exc.cause from None
                raise
            except ray.exceptions.RayError as exc:  # a worker or node lost after Ray's own retries
                raise ExecutorFailed(f"a Ray worker died ({type(exc).__name__}: {str(exc)[:300]})") from exc

        def cancel(pending: list) -> None:
            """On a cluster we joined, kill what is still pending there. A runtime we started is shut
            down right after, which ends its workers; cancelling first can crash the driver inside
            Ray ("Tried to complete task that was not pending") when a reply is already on its way."""
            if started:
                return
            for ref in pending:
                ray.cancel(ref, force=True)

        yield from _windowed(specs, 4 * slots, lambda spec: remote_run.remote(ctx_ref, spec), next_done, cancel)
    finally:
        if started:
            ray.shutdown()
            if ctx.config.ray_address is None:
                _await_local_ray_workers()
                sweep_leftovers()  # the local Ray workers ended without running their exit handlers


RAY_WORKER_EXIT_S = 30.0
"""How long the runner waits, after shutting down a Ray runtime it started, for its workers to exit."""


def _await_local_ray_workers() -> None:
    """Wait until the Ray workers that own workspace folders have exited (they may still be on their
    way out when `ray.shutdown` returns, and a live owner's folders are never swept)."""
    deadline = time.monotonic() + RAY_WORKER_EXIT_S
    while time.monotonic() < deadline:
        if not [pid for pid in folder_owners() if pid != os.getpid() and _is_ray_worker(pid)]:
            return
        time.sleep(0.1)


def _is_ray_worker(pid: int) -> bool:
    try:
        return b"ray::" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
