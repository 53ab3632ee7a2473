"""`ctxbench run --until-decided`: rounds, arms stopped once decided, sequential.json, the report's
statement, and `--resume` replaying the recorded looks."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from ctxbench.harness.records import RunResult
from ctxbench.harness.run.sequential import round_differences

IDLE = "idle/summarizer"
"""An arm whose agent does nothing: it resolves no task, so it is decided (worse) within rounds."""
ARGS = ["run", "quickstart", "--until-decided", "--strategies", "baseline,observation_masking,summarizer",
        "--set", "strategies.2.agent={name: idle, command: [python3, -c, pass]}",
        "--set", "sequential.alpha=0.2", "--set", "sequential.max_repeats=3", "--set", "taskset.limit=4"]


def ctxbench(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "ctxbench", *args], capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})


def runs_of(folder):
    return [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    out = tmp_path_factory.mktemp("seq") / "out"
    proc = ctxbench(*ARGS, "--output", str(out))
    assert proc.returncode == 0, proc.stderr
    (out.parent / "stderr.txt").write_text(proc.stderr)
    return out


def test_the_run_says_what_the_design_can_decide_before_and_how_each_arm_ended_after(finished):
    """4 tasks × 3 rounds at α = 0.1 per candidate: only 7 of a candidate's 12 pairs one way, the rest tied,
    decide anything (58 pts): said before the first run; after the last, the rounds and each verdict."""
    stderr = (finished.parent / "stderr.txt").read_text()
    lines = stderr.splitlines()
    design = [x for x in lines if "rounds at α" in x]
    assert design == ["ctxbench: warning: 4 tasks × at most 3 rounds at α = 0.1 per candidate decide better or worse "
                      "only where at least 7 of a candidate's 12 pairs go one way and the rest tie (a difference of "
                      "58 pts or more); a smaller difference ends undecided"]
    ended = ("ctxbench: 3 rounds of at most 3: `observation_masking` undecided after 3 rounds (the maximum) (12 runs, "
             f"12 in the fixed design); `{IDLE}` worse after round 2 (8 runs, 12 in the fixed design)")
    assert ended in lines and lines.index(design[0]) < lines.index(ended)


def test_the_report_headline_shows_the_verdict_and_interval_of_the_rounds(finished):
    """The fixed-design interval does not hold after stopping early: the verdict table's completion cells
    are the rounds' verdict and anytime-valid confidence sequence."""
    record = json.loads((finished / "sequential.json").read_text())
    decisions = {d["strategy"]: d for d in record["decisions"]}
    report = (finished / "report.md").read_text()
    table = report[report.index("| strategy | completion |"):].split("\n\n")[0]
    rows = {line.split("|")[1].strip(): line for line in table.splitlines() if line.startswith("| ")}
    for arm in ("observation_masking", IDLE):
        d = decisions[arm]
        cells = [c.strip() for c in rows[arm].split("|")]
        assert cells[2] == f"**{d['verdict']}**"
        assert cells[3].endswith(f"[{d['low'] * 100:+.1f}, {d['high'] * 100:+.1f}]"), cells
    assert "anytime-valid confidence sequence (90.0%, Bonferroni over the candidates)" in report


def test_a_design_that_cannot_decide_says_so_before_it_starts(tmp_path):
    out = tmp_path / "tiny"
    proc = ctxbench("run", "quickstart", "--until-decided", "--strategies", "baseline,observation_masking",
                    "--set", "sequential.max_repeats=1", "--set", "taskset.limit=2", "--output", str(out), "--no-report")
    assert proc.returncode == 0, proc.stderr
    assert ("ctxbench: warning: this sequential experiment cannot decide: with 2 tasks × at most 1 rounds at α = 0.05 "
            "per candidate, a candidate that won (or lost) every one of its 2 pairs would still end undecided") \
        in proc.stderr


