"""The API key is read only from the variable named in the config and is written or shown nowhere."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys

from sandbox_helpers import needs_bwrap, write_experiment

SECRET = "sk-ctxbench-SECRET-123"


@needs_bwrap
def test_api_key_reaches_the_endpoint_and_nothing_else(tmp_path, hostile, chat_server):
    server = chat_server([("run_tests", {}), ("finish", {})])
    exp = write_experiment(
        tmp_path / "secret.yaml", name="secret", taskset={"path": str(hostile["path"]), "ids": ["env-dump"]},
        strategies=[{"name": "baseline"}], repeats=2, workers=1, max_runs=1, sandbox="bwrap",  # one run at a time
        model={"provider": "openai", "name": "scripted", "base_url": server.url, "api_key_env": "CTXBENCH_SECRET_KEY",
               "retry_budget_s": 0},
        limits={"test_timeout_s": 20, "max_turns": 4})
    out = tmp_path / "results"
    env = {**os.environ, "CTXBENCH_SECRET_KEY": SECRET}
    proc = subprocess.run([sys.executable, "-c", "from ctxbench.harness.cli import main; main()", "run", str(exp),
                           "--output", str(out)], env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr

    assert server.auth and all(a == f"Bearer {SECRET}" for a in server.auth)
    assert len(server.bodies) == 4
    assert "ENV {" in server.bodies[1], "the test's environment dump should reach the model"
    assert all(SECRET not in body for body in server.bodies), "the tests could read the key"
    assert SECRET not in proc.stdout and SECRET not in proc.stderr
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.name == "runs.jsonl" for p in files) and any(p.suffix == ".gz" for p in files)
    for path in files:
        data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        assert SECRET.encode() not in data, f"the key is in {path}"
    assert "CTXBENCH_SECRET_KEY" in (out / "manifest.json").read_text(), "the manifest names the variable"
