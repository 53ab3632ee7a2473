"""Forked worker processes that each hold several runs in flight as threads.

The processes are the CPU work (one per core by default); a run's threads wait concurrently on what
they wait for (model calls above all), so runs in flight are not bounded by cores. The runner hands each
process up to `threads` runs at a time (and as many queued behind them) over a pipe and takes results back
in completion order.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
import threading
from multiprocessing.connection import Connection, wait
from typing import Any, Callable, Iterator

from ctxbench.harness import concurrency
from ctxbench.harness.concurrency import Gauge
from ctxbench.harness.errors import ExperimentAborted
from ctxbench.harness.sandbox import die_with_parent
from ctxbench.harness.run.single_run import FinishedRun, RunContext, RunSpec

__all__ = ["threaded_pool", "ExecutorFailed"]

RunFunction = Callable[[RunContext, RunSpec], FinishedRun]


class ExecutorFailed(ExperimentAborted):
    """Runs cannot go on: a process running them died (killed by the system, e.g. for memory), or the
    Ray cluster cannot be joined."""


def threaded_pool(ctx: RunContext, specs: list[RunSpec], run: RunFunction, processes: int, threads: int,
                  on_gauges: Callable[[dict[str, Gauge]], None] | None = None) -> Iterator[FinishedRun]:
    """Run `specs` over `processes` forked workers of `threads` runs each; yield each as it finishes.

    `on_gauges(endpoint -> gauge)` gets the endpoints' limits summed over the processes after each run.

    Raises:
        ExecutorFailed: a worker process died.
        Exception: what a run raised (run_one lets only a fatal provider error through).
    """
    mp = multiprocessing.get_context("fork")
    workers = []
    for _ in range(processes):
        ours, theirs = mp.Pipe()
        process = mp.Process(target=_serve, args=(theirs, ctx, run, processes, threads, os.getpid()), daemon=True)
        process.start()
        theirs.close()
        workers.append(_Worker(process, ours))
    try:
        yield from _dispatch(workers, specs, threads, on_gauges)
        for worker in workers:
            worker.conn.send(None)
        for worker in workers:
            worker.process.join()
    finally:
        for worker in workers:  # stopped early (Ctrl-C, a fatal error): runs in flight are abandoned
            if worker.process.is_alive():
                worker.process.terminate()
            worker.conn.close()
        for worker in workers:
            worker.process.join()


class _Worker:
    def __init__(self, process: Any, conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.in_flight = 0
        self.gauges: dict[str, Gauge] = {}


def _dispatch(workers: list[_Worker], specs: list[RunSpec], threads: int,
              on_gauges: Callable[[dict[str, Gauge]], None] | None) -> Iterator[FinishedRun]:
    queue = iter(specs)
    left = len(specs)
    owner: dict[Connection | int, _Worker] = {w.conn: w for w in workers}
    owner.update({w.process.sentinel: w for w in workers})
    while left:
        # keep every process at `threads` runs, then as many queued: runs that end together (a round of
        # calls answered together) are followed at once, not each after a trip through this loop; the
        # runs are shared out first, so that a plan smaller than the queues still runs on every process
        batches: list[list[RunSpec]] = [[] for _ in workers]
        for depth in (threads, 2 * threads):
            for worker, batch in zip(workers, batches):
                while worker.in_flight + len(batch) < depth and (spec := next(queue, None)) is not None:
                    batch.append(spec)
        for worker, batch in zip(workers, batches):
            if batch:  # one message: the process takes its first `threads` runs at once
                worker.conn.send(batch)
                worker.in_flight += len(batch)
        for ready in wait(list(owner)):
            worker = owner[ready]  # type: ignore[index]  # wait() returns what it was given
            try:
                kind, payload, gauges = worker.conn.recv()
            except (EOFError, OSError):
                code = worker.process.join(1) or worker.process.exitcode
                raise ExecutorFailed(f"a worker process died (exit code {code})") from None
            if kind == "raised":
                raise payload
            worker.in_flight -= 1
            worker.gauges = gauges
            left -= 1
            if on_gauges is not None and gauges:
                on_gauges(_summed(workers))
            yield payload


def _summed(workers: list[_Worker]) -> dict[str, Gauge]:
    endpoints = {e for w in workers for e in w.gauges}
    return {e: concurrency.combine([w.gauges[e] for w in workers if e in w.gauges]) for e in sorted(endpoints)}


def _serve(conn: Connection, ctx: RunContext, run: RunFunction, processes: int, threads: int,
           runner_pid: int) -> None:
    """A worker process: run what the runner sends (lists of runs), `threads` at a time, until it sends
    None.

    Its `threads` threads start before the first run: a thread started while hundreds of runs hold the
    interpreter in turn waits for its turn to begin, so starting one per run as they arrive would
    spread the start of the first runs over seconds."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the runner's to handle
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the runner's SIGTERM handler is not the worker's: it ends
    die_with_parent(runner_pid)  # a worker never outlives the runner, even one killed by SIGKILL
    config = ctx.config
    concurrency.configure(processes, config.resolved_max_subprocesses, config.resolved_max_connections)
    sending = threading.Lock()
    todo: queue.SimpleQueue[RunSpec | None] = queue.SimpleQueue()

    def work() -> None:
        while (spec := todo.get()) is not None:
            message: tuple[str, Any, dict[str, Gauge] | None]
            try:
                message = ("done", run(ctx, spec), concurrency.snapshot())
            except BaseException as error:  # what run_one lets through: a fatal provider error
                message = ("raised", error, None)
            try:
                with sending:
                    conn.send(message)
            except OSError:  # the runner is gone
                os._exit(1)

    pool = [threading.Thread(target=work, name=f"run-{i}", daemon=True) for i in range(threads)]
    for thread in pool:
        thread.start()
    while True:
        try:
            batch = conn.recv()
        except EOFError:  # the runner is gone
            os._exit(1)
        if batch is None:
            break
        for spec in batch:
            todo.put(spec)
    for _ in pool:
        todo.put(None)
    for thread in pool:
        thread.join()
    conn.close()
