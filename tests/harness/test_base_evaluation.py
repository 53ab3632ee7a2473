"""A run that changes nothing is judged on the base's evaluation, run once per task and process."""

import threading

from ctxbench.harness.config import load_config
from ctxbench.harness.run.runner import plan_runs, prepare, run_one
from ctxbench.harness.environments.baseline import base_evaluation
from ctxbench.harness.environments.workspace import Workspace, remove_templates
from scripted import ScriptedModel

TASK = "calc-median-even-length"
FINISH = ("finish", {})
READ = ("read_file", {"path": "calc/stats.py", "start_line": 1, "end_line": 5})
GOLD = ("edit_file", {"path": "calc/stats.py", "old_text": "    return (values[mid] + values[mid + 1]) / 2",
                      "new_text": "    return (values[mid - 1] + values[mid]) / 2"})


def make_runner(experiment_file, tmp_path, *overrides):
    config = load_config(experiment_file(), [f"taskset.ids=[{TASK}]", *overrides])
    ctx = prepare(config, tmp_path, tmp_path / "out")
    spec = plan_runs(config, ctx.taskset)[0]

    def run(steps):
        return run_one(ctx, spec, model_factory=lambda task, counter, seed: ScriptedModel(steps)).result
    return run


def test_unchanged_runs_share_the_base_evaluation(experiment_file, tmp_path):
    run = make_runner(experiment_file, tmp_path)
    try:
        first = run([READ, FINISH])
        second = run([FINISH])
        fixed = run([GOLD, FINISH])
    finally:
        remove_templates()
    assert first.patch == second.patch == ""
    assert first.failure_reason == second.failure_reason == "no_edit"
    assert first.test_s > 0  # the base was evaluated once, in the first run's workspace
    assert second.test_s == 0.0  # no test command ran: no run_tests, and the evaluation was the first's
    assert second.tests == first.tests
    assert first.tests["tests/test_stats.py::test_median_even_length"] != "passed"
    assert fixed.resolved and fixed.test_s > 0  # a run with a patch is evaluated on its own
    assert fixed.tests != first.tests


def test_a_kept_workspace_is_evaluated_itself_and_agrees(experiment_file, tmp_path):
    shared = make_runner(experiment_file, tmp_path / "a")
    kept = make_runner(experiment_file, tmp_path / "b", "keep_workspaces=true")
    try:
        base = shared([FINISH])
        own = kept([FINISH])
    finally:
        remove_templates()
    assert own.test_s > 0 and own.workspace is not None
    assert own.tests == base.tests and own.failure_reason == base.failure_reason


def test_the_shared_evaluation_ends_with_the_experiment(experiment_file, tmp_path):
    run = make_runner(experiment_file, tmp_path)
    try:
        assert run([FINISH]).test_s > 0
        assert run([FINISH]).test_s == 0.0
        remove_templates()  # what the runner does when an experiment ends
        assert run([FINISH]).test_s > 0
    finally:
        remove_templates()


def test_runs_in_flight_that_ask_at_once_share_one_evaluation(experiment_file, tmp_path):
    """Threads of one worker process reaching the judgement together: one evaluates the base, the
    others wait for it and get its outcomes (no test command of their own)."""
    config = load_config(experiment_file(), [f"taskset.ids=[{TASK}]"])
    ctx = prepare(config, tmp_path, tmp_path / "out")
    task = ctx.taskset.tasks[0]
    python, timeout = ctx.interpreters[task.id], config.limits.test_timeout_s
    workers = 6
    start = threading.Barrier(workers)
    results: list = [None] * workers

    def judge(i: int) -> None:
        ws = Workspace.create(task, python, sandbox=ctx.sandbox)
        try:
            start.wait()
            results[i] = base_evaluation(task, python, timeout, ctx.sandbox, ws)
        finally:
            ws.cleanup()

    threads = [threading.Thread(target=judge, args=(i,)) for i in range(workers)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        remove_templates()
    assert all(r is not None for r in results)
    assert sum(r.seconds > 0 for r in results) == 1  # one test command ran
    assert all(r.tests == results[0].tests and r.resolved == results[0].resolved for r in results)
    assert results[0].tests["tests/test_stats.py::test_median_even_length"] != "passed"
