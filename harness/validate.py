"""`tasks validate`: every task's FAIL_TO_PASS fails before the gold patch, and all pass after it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxbench.harness.sandbox import Sandbox
from ctxbench.harness.tasks import Task, Taskset
from ctxbench.harness.testenv import command_problem, resolve_interpreter
from ctxbench.harness.workspace import Workspace

__all__ = ["TaskValidation", "validate_task", "validate_taskset"]


@dataclass
class TaskValidation:
    task_id: str
    ok: bool
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


def validate_task(task: Task, python: str, timeout_s: float = 120.0, sandbox: Sandbox = Sandbox()) -> TaskValidation:
    problem = command_problem(task, python)
    if problem:
        return TaskValidation(task.id, False, [f"test command cannot start: {problem}"])
    problems: list[str] = []
    seconds = 0.0
    ws = Workspace.create(task, python, sandbox=sandbox)
    try:
        before = ws.evaluate(timeout_s)
        seconds += before.seconds
        if not before.test_patch_applied:
            problems.append("test_patch does not apply")
        still_passing = [t for t in task.FAIL_TO_PASS if before.tests[t] == "passed"]
        if still_passing:
            problems.append(f"FAIL_TO_PASS pass without the fix: {', '.join(still_passing)}")
        broken = [t for t in task.PASS_TO_PASS if before.tests[t] != "passed"]
        if broken:
            problems.append(f"PASS_TO_PASS fail before the fix: {', '.join(f'{t} ({before.tests[t]})' for t in broken)}")
    finally:
        ws.cleanup()
    ws = Workspace.create(task, python, sandbox=sandbox)
    try:
        if not ws.apply_patch(task.patch):
            problems.append("gold patch does not apply")
        else:
            after = ws.evaluate(timeout_s)
            seconds += after.seconds
            bad = [f"{t} ({o})" for t, o in after.tests.items() if o != "passed"]
            if bad:
                problems.append(f"tests not passing with the gold patch: {', '.join(bad)}")
    finally:
        ws.cleanup()
    return TaskValidation(task.id, not problems, problems, round(seconds, 2))


def validate_taskset(taskset: Taskset, timeout_s: float = 120.0, sandbox: Sandbox = Sandbox(),
                     progress=None) -> list[TaskValidation]:
    python = resolve_interpreter(taskset.environment)
    out = []
    for task in taskset.tasks:
        result = validate_task(task, python, timeout_s, sandbox)
        if progress:
            progress(result)
        out.append(result)
    return out
