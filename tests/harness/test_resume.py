"""Kill a running experiment with SIGKILL at several points, resume, and compare with an uninterrupted run."""

import json
import os
import random
import signal
import subprocess
import sys
import time

from ctxbench.harness.records import TranscriptEnd, TranscriptHeader, TranscriptTurn
from ctxbench.harness.records.transcript import read_transcript

VOLATILE = {"wall_s", "model_s", "tool_s", "test_s"}
THREE_TASKS = {"path": "smoke", "ids": ["calc-percentile-upper-bound", "textutils-contractions", "textutils-wrap-overflow"]}
RUNS = 6  # the three tasks, 2 repeats each


def stable(path):
    return [{k: v for k, v in json.loads(l).items() if k not in VOLATILE} for l in path.read_text().splitlines()]


def ctxbench(*args):
    return [sys.executable, "-c", "from ctxbench.harness.cli import main; main()", *args]


def processes_running(marker: str) -> list[str]:
    found = []
    for entry in os.scandir("/proc"):
        try:
            cmdline = open(f"/proc/{entry.name}/cmdline", "rb").read().decode(errors="replace")
        except (OSError, ValueError):
            continue
        if entry.name.isdigit() and marker in cmdline and int(entry.name) != os.getpid():
            found.append(f"{entry.name}: {cmdline}")
    return found


def test_sigkill_then_resume_equals_uninterrupted_run(experiment_file, tmp_path):
    exp = experiment_file(taskset=THREE_TASKS, repeats=2, workers=2)
    work = tmp_path / "work"
    env = {**os.environ, "CTXBENCH_WORKDIR": str(work)}
    reference = tmp_path / "reference"
    subprocess.run(ctxbench("run", str(exp), "--output", str(reference), "--no-report"), check=True,
                   capture_output=True, env=env)
    out = tmp_path / "killed"
    runs = out / "runs.jsonl"
    rng = random.Random(4)
    kills, live_seen = 0, 0
    for kill_after in (1, 3, 4, None):  # recorded runs at which the runner is killed; None: let it finish
        args = ["run", str(exp), "--output", str(out), "--no-report"] + (["--resume"] if out.exists() else [])
        proc = subprocess.Popen(ctxbench(*args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        if kill_after is None:
            proc.wait(timeout=600)
            break
        while proc.poll() is None and recorded(runs) < kill_after:
            time.sleep(0.02)
        if proc.poll() is not None:
            break
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        kills += 1
        deadline = time.monotonic() + 60  # a guard against a hang, not a speed claim
        while processes_running(str(out)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not processes_running(str(out)), "workers outlived the killed runner"
        live_seen += check_live_transcripts(out)
        if rng.random() < 0.5:
            with runs.open("a") as fh:  # a write torn by the kill
                fh.write('{"version": 1, "run_id": "baseline/trunc')
    assert proc.returncode == 0, proc.stdout.read().decode()
    assert kills == 3 and live_seen >= 1
    final = stable(runs)
    assert len(final) == RUNS and len({r["run_id"] for r in final}) == RUNS
    assert final == stable(reference / "runs.jsonl")
    assert list(work.iterdir()) == []  # what the killed runners left was swept by the next run
    assert sorted(p.name for p in (out / "transcripts").rglob("*.jsonl")) == []  # live transcripts compressed
    assert len(list((out / "transcripts").rglob("*.jsonl.gz"))) == RUNS


def recorded(runs):
    """Complete lines of runs.jsonl."""
    try:
        return runs.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def check_live_transcripts(out):
    """The runs in flight when the runner was killed left their transcripts, every line readable, up to
    their last finished turn. Returns how many there were."""
    live = list((out / "transcripts").rglob("*.jsonl"))
    for path in live:
        records = list(read_transcript(path))
        assert isinstance(records[0], TranscriptHeader) and f"{records[0].task_id}.{records[0].repeat}.jsonl" == path.name
        turns = [r.turn for r in records if isinstance(r, TranscriptTurn)]
        assert turns == list(range(len(turns)))
        assert not any(isinstance(r, TranscriptEnd) for r in records[:-1])
    return len(live)


def test_ctrl_c_stops_at_once_and_says_how_to_resume(experiment_file, tmp_path):
    exp = experiment_file(taskset=THREE_TASKS, repeats=2, workers=2)
    out = tmp_path / "out"
    env = {**os.environ, "CTXBENCH_WORKDIR": str(tmp_path / "work")}
    proc = subprocess.Popen(ctxbench("run", str(exp), "--output", str(out), "--no-report"), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    runs = out / "runs.jsonl"
    deadline = time.monotonic() + 120
    while not (runs.exists() and runs.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C does: the whole process group
    _, stderr = proc.communicate(timeout=120)  # a guard against a hang; the runs left show it stopped at once
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
    recorded = len(stable(runs))
    assert 1 <= recorded < RUNS and f"interrupted: {recorded} runs are recorded" in stderr and "--resume" in stderr
    assert not processes_running(str(out))
    resumed = subprocess.run(ctxbench("run", str(exp), "--output", str(out), "--no-report", "--resume"), env=env,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert len(stable(runs)) == RUNS and list((tmp_path / "work").iterdir()) == []


class KillsItsWorker:
    """A model whose process dies, as one killed for its memory would, on one task."""

    def __init__(self, task_id):
        self.task_id = task_id

    def complete(self, messages, tools):
        if self.task_id == "calc-percentile-upper-bound":
            os.kill(os.getpid(), signal.SIGKILL)
        from ctxbench.harness.protocols import Completion, Usage
        from ctxbench.harness.records import ToolCall

        return Completion("", (ToolCall("c1", "finish", "{}"),), Usage(1, 1))


def test_a_dead_worker_stops_the_experiment_with_a_clear_message(experiment_file, tmp_path, monkeypatch):
    import pytest

    import ctxbench.harness.run.single_run
    from ctxbench.harness.config import load_config
    from ctxbench.harness.run.runner import ExperimentAborted, prepare, run_experiment

    monkeypatch.setenv("CTXBENCH_WORKDIR", str(tmp_path / "work"))
    monkeypatch.setattr(ctxbench.harness.run.single_run, "make_model", lambda config, task, counter, seed: KillsItsWorker(task.id))
    exp = experiment_file(repeats=2, workers=2)
    ctx = prepare(load_config(exp), tmp_path, tmp_path / "out")
    with pytest.raises(ExperimentAborted, match="a worker process died .* --resume runs the rest"):
        run_experiment(ctx, progress=False)
    recorded = stable(tmp_path / "out" / "runs.jsonl")
    assert all(r["task_id"] != "calc-percentile-upper-bound" for r in recorded)
    assert len(recorded) < 10
