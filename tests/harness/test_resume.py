"""Kill a running experiment with SIGKILL at several points, resume, and compare with an uninterrupted run."""

import json
import os
import random
import signal
import subprocess
import sys
import time

VOLATILE = {"wall_s", "model_s", "tool_s", "test_s"}


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
    exp = experiment_file(repeats=2, workers=2)
    work = tmp_path / "work"
    env = {**os.environ, "CTXBENCH_WORKDIR": str(work)}
    reference = tmp_path / "reference"
    subprocess.run(ctxbench("run", str(exp), "--output", str(reference), "--no-report"), check=True,
                   capture_output=True, env=env)
    out = tmp_path / "killed"
    rng = random.Random(4)
    kills = 0
    for attempt in range(4):
        args = ["run", str(exp), "--output", str(out), "--no-report"] + (["--resume"] if out.exists() else [])
        proc = subprocess.Popen(ctxbench(*args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
        try:
            proc.wait(timeout=rng.uniform(2.0, 6.0) if attempt < 3 else 300)
            break
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            kills += 1
            deadline = time.monotonic() + 5
            while processes_running(str(out)) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not processes_running(str(out)), "workers outlived the killed runner"
        runs = out / "runs.jsonl"
        if runs.exists() and rng.random() < 0.5:
            with runs.open("a") as fh:  # a write torn by the kill
                fh.write('{"version": 1, "run_id": "baseline/trunc')
    else:
        raise AssertionError("the experiment never finished")
    assert proc.returncode == 0, proc.stdout.read().decode()
    assert kills >= 1
    final = stable(out / "runs.jsonl")
    assert len(final) == 10 and len({r["run_id"] for r in final}) == 10
    assert final == stable(reference / "runs.jsonl")
    assert list(work.iterdir()) == []  # what the killed runners left was swept by the next run


def test_ctrl_c_stops_at_once_and_says_how_to_resume(experiment_file, tmp_path):
    exp = experiment_file(repeats=2, workers=2)
    out = tmp_path / "out"
    env = {**os.environ, "CTXBENCH_WORKDIR": str(tmp_path / "work")}
    proc = subprocess.Popen(ctxbench("run", str(exp), "--output", str(out), "--no-report"), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    runs = out / "runs.jsonl"
    deadline = time.monotonic() + 120
    while not (runs.exists() and runs.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C does: the whole process group
    start = time.monotonic()
    _, stderr = proc.communicate(timeout=60)
    assert time.monotonic() - start < 5
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr, stderr
    recorded = len(stable(runs))
    assert 1 <= recorded < 10 and f"interrupted: {recorded} runs are recorded" in stderr and "--resume" in stderr
    assert not processes_running(str(out))
    resumed = subprocess.run(ctxbench("run", str(exp), "--output", str(out), "--no-report", "--resume"), env=env,
                             capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert len(stable(runs)) == 10 and list((tmp_path / "work").iterdir()) == []


class KillsItsWorker:
    """A model whose process dies, as one killed for its memory would, on one task."""

    def __init__(self, task_id):
        self.task_id = task_id

    def complete(self, messages, tools):
        if self.task_id == "calc-percentile-upper-bound":
            os.kill(os.getpid(), signal.SIGKILL)
        from ctxbench.harness.history import ToolCall
        from ctxbench.harness.models.base import Completion, Usage

        return Completion("", (ToolCall("c1", "finish", "{}"),), Usage(1, 1))


def test_a_dead_worker_stops_the_experiment_with_a_clear_message(experiment_file, tmp_path, monkeypatch):
    import pytest

    import ctxbench.harness.runner
    from ctxbench.harness.config import load_config
    from ctxbench.harness.runner import ExperimentAborted, prepare, run_experiment

    monkeypatch.setenv("CTXBENCH_WORKDIR", str(tmp_path / "work"))
    monkeypatch.setattr(ctxbench.harness.runner, "make_model", lambda config, task, counter, seed: KillsItsWorker(task.id))
    exp = experiment_file(repeats=2, workers=2)
    ctx = prepare(load_config(exp), tmp_path, tmp_path / "out")
    with pytest.raises(ExperimentAborted, match="a worker process died .* --resume runs the rest"):
        run_experiment(ctx, progress=False)
    recorded = stable(tmp_path / "out" / "runs.jsonl")
    assert all(r["task_id"] != "calc-percentile-upper-bound" for r in recorded)
    assert len(recorded) < 10
