"""The table `ctxbench run` prints gives the report's own figures (ctxbench.reports.summarize)."""

from __future__ import annotations

import pytest

from ctxbench.harness.cli.summary import table_rows
from ctxbench.harness.records import RunResult
from ctxbench.reports.loading import runs_frame
from ctxbench.reports.summary import summarize


def run(strategy: str, i: int, reason: str | None, tokens: int) -> RunResult:
    return RunResult(experiment_id="e", run_id=f"{strategy}/t{i % 3}/{i}", strategy=strategy, task_id=f"t{i % 3}",
                     repeat=i, seed=1, resolved=reason is None, failure_reason=reason, turns=3,
                     prompt_tokens=tokens - 1, completion_tokens=1, strategy_tokens=0, total_tokens=tokens,
                     peak_context_tokens=10, wall_s=1.0)


def test_the_table_agrees_with_the_report_summary():
    reasons = [None, "no_edit", None, "harness_error", "tests_failed", None, "no_edit", "max_turns", None]
    results = [run("masking", i, reason, 100 + 37 * i) for i, reason in enumerate(reasons)]
    results += [run("baseline", i, reason, 900 - 11 * i) for i, reason in enumerate(reversed(reasons))]
    results += [run("broken", 0, "harness_error", 5)]
    rows = table_rows(results)
    report = summarize(runs_frame(results))
    assert [r.strategy for r in rows] == [s.strategy for s in report] == ["masking", "baseline", "broken"]
    for row, s in zip(rows, report):
        assert (row.runs, row.resolved, row.harness_errors) == (s.runs, s.resolved, s.harness_errors)
        assert {k: v for k, v in s.failures.items() if v} == row.failures
        if row.runs:
            assert row.completion_rate == pytest.approx(s.completion_rate)
            assert row.tokens_mean == pytest.approx(s.tokens_mean)
    assert rows[2].runs == 0 and rows[2].harness_errors == 1


def test_an_arm_whose_model_never_called_a_tool_is_flagged(capsys):
    """A model whose calls were never parsed (written as text, read as native) still ends each run with a
    failure reason: the end of `ctxbench run` says that nothing was measured."""
    from ctxbench.harness.cli.summary import print_summary

    called = [run("baseline", i, "no_edit", 100).model_copy(update={"tool_calls": {"read_file": 1}}) for i in range(3)]
    silent = [run("trimmer", i, "invalid_action", 100) for i in range(3)]
    print_summary(called + silent)
    err = capsys.readouterr().err
    assert "no run of trimmer called a tool: nothing was measured" in err and "baseline" not in err
