"""`tasks validate`: every task's FAIL_TO_PASS fails before the gold patch, and all pass after it."""

from __future__ import annotations

from dataclasses import dataclass, field

from ctxbench.harness.records import Task, Taskset
from ctxbench.harness.sandbox import Sandbox
from ctxbench.harness.environments import base_evaluation, environment_for
from ctxbench.harness.environments.workspace import Evaluation

__all__ = ["TaskValidation", "validate_task", "validate_taskset", "base_collection_failure"]


@dataclass
class TaskValidation:
    task_id: str
    ok: bool
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    output: str = ""
    """Tail of the test output of the first evaluation that showed a problem."""


def _not_collected(evaluation: Evaluation) -> str:
    return f"the tests could not be collected (exit code {evaluation.exit_code}; see the output)"


def base_collection_failure(task: Task, python: str, timeout_s: float, sandbox: Sandbox) -> str | None:
    """The test output when the task's tests cannot be collected at the base commit (with its hidden
    tests applied): the taskset's or its environment's fault, not an agent's. None when they can.
    Checked once per task, interpreter and process (`base_evaluation`)."""
    evaluation = base_evaluation(task, python, timeout_s, sandbox)
    return evaluation.output_tail if evaluation.not_collected else None


def validate_task(task: Task, python: str, timeout_s: float = 120.0, sandbox: Sandbox = Sandbox()) -> TaskValidation:
    problem = environment_for(task).problem(task, python)
    if problem:
        return TaskValidation(task.id, False, [f"test command cannot start: {problem}"])
    problems: list[str] = []
    seconds = 0.0
    output = ""
    ws = environment_for(task).prepare(task, python, sandbox=sandbox)
    try:
        before = ws.evaluate(timeout_s)
        seconds += before.seconds
        if not before.test_patch_applied:
            problems.append("test_patch does not apply")
        if before.not_collected:
            problems.append(_not_collected(before))
        still_passing = [t for t in task.FAIL_TO_PASS if before.tests[t] == "passed"]
        if still_passing:
            problems.append(f"FAIL_TO_PASS pass without the fix: {', '.join(still_passing)}")
        broken = [t for t in task.PASS_TO_PASS if before.tests[t] != "passed"]
        if broken:
            problems.append(f"PASS_TO_PASS fail before the fix: {', '.join(f'{t} ({before.tests[t]})' for t in broken)}")
        if problems:
            output = before.output_tail
    finally:
        ws.cleanup()
    ws = environment_for(task).prepare(task, python, sandbox=sandbox)
    try:
        if not ws.apply_patch(task.patch):
            problems.append("gold patch does not apply")
        else:
            after = ws.evaluate(timeout_s)
            seconds += after.seconds
            if after.not_collected and not before.not_collected:
                problems.append(_not_collected(after) + " with the gold patch")
            bad = [f"{t} ({o})" for t, o in after.tests.items() if o != "passed"]
            if bad:
                problems.append(f"tests not passing with the gold patch: {', '.join(bad)}")
                output = output or after.output_tail
    finally:
        ws.cleanup()
    return TaskValidation(task.id, not problems, problems, round(seconds, 2), output)


def validate_taskset(taskset: Taskset, timeout_s: float = 120.0, sandbox: Sandbox = Sandbox(),
                     progress=None) -> list[TaskValidation]:
    interpreters = {t.id: environment_for(t).interpreter(t.runs_in) for t in taskset.tasks}
    out = []
    for task in taskset.tasks:
        result = validate_task(task, interpreters[task.id], timeout_s, sandbox)
        if progress:
            progress(result)
        out.append(result)
    return out
