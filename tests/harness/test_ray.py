"""The Ray executor, on a Ray runtime it starts and on a running cluster it joins, gives the local
executor's results."""

import gzip
import json
import os
import socket
import subprocess
import sys

from click.testing import CliRunner

from ctxbench.harness.cli import cli

VOLATILE = {"wall_s", "model_s", "tool_s", "test_s"}


def stable(path):
    return [{k: v for k, v in json.loads(line).items() if k not in VOLATILE} for line in path.read_text().splitlines()]


def test_ray_executor_matches_local_executor(experiment_file, tmp_path, monkeypatch):
    work = tmp_path / "work"
    monkeypatch.setenv("CTXBENCH_WORKDIR", str(work))
    exp = experiment_file(strategies=[{"name": "baseline"},
                                      {"name": "trimmer", "params": {"limit": 300, "keep_recent": 0}}],
                          repeats=1, workers=2)
    outputs = {}
    for executor in ("local", "ray"):
        out = outputs[executor] = tmp_path / executor
        result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report",
                                          "--set", f"executor={executor}"])
        assert result.exit_code == 0, result.output
    local, ray = stable(outputs["local"] / "runs.jsonl"), stable(outputs["ray"] / "runs.jsonl")
    assert len(local) == 10 and len({r["run_id"] for r in ray}) == 10
    assert ray == local
    assert {r["failure_reason"] for r in ray} != {None}  # the comparison covers failed runs too
    manifests = [json.loads((outputs[e] / "manifest.json").read_text()) for e in ("local", "ray")]
    assert manifests[0]["fixed"] == manifests[1]["fixed"] and manifests[1]["config"]["executor"] == "ray"
    assert list(work.iterdir()) == []  # the Ray workers' templates and workspaces are gone
    for executor in ("local", "ray"):
        transcripts = sorted((outputs[executor] / "transcripts").rglob("*.jsonl.gz"))
        assert len(transcripts) == 10
    local_t = [gzip.decompress(p.read_bytes()) for p in sorted((outputs["local"] / "transcripts").rglob("*.gz"))]
    ray_t = [gzip.decompress(p.read_bytes()) for p in sorted((outputs["ray"] / "transcripts").rglob("*.gz"))]
    assert ray_t == local_t and all(b'"turn"' in t for t in ray_t)


def test_ray_executor_joins_a_running_cluster_and_leaves_it_running(experiment_file, tmp_path, monkeypatch):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    ray_cli = [sys.executable, "-m", "ray.scripts.scripts"]
    env = {**os.environ, "RAY_AUTH_MODE": "token", "CTXBENCH_WORKDIR": str(tmp_path / "work")}
    monkeypatch.setenv("CTXBENCH_WORKDIR", str(tmp_path / "work"))
    exp = experiment_file(repeats=1, workers=2)
    local = CliRunner().invoke(cli, ["run", str(exp), "--output", str(tmp_path / "local"), "--no-report"])
    assert local.exit_code == 0, local.output

    started = subprocess.run([*ray_cli, "start", "--head", f"--port={port}", "--num-cpus=2",
                              "--include-dashboard=false", "--disable-usage-stats"], env=env, capture_output=True,
                             text=True, timeout=120)
    assert started.returncode == 0, started.stderr
    try:
        joined = subprocess.run(
            [sys.executable, "-c", "from ctxbench.harness.cli import main; main()", "run", str(exp), "--output",
             str(tmp_path / "joined"), "--no-report", "--set", "executor=ray", "--set", f"ray_address=127.0.0.1:{port}"],
            env=env, capture_output=True, text=True, timeout=300)
        assert joined.returncode == 0, joined.stderr
        assert stable(tmp_path / "joined" / "runs.jsonl") == stable(tmp_path / "local" / "runs.jsonl")
        status = subprocess.run([*ray_cli, "status", f"--address=127.0.0.1:{port}"], env=env, capture_output=True,
                                text=True, timeout=60)
        assert status.returncode == 0 and "CPU" in status.stdout, status.stderr  # the cluster was left running
    finally:
        subprocess.run([*ray_cli, "stop", "--force"], env=env, capture_output=True, timeout=120)


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
