"""The evaluation of a task's base (its hidden tests applied, no fix), run once per task and process:
what a run that changed nothing is judged on, and what tells a taskset whose tests cannot be collected
from an agent that broke them."""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from ctxbench.harness.environments.registry import environment_for
from ctxbench.harness.environments.templates import BASE_EVALUATIONS
from ctxbench.harness.environments.workspace import Workspace
from ctxbench.harness.records import Task
from ctxbench.harness.records.evaluation import Evaluation
from ctxbench.harness.sandbox import Sandbox

__all__ = ["base_evaluation"]


def base_evaluation(task: Task, python: str, timeout_s: float, sandbox: Sandbox,
                    ws: Workspace | None = None) -> Evaluation:
    """The evaluation of the task's base (its hidden tests applied), run once per task, environment,
    interpreter, timeout and sandbox in a process (so once per task for an experiment); later calls
    return it with `seconds` 0, since no test ran for them.

    A run whose patch is empty is judged on exactly the base: staging its workspace leaves out only
    the files git ignores, and evaluation deletes those first. Such a run passes its own workspace
    as `ws` (the first one is evaluated there); without `ws` the task's environment prepares a fresh one.

    Precondition: the base's test outcomes depend only on the key: the task's tests give the same
    outcomes each time they run on the same files (a flaky test breaks it: its first outcome is
    reused for every later run); and `ws`, when given, has an empty `diff`. The cache ends with
    `remove_templates`, as the experiment does. Runs in flight in one process (threads) that ask at
    once share one evaluation: the first evaluates, the others wait for it.
    """
    key = (task.id, str(task.repo_dir), task.base_commit, task.runs_in.model_dump_json(), python, timeout_s, sandbox)
    cached = BASE_EVALUATIONS.get(key)
    if cached is not None:
        return replace(cached, seconds=0.0)
    with _BASE_GUARD:
        first = _BASE_LOCKS.setdefault(key, threading.Lock())
    with first:  # runs in flight (threads) that miss together wait for one evaluation, not one each
        cached = BASE_EVALUATIONS.get(key)
        if cached is not None:
            return replace(cached, seconds=0.0)
        if ws is None:
            fresh = environment_for(task).prepare(task, python, sandbox=sandbox)
            try:
                evaluation = fresh.evaluate(timeout_s)
            finally:
                fresh.cleanup()
        else:
            evaluation = ws.evaluate(timeout_s)
        BASE_EVALUATIONS[key] = evaluation
    return evaluation


_BASE_GUARD = threading.Lock()
_BASE_LOCKS: dict[tuple[Any, ...], threading.Lock] = {}
"""One lock per `base_evaluation` key: the first caller evaluates, the others wait for its result."""
