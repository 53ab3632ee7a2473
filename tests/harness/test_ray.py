"""The Ray executor, on a Ray runtime it starts and on a running cluster it joins, gives the local
executor's results."""

import gzip
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ctxbench.harness.cli import cli

ROOT = Path(__file__).resolve().parents[2]
VOLATILE = {"wall_s", "model_s", "tool_s", "test_s"}



def stable(path):
    return [{k: v for k, v in json.loads(line).items() if k not in VOLATILE} for line in path.read_text().splitlines()]


RUNS = 4
"""Two tasks, each with baseline (resolves) and a trimmer too tight to work (fails: max_turns, no_edit)."""


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """The experiment both Ray tests run, and its results with the local executor (made once)."""
    folder = tmp_path_factory.mktemp("ray")
    exp = folder / "exp.yaml"
    exp.write_text(yaml.safe_dump({
        "name": "t", "taskset": {"path": str(ROOT / "tasksets" / "smoke"),
                                 "ids": ["calc-median-even-length", "calc-fahrenheit-to-celsius"]},
        "strategies": [{"name": "baseline"}, {"name": "trimmer", "params": {"limit": 300, "keep_recent": 0}}],
        "repeats": 1, "workers": 2, "sandbox": "none"}))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("CTXBENCH_WORKDIR", str(folder / "work"))
        result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(folder / "local"), "--no-report"])
    assert result.exit_code == 0, result.output
    return exp, folder / "local"


@pytest.mark.parametrize("in_flight", [[], ["--set", "max_runs=4"]], ids=["task per run", "actors of 2 runs"])
def test_ray_executor_matches_local_executor(local_run, tmp_path, monkeypatch, one_ray_at_a_time, in_flight):
    exp, local_out = local_run
    work = tmp_path / "work"
    monkeypatch.setenv("CTXBENCH_WORKDIR", str(work))
    outputs = {"local": local_out, "ray": tmp_path / "ray"}
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(outputs["ray"]), "--no-report",
                                      "--set", "executor=ray", *in_flight])
    assert result.exit_code == 0, result.output
    local, ray = stable(outputs["local"] / "runs.jsonl"), stable(outputs["ray"] / "runs.jsonl")
    assert len(local) == RUNS and len({r["run_id"] for r in ray}) == RUNS
    assert ray == local
    assert {r["failure_reason"] for r in ray} > {None}  # the comparison covers resolved and failed runs
    manifests = [json.loads((outputs[e] / "manifest.json").read_text()) for e in ("local", "ray")]
    assert manifests[0]["fixed"] == manifests[1]["fixed"] and manifests[1]["config"]["executor"] == "ray"
    assert list(work.iterdir()) == []  # the Ray workers' templates and workspaces are gone
    for executor in ("local", "ray"):
        transcripts = sorted((outputs[executor] / "transcripts").rglob("*.jsonl.gz"))
        assert len(transcripts) == RUNS
    def untimed(p: Path) -> bytes:  # the gap between model calls is wall-clock time
        return re.sub(rb'"gap_s":[0-9.enul+-]+', b'"gap_s":0', gzip.decompress(p.read_bytes()))

    local_t = [untimed(p) for p in sorted((outputs["local"] / "transcripts").rglob("*.gz"))]
    ray_t = [untimed(p) for p in sorted((outputs["ray"] / "transcripts").rglob("*.gz"))]
    assert ray_t == local_t and all(b'"turn"' in t for t in ray_t)


def test_ray_executor_joins_a_running_cluster_leaves_it_running_and_joins_no_other(local_run, tmp_path, one_ray_at_a_time):
    exp, local_out = local_run
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ray_cli = [sys.executable, "-m", "ray.scripts.scripts"]
    env = {**os.environ, "RAY_AUTH_MODE": "token", "CTXBENCH_WORKDIR": str(tmp_path / "work")}
    # Its own temp folder (short: Ray's socket paths must fit), so no other `ray.init()` on this machine
    # finds the cluster, and the test stops exactly this cluster at the end.
    ray_tmp = tempfile.mkdtemp(prefix="ctxbench-ray-", dir="/tmp")
    try:
        started = subprocess.run([*ray_cli, "start", "--head", f"--port={port}", "--num-cpus=2", f"--temp-dir={ray_tmp}",
                                  "--include-dashboard=false", "--disable-usage-stats"], env=env, capture_output=True,
                                 text=True, timeout=120)
        assert started.returncode == 0, started.stderr
        joined = subprocess.run(
            [sys.executable, "-c", "from ctxbench.harness.cli import main; main()", "run", str(exp), "--output",
             str(tmp_path / "joined"), "--no-report", "--set", "executor=ray", "--set", f"ray_address=127.0.0.1:{port}"],
            env=env, capture_output=True, text=True, timeout=300)
        assert joined.returncode == 0, joined.stderr
        assert stable(tmp_path / "joined" / "runs.jsonl") == stable(local_out / "runs.jsonl")
        status = subprocess.run([*ray_cli, "status", f"--address=127.0.0.1:{port}"], env=env, capture_output=True,
                                text=True, timeout=60)
        assert status.returncode == 0 and "CPU" in status.stdout, status.stderr  # the cluster was left running
        # Without ray_address a run starts its own runtime even where a cluster runs and RAY_ADDRESS names it
        # (joining it would also fail: num_cpus cannot be given to a running cluster).
        own = subprocess.run(
            [sys.executable, "-c", "from ctxbench.harness.cli import main; main()", "run", str(exp), "--output",
             str(tmp_path / "own"), "--no-report", "--set", "executor=ray"],
            env={**env, "RAY_ADDRESS": f"127.0.0.1:{port}"}, capture_output=True, text=True, timeout=300)
        assert own.returncode == 0, own.stderr
        assert stable(tmp_path / "own" / "runs.jsonl") == stable(local_out / "runs.jsonl")
    finally:
        stop_cluster(ray_tmp)
        shutil.rmtree(ray_tmp, ignore_errors=True)


def stop_cluster(ray_tmp: str) -> None:
    """SIGKILL the processes of the cluster whose temp folder is `ray_tmp` (its daemons name the folder
    on their command lines; its workers are their children) and wait until none runs."""
    parents: dict[int, int] = {}
    theirs: set[int] = set()
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            cmdline = open(f"/proc/{entry.name}/cmdline", "rb").read().decode(errors="replace")
            stat = open(f"/proc/{entry.name}/stat", "rb").read().decode(errors="replace")
        except OSError:
            continue
        parents[int(entry.name)] = int(stat.rpartition(")")[2].split()[1])
        if ray_tmp in cmdline:
            theirs.add(int(entry.name))
    while grown := {pid for pid, ppid in parents.items() if ppid in theirs} - theirs:
        theirs |= grown
    for pid in theirs:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + 60  # a guard against a hang, not a speed claim
    while (alive := [pid for pid in theirs if running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive, f"Ray processes still running: {alive}"


def running(pid: int) -> bool:
    try:
        state = open(f"/proc/{pid}/stat", "rb").read().rpartition(b")")[2].split()[0]
    except OSError:
        return False
    return state not in (b"Z", b"X")


def test_an_address_where_nothing_answers_is_refused_before_anything_is_written(experiment_file, tmp_path):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again when the block ends: nothing listens there
    exp = experiment_file()
    for address, message in ((f"127.0.0.1:{port}", "nothing answers at"), ("nonsense", "is not host:port")):
        result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(tmp_path / "out"), "--no-report",
                                          "--set", "executor=ray", "--set", f"ray_address={address}"])
        assert result.exit_code == 2 and message in result.output, result.output
        assert not (tmp_path / "out").exists()
