"""Where runs execute: in-process, a local process pool, or a Ray cluster. Results come back in
completion order; the caller is the one writer of runs.jsonl."""

from __future__ import annotations

import logging
import os
import shutil
import socket
import sys
import time
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Callable, Iterator

from ctxbench.harness import concurrency
from ctxbench.harness.concurrency import Gauge
from ctxbench.harness.config import ExperimentConfig
from ctxbench.harness.errors import ExperimentAborted, InputError
from ctxbench.harness.protocols import FatalModelError
from ctxbench.harness.run.ray_holders import holders_for
from ctxbench.harness.records import RunResult
from ctxbench.harness.run.single_run import FinishedRun, RunContext, RunSpec
from ctxbench.harness.environments.templates import folder_owners
from ctxbench.harness.run.worker_pool import ExecutorFailed, threaded_pool
from ctxbench.harness.environments.workspace import sweep_leftovers

RunFunction = Callable[[RunContext, RunSpec], FinishedRun]
"""What executes one run where the executor puts it (ctxbench.harness.run.single_run.run_one)."""

__all__ = ["execute", "runs_in_flight", "ExecutorFailed", "Progress", "ProgressCounts", "progress_line",
           "shorten_middle"]


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
        self.gauges: dict[str, Gauge] = {}
        """Endpoint -> its limit of model calls in flight, summed over the worker processes."""

    def set_gauges(self, gauges: dict[str, Gauge]) -> None:
        self.gauges = gauges

    def limit_text(self) -> str:
        """`calls 48/64`: the current limit of model calls in flight and its ceiling ("" for the simulator)."""
        if not self.gauges:
            return ""
        return "calls " + ", ".join(f"{g.limit}/{g.ceiling}" for g in self.gauges.values())

    def update(self, result: RunResult) -> None:
        self.done += 1
        self.finished_now += 1
        self.resolved += result.resolved
        now = time.monotonic()
        elapsed = now - self.start
        rate = self.finished_now / elapsed if elapsed > 0 else 0
        eta = (self.total - self.done) / rate if rate else 0
        counts = ProgressCounts(self.done, self.total, self.resolved, self.finished_now, _fmt(eta), self.limit_text())
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
    limit: str = ""
    """The limit of model calls in flight (`calls 48/64`), "" when there is none to show."""


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
    if c.limit:
        full_head += f" {c.limit}"
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
            total: int | None = None, on_gauges: Callable[[dict[str, Gauge]], None] | None = None) -> Iterator[FinishedRun]:
    """Run `specs` with `run`, yielding each finished run as it completes; `on_gauges` (and the progress
    line) get the endpoints' limits of model calls in flight as they change.

    Raises:
        ExperimentAborted: a fatal provider error, or a process running the runs died.
    """
    if progress is None:
        progress = Progress(total or len(specs), already_done)
    config = ctx.config
    processes, threads = runs_in_flight(config, len(specs))
    on_gauges = _both(getattr(progress, "set_gauges", None) if progress else None, on_gauges)
    if config.executor == "ray":
        source = _ray(ctx, specs, run)
    elif processes * threads == 1:
        source = _in_process(ctx, specs, run, on_gauges)
    else:
        source = threaded_pool(ctx, specs, run, processes, threads, on_gauges)
    try:
        for finished in source:
            if progress:
                progress.update(finished.result)
            yield finished
    except FatalModelError as exc:
        raise ExperimentAborted(str(exc)) from exc
    except ExecutorFailed as exc:
        raise ExperimentAborted(f"{exc}; the runs recorded so far are kept, --resume runs the rest") from exc


def _both(*callbacks: Callable[[dict[str, Gauge]], None] | None) -> Callable[[dict[str, Gauge]], None] | None:
    given = [c for c in callbacks if c is not None]
    if not given:
        return None

    def each(gauges: dict[str, Gauge]) -> None:
        for callback in given:
            callback(gauges)
    return each


def runs_in_flight(config: ExperimentConfig, runs: int) -> tuple[int, int]:
    """(worker processes, runs in flight in each) for `runs` runs: `max_runs` spread over at most
    `workers` processes."""
    in_flight = max(1, min(config.resolved_max_runs, runs))
    processes = min(config.resolved_workers, in_flight)
    return processes, -(-in_flight // processes)


def _in_process(ctx: RunContext, specs: list[RunSpec], run: RunFunction,
                on_gauges: Callable[[dict[str, Gauge]], None] | None) -> Iterator[FinishedRun]:
    """One run at a time, here."""
    config = ctx.config
    concurrency.configure(1, config.max_subprocesses, config.resolved_max_connections)
    for spec in specs:
        finished = run(ctx, spec)
        if on_gauges is not None:
            on_gauges(concurrency.snapshot())
        yield finished


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
    """On the cluster at `ray_address` or on a local Ray runtime started here with `workers` CPUs (and
    stopped at the end): each run a task of one CPU, or, when `max_runs` is above `workers` (the
    default for a real endpoint), actors of one CPU holding `max_runs / workers` runs each."""
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
        cpus = max(workers, int(ray.cluster_resources().get("CPU", workers)))
        actors: list = []
        if _io_bound(ctx.config):  # actors holding many runs each, as many in flight as the endpoint takes
            actors, submit, window = holders_for(ray, ctx, run, cpus)
        else:  # a task of one CPU per run
            remote_run = ray.remote(num_cpus=1)(run)
            ctx_ref = ray.put(ctx)
            submit, window = (lambda spec: remote_run.remote(ctx_ref, spec)), 4 * cpus

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
            for ref in [] if actors else pending:
                ray.cancel(ref, force=True)

        yield from _windowed(specs, window, submit, next_done, cancel)
    finally:
        if not started:
            for actor in actors:  # they hold the cluster's CPUs (and end their runs in flight)
                ray.kill(actor)
        if started:
            ray.shutdown()
            if ctx.config.ray_address is None:
                _await_local_ray_workers()
                sweep_leftovers()  # the local Ray workers ended without running their exit handlers


def _io_bound(config: ExperimentConfig) -> bool:
    """Runs against a real endpoint (or more runs than workers asked for): they mostly wait."""
    return config.resolved_max_runs > config.resolved_workers


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
