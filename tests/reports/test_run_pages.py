"""Run pages explain a run (statement, prompt, tests, patch, failure evidence, the other arms) and are
built reading runs.jsonl once, whatever the number of runs."""

from __future__ import annotations

import html
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

from ctxbench.harness.config import load_config
from ctxbench.harness.records import RunResult
from ctxbench.harness.records.results import read_results
from ctxbench.harness.run.runner import prepare, run_experiment
from ctxbench.harness.tasks.taskset import builtin_tasksets_dir, load_taskset
from ctxbench.reports import write_report
from tests.reports.conftest import grid, manifest, write_folder

TASK = "textutils-wrap-overflow"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """One smoke task where observation masking (default params) ends without an edit and baseline resolves."""
    out = tmp_path_factory.mktemp("pages") / "qs"
    config = load_config("quickstart", ["repeats=1", "workers=1", "sandbox=none", f"taskset={{path: smoke, ids: [{TASK}]}}",
                                        "strategies=[{name: baseline}, {name: observation_masking}]"])
    run_experiment(prepare(config, Path("."), out), progress=False)
    write_report(out)
    return out


def _runs(folder: Path) -> dict[str, RunResult]:
    return {r.strategy: r for r in read_results(folder / "runs.jsonl")}


def test_a_failed_run_page_shows_statement_prompt_tests_evidence_and_the_other_arm(folder: Path) -> None:
    runs = _runs(folder)
    masked, baseline = runs["observation_masking"], runs["baseline"]
    assert baseline.resolved and not masked.resolved and masked.failure_reason == "no_edit"
    page = (folder / "runs" / "observation_masking" / f"{TASK}.0.html").read_text()
    task = next(t for t in load_taskset(builtin_tasksets_dir() / "smoke").tasks if t.id == TASK)
    assert "<details><summary>Problem statement</summary>" in page
    assert html.escape(task.problem_statement.strip()[:80], quote=False) in page
    system = json.loads((folder / "manifest.json").read_text())["system_prompt"]
    assert "<details><summary>System prompt</summary>" in page and system
    assert html.escape(system.strip()[:80], quote=False) in page
    for test in task.FAIL_TO_PASS:
        assert f"<td>FAIL_TO_PASS</td><td><code>{test}</code></td><td class=\"verdict\"" in page
    for test in task.PASS_TO_PASS:
        assert f"<td>PASS_TO_PASS</td><td><code>{test}</code></td>" in page
    assert "<strong>Failure reason</strong> <code>no_edit</code>" in page
    assert "The final patch is empty: the agent changed no file." in page
    assert '<a href="../../report.html">' in page
    assert f'<a href="../baseline/{TASK}.0.html">baseline</a>' in page
    assert "Side by side with <code>baseline</code> (the outcomes differ)" in page
    assert html.escape(baseline.patch, quote=False) in page  # the other arm's patch, beside this one
    assert page.count("<details><summary>Turn ") == masked.turns


def test_a_resolved_run_page_shows_its_patch_and_links_the_other_arm(folder: Path) -> None:
    baseline = _runs(folder)["baseline"]
    page = (folder / "runs" / "baseline" / f"{TASK}.0.html").read_text()
    assert baseline.patch.strip() and f"<pre>{html.escape(baseline.patch, quote=False)}</pre>" in page
    assert f'<a href="../observation_masking/{TASK}.0.html">observation_masking</a>' in page
    assert "<strong>Failure reason</strong>" not in page
    assert page.count("<details><summary>Turn ") == baseline.turns


_OPENED: list[str] = []
_WATCHING: list[bool] = []


def _watch(event: str, args: tuple) -> None:
    if _WATCHING and event == "open" and isinstance(args[0], (str, Path)):
        _OPENED.append(str(args[0]))


sys.addaudithook(_watch)


def _reads(path: Path) -> Counter[str]:
    """How many times write_report opens runs.jsonl and each transcript."""
    _OPENED.clear()
    _WATCHING.append(True)
    try:
        write_report(path)
    finally:
        _WATCHING.clear()
    return Counter(Path(p).name if p.endswith("runs.jsonl") else "transcript" for p in _OPENED
                   if p.endswith("runs.jsonl") or p.endswith(".jsonl.gz"))


@pytest.mark.parametrize("tasks", [2, 20])
def test_run_pages_read_runs_jsonl_once_and_each_transcript_twice(tmp_path: Path, tasks: int) -> None:
    outcomes = [[True, False, True]] * tasks
    runs = grid("baseline", outcomes) + grid("lean", outcomes)
    path = write_folder(tmp_path / "exp", runs, manifest(["baseline", "lean"]))
    reads = _reads(path)
    assert len(list((path / "runs").rglob("*.html"))) == len(runs) == 6 * tasks
    assert reads["runs.jsonl"] == 1
    assert reads["transcript"] == 2 * len(runs)  # once for the turns frame, once for the run's page
