import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxbench.harness.cli.nightly import nightly
from ctxbench.reports.fixed import FixedVariablesDiffer
from ctxbench.reports.loading import load_results
from ctxbench.reports.nightly import check_regressions, nightly_check


def outcomes(build, pattern, tokens=None, strategy="baseline"):
    tokens = tokens or [1000 + 37 * i for i in range(len(pattern))]
    return [build.run(strategy, f"task-{i}", 0, ok, tokens=t) for i, (ok, t) in enumerate(zip(pattern, tokens))]


def folder(build, path, runs, created, **model):
    man = build.manifest(["baseline"], created=created, model=model or None)
    return load_results(build.write_folder(path, runs, man, transcripts=False))


def test_planted_completion_regression_exits_1(tmp_path, build):
    prev = folder(build, tmp_path / "a", outcomes(build, [True] * 10), "2025-01-01T02:00:00+00:00")
    cur = folder(build, tmp_path / "b", outcomes(build, [False] * 8 + [True] * 2), "2025-01-02T02:00:00+00:00")
    check = check_regressions(prev, cur)
    (s,) = check.strategies
    assert s.completion_fell and not s.tokens_rose
    assert s.comparison.mcnemar_p == pytest.approx(2 / 256)
    assert s.comparison.completion.verdict == "worse"
    assert check.controlled
    assert check.messages() == ["REGRESSION baseline (completion fell): completion 100.0% -> 20.0% (-80.0 pts "
                                "[-100.0, -49.8] 95%), tokens ×1.00 [1.00, 1.00] 95%; nothing else differs"]
    assert check.regressed == ["baseline"] and check.exit_code == 1


def test_unchanged_run_exits_0(tmp_path, build):
    runs = outcomes(build, [True, False] * 5)
    prev = folder(build, tmp_path / "a", runs, "2025-01-01T02:00:00+00:00")
    cur = folder(build, tmp_path / "b", runs, "2025-01-02T02:00:00+00:00")
    check = check_regressions(prev, cur)
    assert check.regressed == [] and check.exit_code == 0


def test_a_fall_it_cannot_resolve_is_cant_tell_exit_4_not_no_regression(tmp_path, build):
    prev = folder(build, tmp_path / "a", outcomes(build, [True] * 10), "2025-01-01T02:00:00+00:00")
    cur = folder(build, tmp_path / "b", outcomes(build, [False] * 3 + [True] * 7), "2025-01-02T02:00:00+00:00")
    check = check_regressions(prev, cur)
    (s,) = check.strategies
    assert s.comparison.completion.verdict == "inconclusive" and not s.regressed
    assert s.status == "can't tell" and check.cant_tell == ["baseline"] and check.regressed == []
    assert check.exit_code == 4
    (message,) = check.messages()
    assert message.startswith("CAN'T TELL baseline (completion lower on 3 of 10 tasks, undecided: too few runs to "
                              "tell a regression from noise): completion 100.0% -> 70.0% (-30.0 pts")
    assert " 90%), tokens" in message  # the bounded interval of an undecided verdict, at its own level
    assert check.conclusion().startswith("CAN'T TELL against a: baseline (completion lower on 3 of 10 tasks, "
                                         "undecided: too few runs")
    history = tmp_path
    text = nightly_check(history, tmp_path / "b").trend_md.read_text()
    assert "**Can't tell:** `baseline` (completion lower on 3 of 10 tasks" in text
    assert "**CAN'T TELL** (completion lower on 3 of 10 tasks" in text
    assert "fell" not in text


def test_a_token_rise_it_cannot_resolve_is_worded_a_rise(tmp_path, build):
    base = [1000 + 37 * i for i in range(3)]
    prev = folder(build, tmp_path / "a", outcomes(build, [True] * 3, base), "2025-01-01T02:00:00+00:00")
    cur = folder(build, tmp_path / "b", outcomes(build, [True] * 3, [2 * t for t in base]), "2025-01-02T02:00:00+00:00")
    check = check_regressions(prev, cur, token_ratio=1.2)
    assert check.exit_code == 4 and check.cant_tell == ["baseline"]
    conclusion = check.conclusion()
    assert conclusion.startswith("CAN'T TELL against a: baseline (tokens ×2.00 above ×1.2 on 3 tasks: too few runs "
                                 "to tell a rise from noise)")
    assert "fell" not in conclusion and "fell" not in nightly_check(tmp_path, tmp_path / "b").trend_md.read_text()


