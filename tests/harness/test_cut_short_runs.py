"""Runs cut short by the endpoint or by the harness: what they record, with a scripted model driving the
real tools in a real workspace."""

from __future__ import annotations

import gzip

from ctxbench.harness.protocols import TransientModelError
from test_failure_reasons import FINISH, GOLD, READ, edit, run_script


def test_a_model_error_after_the_fix_is_not_a_resolved_run(experiment_file, tmp_path):
    result, model = run_script(experiment_file, tmp_path, [edit(*GOLD), TransientModelError("HTTP 503 for 300 s")], {})
    assert set(result.tests.values()) == {"passed"} and "values[mid - 1]" in result.patch
    assert (result.resolved, result.failure_reason, result.turns) == (False, "model_error", 1)
    assert "HTTP 503 for 300 s" in result.error and result.prompt_tokens == 100


def test_a_harness_error_keeps_the_turns_and_tokens_of_its_transcript(experiment_file, tmp_path):
    steps = [READ, ("list_files", {}), edit(*GOLD), RuntimeError("a bug in the harness")]
    result, model = run_script(experiment_file, tmp_path, steps, {"model.pricing": {"input": 1.0, "output": 2.0}})
    assert result.failure_reason == "harness_error" and "a bug in the harness" in result.error
    assert (result.turns, result.prompt_tokens, result.completion_tokens, result.total_tokens) == (3, 300, 30, 330)
    assert result.peak_context_tokens > 0 and result.cost_usd == round((300 * 1.0 + 30 * 2.0) / 1e6, 8)


def test_tool_output_holding_a_key_value_is_scrubbed(experiment_file, tmp_path, monkeypatch):
    """Whatever a tool or a test prints passes the scrubber before the history and the transcript hold it
    (here a `*_API_KEY` whose value happens to be a line of the file the agent reads)."""
    secret = "Arithmetic mean of ``data``"
    monkeypatch.setenv("SOME_SERVICE_API_KEY", secret)
    read = ("read_file", {"path": "calc/stats.py"})
    result, model = run_script(experiment_file, tmp_path, [read, FINISH], {})
    assert result.turns == 2 and secret not in str(model.seen[1])
    assert "[redacted $SOME_SERVICE_API_KEY]" in str(model.seen[1])