def test_a_decided_arm_stops_and_the_others_run_to_the_maximum(finished):
    record = json.loads((finished / "sequential.json").read_text())
    assert record["finished"] and record["reference"] == "baseline" and record["arm_alpha"] == pytest.approx(0.1)
    decisions = {d["strategy"]: d for d in record["decisions"]}
    assert decisions[IDLE]["verdict"] == "worse" and decisions[IDLE]["round"] == 2
    assert decisions[IDLE]["runs"] == 8 < decisions[IDLE]["fixed_runs"] == 12
    assert decisions["observation_masking"]["verdict"] == "undecided" and decisions["observation_masking"]["runs"] == 12
    per_arm = {}
    for r in runs_of(finished):
        per_arm.setdefault(r["strategy"], set()).add(r["repeat"])
    assert per_arm == {"baseline": {0, 1, 2}, "observation_masking": {0, 1, 2}, IDLE: {0, 1}}
    assert [len(rnd["arms"]) for rnd in record["rounds"]] == [2, 2, 1]  # the stopped arm is looked at no more
    assert [rnd["runs"] for rnd in record["rounds"]] == [12, 24, 32]
    look = record["rounds"][1]["arms"][1]
    assert look["strategy"] == IDLE and look["pairs"] == 8 and look["high"] < 0 and look["verdict"] == "worse"


def test_the_report_states_verdict_runs_and_the_fixed_design(finished):
    report = (finished / "report.md").read_text()
    assert "## Sequential experiment" in report
    assert (f"`{IDLE}` vs `baseline`: **worse** after round 2: 8 runs of its own (and as many of the reference's) "
            "against 12 in the fixed design (33% fewer)") in report
    assert "`observation_masking` vs `baseline`: **undecided** after 3 rounds (the maximum): 12 runs" in report
    assert "Incomplete experiment" not in report


def test_resume_replays_the_recorded_looks(finished, tmp_path):
    """A resumed folder keeps every recorded decision: a look recorded as stopping an arm is not taken
    again, even where the runs would now say otherwise."""
    out = tmp_path / "again"
    out.mkdir()
    (out / "manifest.json").write_bytes((finished / "manifest.json").read_bytes())
    first = [r for r in runs_of(finished) if r["repeat"] == 0]
    (out / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in first))
    record = json.loads((finished / "sequential.json").read_text())
    record["rounds"] = record["rounds"][:1]
    record["rounds"][0]["arms"][0]["verdict"] = "futile"  # as if observation_masking had been decided then
    record["finished"], record["decisions"] = False, []
    (out / "sequential.json").write_text(json.dumps(record))
    proc = ctxbench(*ARGS, "--output", str(out), "--resume", "--no-report")
    assert proc.returncode == 0, proc.stderr
    replayed = json.loads((out / "sequential.json").read_text())
    assert replayed["rounds"][0] == record["rounds"][0]
    decisions = {d["strategy"]: (d["verdict"], d["round"], d["runs"]) for d in replayed["decisions"]}
    assert decisions == {"observation_masking": ("futile", 1, 4), IDLE: ("worse", 2, 8)}
    assert sum(r["strategy"] == "observation_masking" for r in runs_of(out)) == 4


def test_until_decided_needs_two_strategies(tmp_path):
    out = tmp_path / "one"
    proc = ctxbench("run", "quickstart", "--until-decided", "--strategies", "baseline", "--output", str(out))
    assert proc.returncode == 2
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: --until-decided: needs at least two strategies (a reference and a candidate), the "
                      "experiment has 1: baseline"]
    assert not out.exists()


def test_an_unknown_reference_is_an_input_error(tmp_path):
    proc = ctxbench("run", "quickstart", "--until-decided", "--set", "sequential.reference=nope",
                    "--output", str(tmp_path / "x"))
    assert proc.returncode == 2 and "error: sequential.reference: 'nope' is not an arm" in proc.stderr


def _run(strategy, task, repeat, resolved, reason=None):
    return RunResult(experiment_id="e", run_id=f"{strategy}/{task}/{repeat}", strategy=strategy, task_id=task,
                     repeat=repeat, seed=repeat, resolved=resolved,
                     failure_reason=None if resolved else (reason or "tests_failed"), turns=1, prompt_tokens=1,
                     completion_tokens=1, strategy_tokens=0, total_tokens=2, peak_context_tokens=1, wall_s=1.0)


def test_round_differences_pair_by_task_and_leave_out_harness_errors():
    results = [_run("a", "t1", 0, True), _run("b", "t1", 0, False), _run("a", "t2", 0, False),
               _run("b", "t2", 0, True), _run("a", "t3", 0, True), _run("b", "t3", 0, False, "harness_error"),
               _run("a", "t1", 1, True), _run("b", "t1", 1, True)]
    got = round_differences(results, "a", "b", ["t1", "t2", "t3", "t4"], 0)
    np.testing.assert_array_equal(got, [-1.0, 1.0, np.nan, np.nan])
    np.testing.assert_array_equal(round_differences(results, "a", "b", ["t1"], 1), [0.0])