def test_a_run_no_task_of_which_fell_is_ok(tmp_path, build):
    prev = folder(build, tmp_path / "a", outcomes(build, [True] * 8 + [False] * 2), "2025-01-01T02:00:00+00:00")
    cur = folder(build, tmp_path / "b", outcomes(build, [True] * 9 + [False]), "2025-01-02T02:00:00+00:00")
    check = check_regressions(prev, cur)
    assert check.strategies[0].status == "ok" and check.exit_code == 0
    assert check.messages()[0].startswith("OK baseline: completion 80.0% -> 90.0%")
    assert check.conclusion() == "no regression against a"


def test_token_rise_beyond_ratio_is_a_regression(tmp_path, build):
    base = [1000 + 37 * i for i in range(10)]
    prev = folder(build, tmp_path / "a", outcomes(build, [True] * 10, base), "2025-01-01T02:00:00+00:00")
    doubled = folder(build, tmp_path / "b", outcomes(build, [True] * 10, [2 * t for t in base]), "2025-01-02T02:00:00+00:00")
    slightly = folder(build, tmp_path / "c", outcomes(build, [True] * 10, [int(1.1 * t) for t in base]), "2025-01-02T02:00:00+00:00")
    check = check_regressions(prev, doubled, token_ratio=1.2)
    assert check.strategies[0].tokens_rose and check.exit_code == 1
    assert check_regressions(prev, slightly, token_ratio=1.2).exit_code == 0
    assert check_regressions(prev, doubled, token_ratio=2.5).exit_code == 0


def test_regression_check_with_other_fixed_variables_says_what_differs(tmp_path, build):
    prev = folder(build, tmp_path / "a", outcomes(build, [True] * 10), "2025-01-01T02:00:00+00:00")
    cur = folder(build, tmp_path / "b", outcomes(build, [False] * 9 + [True]), "2025-01-02T02:00:00+00:00",
                 context_window=4000)
    check = check_regressions(prev, cur)
    assert not check.controlled
    assert check.differences == ("model: model.context_window: 16000 -> 4000",)
    (message,) = check.messages()
    assert message.startswith("REGRESSION baseline (completion fell): completion 100.0% -> 10.0% (-90.0 pts")
    assert message.endswith("what differs: model: model.context_window: 16000 -> 4000")


def test_strategy_param_change_under_the_same_label_is_named(tmp_path, build):
    a = build.manifest(["baseline"], created="2025-01-01T02:00:00+00:00")
    b = build.manifest(["baseline"], created="2025-01-02T02:00:00+00:00")
    a["strategies"][0]["params"] = {"limit": 1200}
    b["strategies"][0]["params"] = {"limit": 200}
    prev = load_results(build.write_folder(tmp_path / "a", outcomes(build, [True] * 10), a, transcripts=False))
    cur = load_results(build.write_folder(tmp_path / "b", outcomes(build, [False] * 10), b, transcripts=False))
    check = check_regressions(prev, cur)
    assert check.differences == ("strategy baseline: params.limit: 1200 -> 200",)
    assert check.regressed == ["baseline"]
    assert "what differs: strategy baseline: params.limit: 1200 -> 200" in check.messages()[0]


def test_nightly_check_uses_latest_comparable_run_and_writes_trend(tmp_path, build):
    history = tmp_path / "history"
    folder(build, history / "2025-01-01T020000Z", outcomes(build, [False] * 10), "2025-01-01T02:00:00+00:00")
    folder(build, history / "2025-01-02T020000Z", outcomes(build, [True] * 10), "2025-01-02T02:00:00+00:00")
    folder(build, history / "2025-01-03T020000Z", outcomes(build, [True] * 10), "2025-01-03T02:00:00+00:00", temperature=0.9)
    folder(build, history / "2025-01-04T020000Z", outcomes(build, [False] * 8 + [True] * 2), "2025-01-04T02:00:00+00:00")
    outcome = nightly_check(history, history / "2025-01-04T020000Z")
    assert outcome.check.previous.name == "2025-01-03T020000Z"  # the latest run, with another model config
    assert not outcome.check.controlled
    assert outcome.exit_code == 1
    text = outcome.trend_md.read_text()
    assert text.startswith("> Results from the simulated model")
    assert "**Not a controlled comparison**" in text and "model.temperature: 0.9 -> 0.0" in text
    assert "**REGRESSION** (completion fell)" in text
    assert text.count("| baseline |") == 4  # every run of the experiment stays in the trend
    assert "| 2025-01-03T020000Z * | baseline |" in text
    assert outcome.trend_png.stat().st_size > 10_000


