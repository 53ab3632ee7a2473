"""Ray actors that each hold many I/O-bound runs in flight (runs against a real endpoint).

A run that mostly waits for the model needs no CPU of its own: each actor takes one CPU of the cluster
and runs `max_runs / workers` runs at once in its threads, so a cluster keeps as many runs in flight as
the endpoint allows without a Ray worker process per run.
"""

from __future__ import annotations

import threading
from itertools import cycle
from typing import Any, Callable

from ctxbench.harness import concurrency
from ctxbench.harness.run.single_run import FinishedRun, RunContext, RunSpec
from ctxbench.harness.environments import environment_for

__all__ = ["RunHolder", "holders_for"]


class RunHolder:
    """One actor: the experiment's context, and runs on demand in its threads."""

    def __init__(self, ctx: RunContext, run: Callable[[RunContext, RunSpec], FinishedRun], holders: int) -> None:
        self.ctx = ctx
        self.run = run
        self.building = threading.Lock()
        config = ctx.config
        concurrency.configure(holders, config.resolved_max_subprocesses, config.resolved_max_connections)

    def run_one(self, spec: RunSpec) -> FinishedRun:
        task = next(t for t in self.ctx.taskset.tasks if t.id == spec.task_id)
        with self.building:  # the first runs of a task arrive together: its template is built once
            environment_for(task).warm(task)
        return self.run(self.ctx, spec)


def holders_for(ray: Any, ctx: RunContext, run: Callable[[RunContext, RunSpec], FinishedRun],
                cpus: int) -> tuple[list[Any], Callable[[RunSpec], Any], int]:
    """Start the actors for a cluster of `cpus` CPUs: (the actors, submit(spec) -> a result ref, how
    many runs to keep submitted). As many actors as CPUs, fewer when `model.max_connections` is
    reached with fewer."""
    config = ctx.config
    threads = -(-config.resolved_max_runs // config.resolved_workers)
    count = max(1, min(cpus, -(-config.resolved_max_connections // threads)))
    holder = ray.remote(num_cpus=1, max_concurrency=threads)(RunHolder)
    ctx_ref = ray.put(ctx)
    actors = [holder.remote(ctx_ref, run, count) for _ in range(count)]
    turn = cycle(actors)
    return actors, lambda spec: next(turn).run_one.remote(spec), count * threads
