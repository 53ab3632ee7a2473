"""An external agent is contained as the tests are: no network but its gateway, no writes outside its
run's folder, a process limit, a time limit; each attack is recorded and the experiment completes."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from click.testing import CliRunner

from ctxbench.harness.cli import cli
from sandbox_helpers import needs_bwrap, tempfile_dir, write_experiment

AGENTS = Path(__file__).resolve().parents[1] / "agents"


def run_hostile(tmp_path: Path, arms: list[tuple[str, list[str]]], **limits: float) -> dict[str, dict]:
    """One run per arm of the hostile agent (a mode and its argument each), on one smoke task."""
    shutil.copy(AGENTS / "hostile_agent.py", tmp_path)
    strategies = [{"name": "baseline", "label": label,
                   "agent": {"name": "hostile", "command": [sys.executable, "hostile_agent.py", *args]}}
                  for label, args in arms]
    exp = write_experiment(tmp_path / "exp.yaml", name="hostile-agent", taskset={"path": "smoke", "limit": 1},
                           strategies=strategies, repeats=1, workers=2, sandbox="bwrap",
                           limits={"run_timeout_s": 30, **limits})
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"])
    assert result.exit_code == 0, result.output
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    return {r["strategy"]: r for r in runs}


@needs_bwrap
def test_hostile_agents_are_contained_and_recorded(tmp_path, listener):
    outside_dir = Path(tempfile_dir())
    outside = outside_dir / "pwned-by-agent.txt"
    try:
        runs = run_hostile(tmp_path, [("network", ["network", str(listener.port)]), ("write", ["write", str(outside)]),
                                      ("fork", ["fork", "400"]), ("sleep", ["sleep"]), ("crash", ["crash"])],
                           run_timeout_s=20)
    finally:
        written = outside.exists()
        shutil.rmtree(outside_dir, ignore_errors=True)
    assert listener.accepted == 0
    assert not written
    assert len(runs) == 5
    for mode in ("network", "write", "fork", "crash"):
        assert runs[mode]["failure_reason"] == "agent_error", (mode, runs[mode])
    assert "ConnectionRefusedError" in runs["network"]["error"] or "Network is unreachable" in runs["network"]["error"]
    assert "Read-only file system" in runs["write"]["error"] or "Permission denied" in runs["write"]["error"]
    assert "Resource temporarily unavailable" in runs["fork"]["error"] or "process limit" in runs["fork"]["error"]
    assert "crashed on purpose" in runs["crash"]["error"]
    assert runs["sleep"]["failure_reason"] == "timeout"
