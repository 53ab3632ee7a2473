"""`ctxbench nightly --until-decided`: each strategy in rounds against itself in the previous run, stopped
once its confidence sequence decides it; the sequence decides the completion status."""

import json

from click.testing import CliRunner

from ctxbench.harness.cli.nightly import nightly

EXPERIMENT = """\
name: nightly-rounds
taskset: smoke
strategies:
  - name: baseline
repeats: 4
sandbox: none
workers: 2
"""


def _nights(history):
    return sorted(p for p in history.iterdir() if (p / "manifest.json").exists())


def _runs(folder):
    return [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]


def test_rounds_against_the_previous_run_stop_when_decided(tmp_path):
    experiment = tmp_path / "nightly.yaml"
    experiment.write_text(EXPERIMENT)
    history = tmp_path / "history"
    runner = CliRunner()
    args = [str(experiment), "--history", str(history), "--until-decided", "--set", "sequential.margin=0.45"]

    first = runner.invoke(nightly, args)
    assert first.exit_code == 0, first.output
    assert "nothing to compare" in first.output
    (night1,) = _nights(history)
    assert len(_runs(night1)) == 20 and not (night1 / "sequential.json").exists()  # nothing to pair with: fixed

    second = runner.invoke(nightly, args)  # the same runs again: every difference 0
    assert second.exit_code == 0, second.output
    night2 = _nights(history)[1]
    record = json.loads((night2 / "sequential.json").read_text())
    assert record["against"] == night1.name and record["goal"] == "non_inferiority" and record["max_repeats"] == 4
    (decision,) = record["decisions"]
    assert decision["verdict"] == "non-inferior" and decision["round"] == 2 and decision["runs"] == 10
    assert {r["repeat"] for r in _runs(night2)} == {0, 1}  # decided after two rounds: half the runs
    assert "OK baseline:" in second.output and "rounds: non-inferior after round 2 (10 runs, 20 in the fixed design)" \
        in second.output
    assert f"vs itself in `{night1.name}`: **non-inferior** after round 2" in (night2 / "report.md").read_text()

    third = runner.invoke(nightly, [*args, "--set", "model.context_window=2500"])  # every task overflows now
    assert third.exit_code == 1, third.output
    night3 = _nights(history)[2]
    (decision,) = json.loads((night3 / "sequential.json").read_text())["decisions"]
    assert decision["verdict"] == "worse" and decision["high"] < 0 and decision["runs"] < 20
    assert "REGRESSION baseline (completion fell)" in third.output and "rounds: worse after round" in third.output
    trend = (history / "trend.md").read_text()
    assert "rounds: worse after round" in trend and "anytime-valid confidence sequence" in trend


def test_a_goal_or_reference_for_a_nightly_is_refused_before_anything_is_written(tmp_path):
    experiment = tmp_path / "nightly.yaml"
    experiment.write_text(EXPERIMENT)
    history = tmp_path / "history"
    for key in ("sequential.goal=superiority", "sequential.reference=baseline"):
        result = CliRunner().invoke(nightly, [str(experiment), "--history", str(history), "--until-decided",
                                              "--set", key])
        assert result.exit_code == 2, result.output
        assert f"sequential.{key.split('.')[1].split('=')[0]}: a nightly run compares each strategy with itself" \
            in result.output
        assert not history.exists()


def test_identical_nights_in_rounds_are_undecided_not_a_fall_and_running_in_rounds_is_controlled(tmp_path):
    """The first night runs a fixed design, the second the same runs in rounds (5 tasks × 2 rounds cannot
    bound a difference within 5 pts): its sequence ends undecided, nothing was lower, so the night is OK
    (exit 0) and nothing says it fell; `--until-decided` alone changes nothing that a run measures."""
    experiment = tmp_path / "nightly.yaml"
    experiment.write_text(EXPERIMENT)
    history = tmp_path / "history"
    runner = CliRunner()
    first = runner.invoke(nightly, [str(experiment), "--history", str(history), "--repeats", "2"])
    assert first.exit_code == 0, first.output
    second = runner.invoke(nightly, [str(experiment), "--history", str(history), "--repeats", "2", "--until-decided"])
    assert second.exit_code == 0, second.output
    night2 = _nights(history)[1]
    (decision,) = json.loads((night2 / "sequential.json").read_text())["decisions"]
    assert decision["verdict"] == "undecided" and decision["round"] == 2
    assert "NOT CONTROLLED" not in second.output and "nothing else differs" in second.output
    assert "OK baseline:" in second.output and "rounds: undecided after 2 rounds" in second.output
    assert "fell" not in second.output and "no regression against" in second.output
    trend = (history / "trend.md").read_text()
    assert "**OK**" in trend and "No strategy regressed." in trend and "Not a controlled comparison" not in trend
    assert "fell" not in trend and "**equivalent**" not in trend
