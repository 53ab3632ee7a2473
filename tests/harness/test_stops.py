"""How commands stop: a full disk, a read-only results folder, Ctrl-C at any moment, SIGTERM — one
`error:` line and the documented exit code each, never a traceback, and runs.jsonl always valid."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.errors import DiskFull, InputError, Interrupted, Terminated
from ctxbench.harness.records import RunResult
from ctxbench.harness.records.results import ResultsWriter, read_results

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "tasksets" / "smoke"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounts a small tmpfs, which needs root")


@contextmanager
def small_disk(path: Path, size: str):
    """A tmpfs of `size` mounted at `path` for the block's duration: a disk that really fills."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def ctxbench(*args: str) -> list[str]:
    return [sys.executable, "-c", "from ctxbench.harness.cli import main; main()", *args]


def experiment(tmp_path: Path, **extra) -> Path:
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump({"name": "stops", "taskset": str(SMOKE), "sandbox": "none", "workers": 1,
                                    "strategies": [{"name": "baseline"}, {"name": "trimmer"}], "repeats": 3,
                                    **extra}))
    return path


def result(i: int) -> RunResult:
    return RunResult(experiment_id="e", run_id=f"baseline/t{i}/0", strategy="baseline", task_id=f"t{i}", repeat=0,
                     seed=1, resolved=True, failure_reason=None, turns=3, prompt_tokens=10, completion_tokens=1,
                     strategy_tokens=0, total_tokens=11, peak_context_tokens=10, wall_s=1.0)


def test_a_line_the_full_disk_cuts_short_is_not_left_in_runs_jsonl(tmp_path):
    with small_disk(tmp_path / "disk", "16k") as disk:
        runs = disk / "runs.jsonl"
        writer = ResultsWriter(runs)
        writer.write(result(0))
        writer.write(result(1))
        before = runs.read_bytes()
        page = 4096
        (disk / "filler").write_bytes(b"x" * (16 * 1024 - page))  # every page but the one runs.jsonl has begun
        with pytest.raises(OSError) as raised:
            for i in range(2, 10):  # the last page fills part way through one of these lines
                writer.write(result(i))
        writer.close()
        assert raised.value.errno == 28  # ENOSPC
        written = runs.read_bytes()
        assert written.startswith(before) and written.endswith(b"\n") and len(written) < page
        assert [r.run_id for r in read_results(runs)][:2] == ["baseline/t0/0", "baseline/t1/0"]
        assert all(json.loads(line) for line in written.splitlines())


def test_a_full_disk_stops_the_run_with_one_line_and_resume_finishes_it(tmp_path):
    exp = experiment(tmp_path)
    with small_disk(tmp_path / "disk", "48k") as disk:
        out = disk / "out"
        proc = subprocess.run(ctxbench("run", str(exp), "--output", str(out), "--no-report"), capture_output=True,
                              text=True, timeout=600)
        assert proc.returncode == DiskFull.exit_code, proc.stderr
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert "Traceback" not in proc.stderr and len(errors) == 1, proc.stderr
        assert "No space left on device (the disk is full: free some space)" in errors[0]
        lines = (out / "runs.jsonl").read_bytes().splitlines(keepends=True)
        assert 0 < len(lines) < 30 and all(line.endswith(b"\n") and json.loads(line) for line in lines)
        assert f"{len(lines)} runs are recorded in {out}; continue with: " in errors[0]
        hint = shlex.split(errors[0].split("continue with: ")[1])
        assert hint[-1] == "--resume"
        subprocess.run(["mount", "-o", "remount,size=4m", str(disk)], check=True)
        resumed = subprocess.run(hint, capture_output=True, text=True, timeout=600)
        assert resumed.returncode == 0, resumed.stderr
        assert len(read_results(out / "runs.jsonl")) == 30


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("recorded")
    exp = experiment(folder, repeats=1, strategies=[{"name": "baseline"}])
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(folder / "out"), "--no-report", "--limit", "1"])
    assert result.exit_code == 0, result.output
    return folder / "out"


@pytest.mark.parametrize("command", [["report"], ["export-predictions"]])
def test_a_read_only_results_folder_is_one_error_line(tmp_path, recorded, command):
    with small_disk(tmp_path / "ro", "4m") as disk:
        subprocess.run(["cp", "-a", str(recorded), str(disk / "out")], check=True)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        before = sorted(p.name for p in (disk / "out").rglob("*"))
        proc = subprocess.run(ctxbench(*command, str(disk / "out")), capture_output=True, text=True, timeout=600)
        assert proc.returncode == InputError.exit_code, proc.stderr
        (line,) = proc.stderr.splitlines()
        assert line.startswith(f"error: {disk / 'out'}") and "Read-only file system" in line, proc.stderr
        assert sorted(p.name for p in (disk / "out").rglob("*")) == before


def _loading(pid: int) -> bool:
    """The process is past the interpreter's own start-up, loading ctxbench (pydantic's core is mapped)."""
    try:
        return "pydantic_core" in Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return True  # it has ended


def _interrupt_at(argv: list[str], delay: float, sig: int = signal.SIGINT) -> subprocess.CompletedProcess:
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while proc.poll() is None and not _loading(proc.pid):
        time.sleep(0.005)
    time.sleep(delay)
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=600)
    return subprocess.CompletedProcess(argv, proc.returncode, stdout, stderr)


@pytest.mark.parametrize("command", ["run", "report"])
def test_ctrl_c_at_any_moment_is_one_line_and_exit_130(tmp_path, recorded, command):
    """Sent while ctxbench loads, parses, prepares, runs or writes: never a traceback or click's
    "Aborted!"; one `error: interrupted…` line and exit 130 (or the command had finished)."""
    interrupted = 0
    for n, delay in enumerate((0.0, 0.05, 0.2, 0.5, 1.0, 2.0)):
        if command == "run":
            argv = ctxbench("run", str(experiment(tmp_path)), "--output", str(tmp_path / f"out{n}"), "--no-report")
        else:
            argv = ctxbench("report", str(recorded))
        proc = _interrupt_at(argv, delay)
        assert "Traceback" not in proc.stderr and "Aborted!" not in proc.stderr, (delay, proc.stderr)
        if proc.returncode == 0:
            continue
        assert proc.returncode == Interrupted.exit_code, (delay, proc.returncode, proc.stderr)
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
        assert len(errors) == 1 and errors[0].startswith("error: interrupted"), (delay, proc.stderr)
        interrupted += 1
    assert interrupted >= 3


def test_sigterm_stops_a_run_as_ctrl_c_does_with_the_resume_line(tmp_path):
    exp = experiment(tmp_path, workers=2)
    out = tmp_path / "out"
    proc = subprocess.Popen(ctxbench("run", str(exp), "--output", str(out), "--no-report"), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    runs = out / "runs.jsonl"
    while proc.poll() is None and not (runs.exists() and runs.read_text()):
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)  # to the runner only, as `kill` does
    _, stderr = proc.communicate(timeout=600)
    assert proc.returncode == Terminated.exit_code, stderr
    assert "Traceback" not in stderr, stderr
    (line,) = [line for line in stderr.splitlines() if line.startswith("error:")]
    recorded = len(read_results(runs))
    assert line.startswith(f"error: terminated (SIGTERM): {recorded} runs are recorded in {out}; continue with: ")
    hint = shlex.split(line.split("continue with: ")[1])
    resumed = subprocess.run(hint, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert len(read_results(runs)) == 30
