"""`tasks validate` runs a taskset's tests in the same jail as `run` does."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import yaml
from click.testing import CliRunner
from sandbox_helpers import needs_bwrap

from ctxbench.harness.cli import cli

TEST = '''from pathlib import Path

from shout import shout


def test_shout():
    assert shout("hi") == "HI!"


def test_leaves_a_mark_outside():
    Path({outside!r}).write_text("written by a task's test")
'''


def make_taskset(folder, outside):
    repo = folder / "repos" / "shout"
    (repo / "tests").mkdir(parents=True)
    (repo / "shout.py").write_text('def shout(text):\n    return text.upper()\n')
    (repo / "tests" / "test_shout.py").write_text(TEST.format(outside=str(outside)))
    (folder / "fix.diff").write_text("diff --git a/shout.py b/shout.py\n--- a/shout.py\n+++ b/shout.py\n"
                                     "@@ -1,2 +1,2 @@\n def shout(text):\n-    return text.upper()\n"
                                     "+    return text.upper() + \"!\"\n")
    (folder / "taskset.yaml").write_text(yaml.safe_dump({"name": "marks", "tasks": [{
        "id": "shout-exclaims", "repo": "shout", "problem_statement": "shout() forgets the exclamation mark.",
        "FAIL_TO_PASS": ["tests/test_shout.py::test_shout"],
        "PASS_TO_PASS": ["tests/test_shout.py::test_leaves_a_mark_outside"], "patch": "fix.diff"}]}))
    return folder


@needs_bwrap
def test_validate_jails_the_tests_unless_told_not_to(tmp_path):
    # /var/tmp: writable on the host, read-only in the jail (unlike /tmp, which the jail replaces)
    outside_dir = Path(tempfile.mkdtemp(prefix="ctxbench-validate-", dir="/var/tmp"))
    try:
        outside = outside_dir / "outside.txt"
        taskset = make_taskset(tmp_path / "taskset", outside)

        jailed = CliRunner().invoke(cli, ["tasks", "validate", str(taskset)])
        assert not outside.exists()
        assert jailed.exit_code == 1 and "PASS_TO_PASS fail before the fix" in jailed.output

        unjailed = CliRunner().invoke(cli, ["tasks", "validate", str(taskset), "--sandbox", "none"])
        assert unjailed.exit_code == 0, unjailed.output
        assert outside.read_text() == "written by a task's test"
    finally:
        shutil.rmtree(outside_dir)


def test_validate_falls_back_to_no_jail_loudly(tmp_path, monkeypatch):
    """Simulates a host where bubblewrap cannot run."""
    from ctxbench.harness.sandbox import jail

    monkeypatch.setattr(jail, "bwrap_available", lambda: "bwrap is not installed (test)")
    outside_dir = Path(tempfile.mkdtemp(prefix="ctxbench-validate-", dir="/var/tmp"))
    try:
        taskset = make_taskset(tmp_path / "taskset", outside_dir / "outside.txt")
        result = CliRunner().invoke(cli, ["tasks", "validate", str(taskset)])
        assert "WARNING: sandbox fell back to none: bwrap is not installed (test)" in result.output
        assert result.exit_code == 0 and (outside_dir / "outside.txt").exists()
    finally:
        shutil.rmtree(outside_dir)
