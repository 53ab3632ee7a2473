import base64
import os
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from ctxbench.harness.cli.report import report
from ctxbench.reports import write_report

CHROMIUM = Path("/usr/bin/chromium")
PLOTS = {"completion.png", "stability.png", "tokens.png", "failures.png", "context_fill.png", "outcomes.png",
         "forest.png"}


def test_write_report_files_and_summary_csv(two_strategy_folder):
    paths = write_report(two_strategy_folder)
    assert paths.markdown == two_strategy_folder / "report.md"
    assert {p.name for p in paths.plots} == PLOTS
    assert all(p.stat().st_size > 5000 for p in paths.plots)
    csv = pd.read_csv(paths.summary_csv)
    assert list(csv["strategy"]) == ["baseline", "lean"]
    assert list(csv.columns[:4]) == ["strategy", "runs", "resolved", "completion_rate"]
    assert {"ci_low", "ci_high", "repeat_std", "tokens_mean"} <= set(csv.columns)
    assert csv.loc[0, "runs"] == 6 and csv.loc[1, "completion_rate"] == pytest.approx(2 / 6)


def test_report_markdown_opens_with_simulator_notice_and_sandbox_warning(two_strategy_folder):
    text = write_report(two_strategy_folder).markdown.read_text()
    lines = text.splitlines()
    assert lines[0].startswith("> Results from the simulated model `sim` — a stand-in for a model, not a model")
    assert "> Sandbox warning: sandbox fell back to none: no bwrap" in text
    assert "| baseline | 6 | 5 | 83.3% [2.1%, 99.9%]" in text  # two tasks: the interval over tasks is wide
    assert ("`lean` vs `baseline`: **too few tasks** in total tokens (total ×0.50, interval not estimable: too few "
            "tasks (2); typical task ×0.50) and **too few tasks** in completion") in text
    assert "| task-1 | 2/3 | 1/3 |" in text
    for name in PLOTS:
        assert f"(plots/{name})" in text


def test_report_of_a_real_model_has_no_simulator_notice(tmp_path, build):
    runs = build.grid("baseline", [[True, False]]) + build.grid("other", [[True, True]])
    folder = build.write_folder(tmp_path / "r", runs, build.manifest(["baseline", "other"], simulated=False),
                                transcripts=False)
    paths = write_report(folder, reference="other")
    text = paths.markdown.read_text()
    assert text.startswith("# ctxbench report — synthetic")
    assert "simulated" not in text
    assert "Paired comparison with `other`" in text
    assert "No transcripts in this folder" in text
    assert {p.name for p in paths.plots} == PLOTS - {"context_fill.png"}


def test_report_notes_an_experiment_without_baseline(tmp_path, build):
    runs = build.grid("lean", [[True, False]]) + build.grid("other", [[True, True]])
    folder = build.write_folder(tmp_path / "r", runs, build.manifest(["lean", "other"]), transcripts=False)
    text = write_report(folder).markdown.read_text()
    assert "The reference strategy `baseline` is not in this experiment" in text


def test_report_refuses_an_unknown_reference_and_writes_nothing(two_strategy_folder):
    good = write_report(two_strategy_folder).markdown.read_text()
    for pages in (two_strategy_folder / "runs").iterdir():
        shutil.rmtree(pages)
    result = CliRunner().invoke(report, [str(two_strategy_folder), "--reference", "laen"])
    assert result.exit_code == 2, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert "'laen'" in lines[0] and "did you mean 'lean'?" in lines[0] and "baseline, lean" in lines[0]
    assert (two_strategy_folder / "report.md").read_text() == good
    assert not any((two_strategy_folder / "runs").iterdir())  # not even the run pages


