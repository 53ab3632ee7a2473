"""An arm in which no run called a tool measured nothing: the report opens by saying so, and its verdicts
say it instead of a verdict."""

from __future__ import annotations

import pandas as pd
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.reports import write_report
from ctxbench.reports.metrics import NOTHING_MEASURED


def folder_with_a_silent_arm(tmp_path, build):
    """`lean` never called a tool (its runs record no tool call); `other` did, as `baseline`."""
    outcomes = [[True, True, False]] * 6
    runs = (build.grid("baseline", outcomes, tokens=2000) + build.grid("other", outcomes, tokens=1000)
            + [r.model_copy(update={"tool_calls": {}}) for r in build.grid("lean", [[False] * 3] * 6, tokens=500)])
    return build.write_folder(tmp_path / "r", runs, build.manifest(["baseline", "lean", "other"]), transcripts=False)


def test_the_report_opens_with_a_notice_for_an_arm_that_called_no_tool(tmp_path, build):
    text = write_report(folder_with_a_silent_arm(tmp_path, build)).markdown.read_text()
    opening = text[:text.index("# ctxbench report")]
    assert ("> **No tool calls**: no run of `lean` called a tool: nothing was measured, and every verdict with it "
            f'reads "{NOTHING_MEASURED}"') in opening
    assert "`other`" not in opening and "`baseline` called" not in opening


def test_an_arm_that_called_no_tool_gets_no_verdict(tmp_path, build):
    folder = folder_with_a_silent_arm(tmp_path, build)
    paths = write_report(folder)
    text = paths.markdown.read_text()
    assert (f"`lean` vs `baseline`: **{NOTHING_MEASURED}** in total tokens (total ×0.25") in text
    assert f"and **{NOTHING_MEASURED}** in completion" in text
    assert "`other` vs `baseline`: **too few tasks** in total tokens" in text
    verdicts = pd.read_csv(paths.comparisons_csv).set_index("strategy")
    assert verdicts.loc["lean", "verdict"] == NOTHING_MEASURED == verdicts.loc["lean", "token_verdict"]
    assert verdicts.loc["other", "token_verdict"] == "too few tasks" == verdicts.loc["other", "verdict"]
    row = next(line for line in text.splitlines() if line.startswith("| lean |"))
    assert row.count(NOTHING_MEASURED) == 2, row
    compared = CliRunner().invoke(cli, ["compare", str(folder), "--strategies", "baseline", "lean"])
    assert compared.exit_code == 0 and f"**{NOTHING_MEASURED}** in completion" in compared.output


def test_harness_errors_alone_do_not_make_an_arm_silent(tmp_path, build):
    """A harness_error run that called no tool is left out: the arm's other runs called tools."""
    runs = build.grid("baseline", [[True, False]] * 3) + build.grid("lean", [[True, True]] * 3)
    runs = [r.model_copy(update={"tool_calls": {}, "failure_reason": "harness_error", "resolved": False})
            if r.strategy == "lean" and r.repeat == 1 else r for r in runs]
    folder = build.write_folder(tmp_path / "r", runs, build.manifest(["baseline", "lean"]), transcripts=False)
    text = write_report(folder).markdown.read_text()
    assert "harness_error" in text and "No tool calls" not in text and NOTHING_MEASURED not in text
