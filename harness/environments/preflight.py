"""Before anything is written: every task's environment says what it needs (the interpreter its tests
run with, and whether the task can run there at all)."""

from __future__ import annotations

import shlex

from ctxbench.harness.environments.registry import environment_for
from ctxbench.harness.errors import InputError
from ctxbench.harness.records import Taskset

__all__ = ["preflight_taskset"]


def preflight_taskset(taskset: Taskset) -> dict[str, str]:
    """The test interpreter of every task, by task id, once its environment said that the task can run
    there (the test command can start; for docker, the daemon answers and the image is present).

    Raises:
        InputError: naming the taskset file, the first task that cannot run and why.
    """
    where = taskset.path / "taskset.yaml" if taskset.path.is_dir() else taskset.path
    interpreters = {}
    for task in taskset.tasks:
        environment = environment_for(task)
        python = interpreters[task.id] = environment.interpreter(task.runs_in)
        problem = environment.problem(task, python)
        if problem:
            raise InputError(f"{where}: task {task.id}: test_cmd {shlex.join(task.test_cmd)!r} cannot start: {problem}")
    return interpreters
