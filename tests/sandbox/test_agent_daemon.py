"""An external agent that leaves a daemon behind (Cline leaves its hub on a port) has nothing left
running after its run, jailed or not."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import uuid
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.sandbox.limits import PidsCgroup
from sandbox_helpers import needs_bwrap, write_experiment

AGENTS = Path(__file__).resolve().parents[1] / "agents"
sys.path.insert(0, str(AGENTS))
from daemon_agent import running  # noqa: E402


@pytest.mark.parametrize("sandbox,cgroups", [pytest.param("bwrap", True, marks=needs_bwrap), ("none", True),
                                             ("none", False)])
def test_a_daemon_the_agent_leaves_is_gone_when_its_run_ends(tmp_path, monkeypatch, sandbox, cgroups):
    """Jailed, the daemon dies with the jail's pid namespace; unjailed, with the run's pids cgroup or,
    where none can be made (the watchdog counts processes), by the tag its environment carries."""
    if not cgroups:
        monkeypatch.setattr(PidsCgroup, "create", staticmethod(lambda processes: None))
    marker = f"ctxbench-test-daemon-{uuid.uuid4().hex}"
    shutil.copy(AGENTS / "daemon_agent.py", tmp_path)
    agent = {"name": "daemon", "command": [sys.executable, "daemon_agent.py", marker]}
    exp = write_experiment(tmp_path / "exp.yaml", name="daemon-agent", taskset={"path": "smoke", "limit": 1},
                           strategies=[{"name": "baseline", "agent": agent}], repeats=1, workers=1, sandbox=sandbox,
                           limits={"run_timeout_s": 30})
    try:
        result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(tmp_path / "out"), "--no-report"])
        assert result.exit_code == 0, result.output
        (run,) = [json.loads(line) for line in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
        assert f"daemon running: {marker}" in run["error"]  # it did start, and outlived the agent's exit
        assert running(marker) == []
    finally:
        for pid in running(marker):
            os.kill(pid, signal.SIGKILL)