def test_nightly_check_without_history_exits_0(tmp_path, build):
    history = tmp_path / "history"
    folder(build, history / "first", outcomes(build, [True] * 3), "2025-01-01T02:00:00+00:00")
    outcome = nightly_check(history, history / "first")
    assert outcome.check.previous is None and outcome.exit_code == 0
    assert "nothing to compare" in outcome.trend_md.read_text()


EXPERIMENT = """\
name: nightly-smoke
taskset:
  path: smoke
  ids: [calc-median-even-length, calc-fahrenheit-to-celsius]
strategies:
  - name: baseline
repeats: 1
sandbox: none
workers: 1
"""


def _scale_tokens(run_dir: Path, factor: float) -> None:
    path = run_dir / "runs.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for row in rows:
        row["total_tokens"] = int(row["total_tokens"] * factor)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_nightly_command_end_to_end(tmp_path):
    experiment = tmp_path / "nightly.yaml"
    experiment.write_text(EXPERIMENT)
    history = tmp_path / "history"
    runner = CliRunner()
    first = runner.invoke(nightly, [str(experiment), "--history", str(history)])
    assert first.exit_code == 0, first.output
    assert "nothing to compare" in first.output
    second = runner.invoke(nightly, [str(experiment), "--history", str(history), "--workers", "2"])
    assert second.exit_code == 0, second.output
    assert "OK baseline: completion 100.0% -> 100.0%" in second.output and "no regression against" in second.output
    runs = sorted(p for p in history.iterdir() if (p / "manifest.json").exists())
    assert len(runs) == 2 and (runs[1] / "report.html").exists()
    assert (history / "trend.md").exists() and (history / "plots" / "trend.png").exists()
    _scale_tokens(runs[1], 0.1)  # plant: the previous night used a tenth of the tokens
    third = runner.invoke(nightly, [str(experiment), "--history", str(history), "--token-ratio", "1.2"])
    assert third.exit_code == 4, third.output  # ten times the tokens on 2 tasks: no task-level test can settle it
    assert "CAN'T TELL baseline (tokens ×10.01 above ×1.2 on 2 tasks: too few runs" in third.output
    assert "nothing else differs" in third.output
    fourth = runner.invoke(nightly, [str(experiment), "--history", str(history), "--repeats", "2",
                                     "--set", "model.context_window=4000"])
    assert fourth.exit_code in (0, 1, 4), fourth.output
    assert "NOT CONTROLLED" in fourth.output and "model.context_window: 16000 -> 4000" in fourth.output
    assert "repeats: 1 -> 2" in fourth.output
    trend = (history / "trend.md").read_text()
    assert trend.count("| baseline |") == 4


def test_nightly_command_cant_tell_is_as_loud_as_a_regression_and_exits_4(tmp_path):
    experiment = tmp_path / "nightly.yaml"
    experiment.write_text(EXPERIMENT)
    history = tmp_path / "history"
    runner = CliRunner()
    assert runner.invoke(nightly, [str(experiment), "--history", str(history)]).exit_code == 0
    small = runner.invoke(nightly, [str(experiment), "--history", str(history), "--set", "model.context_window=2500"])
    assert small.exit_code == 4, small.output  # both tasks overflow: -100 pts on 2 tasks, which settle nothing
    assert "CAN'T TELL baseline (completion lower on 2 of 2 tasks, undecided" in small.output
    assert small.output.rstrip().splitlines()[-1].startswith("error: CAN'T TELL against ")
    assert "no regression" not in small.output
