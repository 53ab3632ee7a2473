"""Dead runners' pids cgroups are swept, and the pids cgroup never gives way silently to the watchdog."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.sandbox import Sandbox, owner_tag, process_limit_mechanism, run_contained, sweep_cgroups
from ctxbench.harness.sandbox.limits import PidsCgroup

needs_cgroup = pytest.mark.skipif(PidsCgroup.parent() is None, reason="no writable pids cgroup on this host")

DEAD = "import os, sys; from ctxbench.harness.sandbox import owner_tag; print(owner_tag())"


def dead_owner_tag() -> str:
    """`<pid>.<start time>` of a process that has exited."""
    return subprocess.run([sys.executable, "-c", DEAD], capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def own_parent(monkeypatch) -> Path:
    """A cgroup of this test's own, made the parent of ctxbench's cgroups for the test. Named after this
    process, it is left alone by the sweeps of other ctxbench processes on the machine (another pytest
    process among them), which would otherwise remove the planted leftovers before this test's sweep."""
    private = PidsCgroup.parent() / f"ctxbench-{owner_tag()}-{10**9 + 7}"
    private.mkdir()
    try:
        (private / "cgroup.subtree_control").write_text("+pids")  # cgroup v2; v1 has no such file
    except OSError:
        pass
    monkeypatch.setattr(PidsCgroup, "parent", staticmethod(lambda: private))
    yield private
    for child in private.iterdir():
        if child.is_dir():
            PidsCgroup(child).remove()
    private.rmdir()


@needs_cgroup
def test_cgroups_of_dead_owners_are_swept_and_live_ones_kept(own_parent):
    base = own_parent
    dead = [base / f"ctxbench-{dead_owner_tag()}-0", base / f"ctxbench-{dead_owner_tag()}-7"]
    mine = base / f"ctxbench-{owner_tag()}-999999"
    for path in (*dead, mine):
        path.mkdir()
    try:
        assert sweep_cgroups() >= 2
        assert not any(p.exists() for p in dead) and mine.exists()
    finally:
        for path in (*dead, mine):
            if path.exists():
                path.rmdir()


@needs_cgroup
def test_a_run_sweeps_what_a_killed_runner_left(experiment_file, tmp_path, own_parent):
    left = own_parent / f"ctxbench-{dead_owner_tag()}-3"
    left.mkdir()
    try:
        result = CliRunner().invoke(cli, ["run", str(experiment_file(taskset={"path": "smoke", "ids": ["calc-median-even-length"]})),
                                          "--output", str(tmp_path / "out"), "--no-report"])
        assert result.exit_code == 0, result.output
        assert "process-limit cgroups left by ctxbench processes that no longer run" in result.output
        assert not left.exists()
        manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
        assert manifest["sandbox"]["process_limit"] == process_limit_mechanism() == "cgroup"
    finally:
        if left.exists():
            left.rmdir()


@needs_cgroup
def test_a_name_collision_takes_the_next_name_not_the_watchdog(monkeypatch):
    base = PidsCgroup.parent()
    monkeypatch.setattr(PidsCgroup, "_names", itertools.count(10**9))
    taken = base / f"ctxbench-{owner_tag()}-{10**9}"
    taken.mkdir()
    try:
        cgroup = PidsCgroup.create(8)
        assert cgroup is not None and cgroup.path != taken
        cgroup.remove()
    finally:
        taken.rmdir()


@needs_cgroup
def test_a_cgroup_that_cannot_be_made_fails_the_command_loudly(monkeypatch, tmp_path):
    missing = tmp_path / "not-a-cgroup" / "deeper"
    monkeypatch.setattr(PidsCgroup, "parent", staticmethod(lambda: missing))
    with pytest.raises(OSError, match="cannot create the pids cgroup .* fallen back to the watchdog"):
        run_contained(["true"], tmp_path, 10, {"PATH": "/usr/bin:/bin"}, Sandbox())
