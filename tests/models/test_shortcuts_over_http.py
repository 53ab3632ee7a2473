"""`--provider/--model/--base-url/--api-key-env` against `ctxbench serve-sim` equal the same `--set` flags."""

from __future__ import annotations

import json
import socket
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from provider_helpers import ROOT, TEST_KEY, TEST_KEY_ENV, cli, cli_env

QUICKSTART = ROOT / "experiments" / "quickstart.yaml"
VOLATILE = {"wall_s", "model_s", "tool_s", "test_s"}


def stable_runs(folder: Path) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k not in VOLATILE}
            for line in (folder / "runs.jsonl").read_text().splitlines()]


@contextmanager
def fresh_serve_sim(port: int) -> Iterator[str]:
    """A new `ctxbench serve-sim` on `port` (its prompt cache starts empty), stopped on exit."""
    proc = subprocess.Popen(cli("serve-sim", "--config", str(QUICKSTART), "--port", str(port)), cwd=ROOT,
                            env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while "listening on " not in (line := proc.stdout.readline()):
            assert line and proc.poll() is None, f"serve-sim did not start: {proc.stderr.read()}"
        yield line.split("listening on ", 1)[1].split()[0]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_endpoint_shortcuts_give_the_results_of_their_set_flags(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # One run at a time: serve-sim's prompt cache is shared, so runs in flight together would hit it in any order.
    subset = ["--limit", "2", "--strategies", "baseline,trimmer", "--set", "repeats=1", "--set", "max_runs=1",
              "--no-report"]
    env = cli_env(**{TEST_KEY_ENV: TEST_KEY})
    with fresh_serve_sim(port) as url:
        by_shortcut = subprocess.run(
            cli("run", str(QUICKSTART), *subset, "--output", str(tmp_path / "shortcut"), "--provider", "openai",
                "--model", "sim-coder", "--base-url", url, "--api-key-env", TEST_KEY_ENV),
            env=env, capture_output=True, text=True, timeout=600)
    with fresh_serve_sim(port) as same_url:
        by_set = subprocess.run(
            cli("run", str(QUICKSTART), *subset, "--output", str(tmp_path / "set"), "--set", "model.provider=openai",
                "--set", "model.name=sim-coder", "--set", f"model.base_url={same_url}",
                "--set", f"model.api_key_env={TEST_KEY_ENV}"),
            env=env, capture_output=True, text=True, timeout=600)
    assert by_shortcut.returncode == 0, by_shortcut.stderr
    assert by_set.returncode == 0, by_set.stderr

    shortcut, flags = stable_runs(tmp_path / "shortcut"), stable_runs(tmp_path / "set")
    assert len(shortcut) == 4 and {r["strategy"] for r in shortcut} == {"baseline", "trimmer"}
    assert [r["run_id"] for r in shortcut] == [r["run_id"] for r in flags]
    differing = {a["run_id"]: {k: (a[k], b.get(k)) for k in a if a[k] != b.get(k)} for a, b in zip(shortcut, flags)}
    assert not any(differing.values()), differing
    assert all(r["turns"] >= 3 for r in shortcut) and all(r["failure_reason"] != "model_error" for r in shortcut)
    manifests = [json.loads((tmp_path / name / "manifest.json").read_text()) for name in ("shortcut", "set")]
    assert manifests[0]["config"] == manifests[1]["config"]
    assert manifests[0]["experiment_id"] == manifests[1]["experiment_id"]
    assert manifests[0]["config"]["model"]["base_url"] == url and manifests[0]["config"]["taskset"]["limit"] == 2
