"""Every failure reason, produced by a scripted model driving the real tools in a real workspace."""

import shutil

import pytest

from ctxbench.harness.config import load_config
from ctxbench.harness.records.failures import FAILURE_REASONS
from ctxbench.harness.protocols import ContextLengthExceeded, RequestRefused, TransientModelError
from ctxbench.harness.run.runner import plan_runs, prepare, run_one
from scripted import ScriptedModel

TASK = "calc-median-even-length"
GOLD = ("calc/stats.py", "    return (values[mid] + values[mid + 1]) / 2", "    return (values[mid - 1] + values[mid]) / 2")
BREAK_MEAN = ("calc/stats.py", "    return math.fsum(values) / len(values)", "    return math.fsum(values) / (len(values) + 1)")
HARMLESS = ("calc/stats.py", '"""Arithmetic mean of ``data``."""', '"""Arithmetic mean of ``data`` (unchanged)."""')


def edit(path, old, new):
    return ("edit_file", {"path": path, "old_text": old, "new_text": new})


FINISH = ("finish", {})
LIST = ("list_files", {})
READ = ("read_file", {"path": "calc/stats.py", "start_line": 1, "end_line": 5})

SCRIPTS = {
    "resolved": ([edit(*GOLD), FINISH], {}),
    "tests_failed": ([edit(*HARMLESS), FINISH], {}),
    "regression": ([edit(*GOLD), edit(*BREAK_MEAN), FINISH], {}),
    "no_edit": ([FINISH], {}),
    "max_turns": ([LIST, READ] * 5, {"limits.max_turns": 4}),
    "token_budget": ([LIST, READ] * 20, {"limits.max_tokens_per_run": 1000}),
    "timeout": ([LIST], {"limits.run_timeout_s": 0.001}),
    "context_overflow": ([ContextLengthExceeded("maximum context length is 8192 tokens")], {}),
    "loop": ([READ, READ, READ, READ], {}),
    "invalid_action": ([("read_file", "{oops"), ("nope", {}), ("edit_file", {"path": "x"})], {}),
    "model_error": ([TransientModelError("503 after 4 retries")], {}),
    "request_refused": ([RequestRefused("bad request (400): Cannot have 2 or more assistant messages")], {}),
    "harness_error": ([RuntimeError("a bug in the harness")], {}),
    "taskset_error": ([edit(*GOLD), FINISH], {}),  # on a copy of the taskset whose tests cannot be collected
    "agent_error": ([], {"agent": "{command: [sh, -c, 'echo the agent failed; exit 3']}"}),  # an external agent
}


def broken_taskset(smoke_dir, tmp_path):
    """The smoke taskset with a conftest.py that fails at import: no test can be collected, fix or not."""
    shutil.copytree(smoke_dir, tmp_path / "broken")
    (tmp_path / "broken" / "repos" / "calc" / "conftest.py").write_text("raise ImportError('no such plugin')\n")
    return tmp_path / "broken"


def run_script(experiment_file, tmp_path, steps, overrides):
    config = load_config(experiment_file(), [f"taskset.ids=[{TASK}]", *(f"{k}={v}" for k, v in overrides.items())])
    ctx = prepare(config, tmp_path, tmp_path / "out")
    spec = plan_runs(config, ctx.taskset)[0]
    model = ScriptedModel(steps)
    return run_one(ctx, spec, model_factory=lambda task, counter, seed: model).result, model


@pytest.mark.parametrize("expected", list(SCRIPTS))
def test_each_failure_reason_is_produced(experiment_file, tmp_path, smoke_dir, expected):
    steps, overrides = SCRIPTS[expected]
    if expected == "taskset_error":
        overrides = {"taskset.path": str(broken_taskset(smoke_dir, tmp_path))}
    result, model = run_script(experiment_file, tmp_path, steps, overrides)
    if expected == "resolved":
        assert result.resolved and result.failure_reason is None and result.turns == 2
        assert "values[mid - 1]" in result.patch
        return
    assert not result.resolved
    assert result.failure_reason == expected, result.error
    if expected == "harness_error":
        assert "a bug in the harness" in result.error
    if expected == "request_refused":
        assert "Cannot have 2 or more assistant messages" in result.error
    if expected == "context_overflow":
        assert result.error == ("the server refused the request as over the model's context window: maximum context "
                                "length is 8192 tokens")
    if expected == "agent_error":
        assert "exit code 3" in result.error and "the agent failed" in result.error
    if expected == "taskset_error":
        assert "values[mid - 1]" in result.patch and "ImportError: no such plugin" in result.error
    if expected == "max_turns":
        assert result.turns == 4 and model.calls == 4
    if expected == "loop":
        assert result.turns == 3
    if expected == "invalid_action":
        assert result.invalid_actions == 3
    if expected == "token_budget":
        assert result.total_tokens >= 1000 and result.turns == 10
    if expected == "regression":
        assert result.tests["tests/test_stats.py::test_mean"] == "failed"
        assert all(result.tests[t] == "passed" for t in ("tests/test_stats.py::test_median_even_length",))


def test_a_context_overflow_the_strategy_refused_says_so_in_error(experiment_file, tmp_path):
    """The strategy's budget, not the server, ended the run: `error` tells the two apart."""
    reads = [("read_file", {"path": p}) for p in ("calc/stats.py", "calc/ops.py", "calc/units.py", "calc/__init__.py")]
    overrides = {"strategies": "[{name: summarizer, params: {keep_recent: 30}}]", "model.context_window": 4000,
                 "model.max_output_tokens": 256}
    result, model = run_script(experiment_file, tmp_path, reads, overrides)
    assert result.failure_reason == "context_overflow" and model.calls == 3
    assert result.error.startswith("the strategy refused: its context does not fit its budget: summarizer: task + "
                                   "summary + last 3 turns take "), result.error


def test_every_reason_has_a_script():
    assert set(FAILURE_REASONS) <= set(SCRIPTS)
