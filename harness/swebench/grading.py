"""Grading the way the SWE-bench harness grades: the instance's eval script, its log read by the
swebench package's parser for the repository, FAIL_TO_PASS/PASS_TO_PASS judged by its report.

Needs the optional `swebench` package (`pip install 'ctxbench[swebench]'`); it is imported on first
use (it takes seconds), never at ctxbench's import.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from ctxbench.harness.records.evaluation import TestOutcome
from ctxbench.harness.records.taskset_records import SwebenchGrading, Task

__all__ = ["swebench_problem", "eval_script", "grade_log", "GRADER"]

GRADER: Literal["swebench"] = "swebench"
_OUTCOMES: dict[str, TestOutcome] = {"PASSED": "passed", "XFAIL": "passed", "FAILED": "failed",
                                     "ERROR": "error", "SKIPPED": "skipped"}


def swebench_problem(grading: SwebenchGrading) -> str | None:
    """Why the swebench package cannot grade this instance (not installed, unknown parser), or None."""
    try:
        from swebench.harness.log_parsers import PARSER_REGISTRY
    except ImportError:
        return "grading it needs the swebench package: pip install 'ctxbench[swebench]'"
    if grading.log_parser not in PARSER_REGISTRY:
        return f"log_parser {grading.log_parser!r} is not one of the swebench package's parsers"
    return None


def _test_spec(task: Task, grading: SwebenchGrading, script: str) -> Any:
    from swebench.harness.utils import make_test_spec
    return make_test_spec({
        "instance_id": task.id, "image": task.container.image if task.container else "", "repo": task.repo_name,
        "version": grading.version, "FAIL_TO_PASS": list(task.FAIL_TO_PASS), "PASS_TO_PASS": list(task.PASS_TO_PASS),
        "log_parser": grading.log_parser, "eval_type": grading.eval_type, "eval_script": script})


def eval_script(task: Task, grading: SwebenchGrading) -> str:
    """The eval script to run in the container, as the swebench package assembles it (the test command's
    exit status recorded after its output). The workspace's base commit is its own first commit, so
    the instance's `base_commit` in the script is `HEAD` here: the same tree."""
    script = grading.eval_script
    if task.base_commit:
        script = script.replace(task.base_commit, "HEAD")
    return str(_test_spec(task, grading, script).eval_script)


def grade_log(task: Task, grading: SwebenchGrading, log: Path) -> tuple[dict[str, TestOutcome], bool, bool, bool]:
    """(each FAIL_TO_PASS/PASS_TO_PASS id's outcome, every FAIL_TO_PASS passed, every PASS_TO_PASS was
    kept, the log is a valid run) as the swebench package reads the eval script's log `log`."""
    from swebench.harness.constants import FAIL_TO_PASS, PASS_TO_PASS, EvalType
    from swebench.harness.grading import get_eval_tests_report, get_logs_eval
    spec = _test_spec(task, grading, grading.eval_script)
    status, valid = get_logs_eval(spec, str(log))
    ids = list(dict.fromkeys([*task.FAIL_TO_PASS, *task.PASS_TO_PASS]))
    tests = {t: _OUTCOMES.get(status[t], "failed") if t in status else "missing" for t in ids}
    if not valid:
        return tests, False, False, False
    report = get_eval_tests_report(status, {FAIL_TO_PASS: list(task.FAIL_TO_PASS),
                                            PASS_TO_PASS: list(task.PASS_TO_PASS)},
                                   eval_type=EvalType(grading.eval_type))
    f2p = not report[FAIL_TO_PASS]["failure"] and len(report[FAIL_TO_PASS]["success"]) == len(task.FAIL_TO_PASS)
    p2p = not report[PASS_TO_PASS]["failure"] and len(report[PASS_TO_PASS]["success"]) == len(task.PASS_TO_PASS)
    return tests, f2p, p2p, True
