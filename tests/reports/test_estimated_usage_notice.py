"""The report says how many runs' tokens are estimated (an endpoint that reported no usage)."""

from __future__ import annotations

from conftest import grid, manifest, write_folder

from ctxbench.reports.report import write_report


def test_the_report_says_how_many_runs_have_estimated_tokens(tmp_path):
    runs = grid("baseline", [[True, True], [True, False]], tokens=2000)
    runs[1] = runs[1].model_copy(update={"usage_estimated": 3})
    runs[2] = runs[2].model_copy(update={"usage_estimated": 1})
    folder = write_folder(tmp_path / "exp", runs, manifest(["baseline"]))
    text = write_report(folder).markdown.read_text()
    assert "2 of 4 runs have estimated tokens: the endpoint reported no usage for 4 of their calls" in text


def test_no_notice_where_every_call_reported_its_usage(tmp_path):
    folder = write_folder(tmp_path / "exp", grid("baseline", [[True, True], [True, False]], tokens=2000),
                          manifest(["baseline"]))
    assert "estimated tokens" not in write_report(folder).markdown.read_text()