def test_report_of_an_interrupted_experiment_says_so_at_its_top(tmp_path, build):
    runs = build.grid("baseline", [[True, True, True], [True, False, True]])
    runs += build.grid("lean", [[True, False]])
    man = build.manifest(["baseline", "lean"])
    man["runs_planned"] = 12
    paths = write_report(build.write_folder(tmp_path / "cut", runs, man))
    lines = paths.markdown.read_text().splitlines()
    notice = ("> **Incomplete experiment**: 8 of 12 planned runs recorded (`baseline` 6 of 6, `lean` 2 of 6); it "
              "was interrupted or stopped")
    assert lines[0].startswith("> Results from the simulated model")  # the simulator notice stays first
    assert lines[2].startswith(notice), lines[:4]
    html = paths.html.read_text()
    assert "Incomplete experiment" in html and html.index("Incomplete experiment") < html.index("<h1")
    man["runs_planned"] = 8
    complete = write_report(build.write_folder(tmp_path / "whole", runs, man)).markdown.read_text()
    assert "Incomplete" not in complete


def test_summary_json_holds_each_strategy_under_the_evaluation_script_names(two_strategy_folder):
    import json

    paths = write_report(two_strategy_folder)
    assert paths.summary_json == two_strategy_folder / "summary.json"
    data = json.loads(paths.summary_json.read_text())
    assert data["version"] == 1 and data["experiment"] == "synthetic" and data["model"] == "sim-coder"
    baseline, lean = data["strategies"]
    assert (baseline["framework"], lean["framework"]) == ("baseline", "lean")
    assert baseline["total_tasks"] == 2 and baseline["repeat"] == 3 and baseline["runs"] == 6
    assert baseline["completion_rate"] == pytest.approx(5 / 6) and lean["completion_rate"] == pytest.approx(2 / 6)
    assert baseline["avg_tokens"] == 2000 and lean["avg_tokens"] == 1000
    assert baseline["avg_time_seconds"] == pytest.approx(2.0)
    assert baseline["failures"] == ["max_turns"] and baseline["failure_counts"] == {"max_turns": 1}
    assert lean["failures"] == ["tests_failed"] and lean["failure_counts"] == {"tests_failed": 4}


def test_report_command(two_strategy_folder, tmp_path):
    runner = CliRunner()
    result = runner.invoke(report, [str(two_strategy_folder), "--reference", "lean"])
    assert result.exit_code == 0, result.output
    assert "report.html" in result.output and "summary.json" in result.output
    assert "Paired comparison with `lean`" in (two_strategy_folder / "report.md").read_text()
    (tmp_path / "not-results").mkdir()
    bad = runner.invoke(report, [str(tmp_path / "not-results")])
    assert bad.exit_code == 2 and "no manifest.json" in bad.output


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.images: list[dict[str, str]] = []
        self.tables: dict[str, int] = {}
        self._table: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "img":
            self.images.append(attrs)
        elif tag == "table":
            self._table = attrs.get("id", "")
            self.tables[self._table] = 0
        elif tag == "tr" and self._table is not None:
            self.tables[self._table] += 1

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = None


def test_report_html_renders_in_headless_chromium(two_strategy_folder, tmp_path):
    if not CHROMIUM.exists():
        if os.environ.get("CI"):
            pytest.fail("CI is set but /usr/bin/chromium is missing: the HTML report must be checked in a browser")
        pytest.skip("chromium not installed")
    paths = write_report(two_strategy_folder)
    html_copy = tmp_path / "elsewhere" / "report.html"  # self-contained: nothing next to it
    html_copy.parent.mkdir()
    shutil.copy(paths.html, html_copy)
    profile = tmp_path / "profile"
    proc = subprocess.run(
        [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         f"--user-data-dir={profile}", "--dump-dom", html_copy.as_uri()],
        capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    dom = _Dom()
    dom.feed(proc.stdout)
    assert dom.tables.get("summary") == 3  # header + baseline + lean
    assert dom.tables.get("comparison") == 2
    assert len(dom.images) == len(paths.plots) == 7
    for img in dom.images:
        src = img["src"]
        assert src.startswith("data:image/png;base64,")
        png = base64.b64decode(src.split(",", 1)[1])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
        width, height = (int(v) for v in img["data-rendered"].split("x"))
        assert width > 100 and height > 100  # decoded and laid out by the browser
