"""A test command that cannot start is the taskset's fault: refused before the first run, reported by validate."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.environments.testenv import command_problem

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "tasksets" / "smoke"


def taskset_with(tmp_path: Path, test_cmd: str, script: tuple[str, str, bool] | None = None) -> Path:
    """A copy of smoke whose first task runs `test_cmd`; `script` = (name, text, executable) in its repo."""
    folder = tmp_path / "ts"
    shutil.copytree(SMOKE, folder)
    data = yaml.safe_load((folder / "taskset.yaml").read_text())
    data["tasks"][0]["test_cmd"] = test_cmd
    (folder / "taskset.yaml").write_text(yaml.safe_dump(data))
    if script:
        name, text, executable = script
        path = folder / "repos" / data["tasks"][0]["repo"] / name
        path.write_text(text)
        path.chmod(0o755 if executable else 0o644)
    return folder


CASES = {
    "not found": ("no-such-test-runner -q", None, "'no-such-test-runner' is not found on PATH"),
    "not in the repo": ("./run_tests.sh", None, "./run_tests.sh is not in the repository"),
    "not executable": ("./run_tests.sh", ("run_tests.sh", "#!/bin/sh\nexit 0\n", False), "is not executable"),
    "missing interpreter": ("./run_tests.sh", ("run_tests.sh", "#!/opt/nowhere/python3\n", True),
                            "#!/opt/nowhere/python3, which does not exist"),
    "missing env interpreter": ("./run_tests.sh", ("run_tests.sh", "#!/usr/bin/env nosuchlang\n", True),
                                "'nosuchlang'"),
    "a folder": ("./calc", None, "./calc is a folder"),
}


@pytest.mark.parametrize("case", CASES)
def test_run_refuses_a_command_that_cannot_start_before_anything_is_written(tmp_path, case):
    cmd, script, why = CASES[case]
    folder = taskset_with(tmp_path, cmd, script)
    task_id = yaml.safe_load((folder / "taskset.yaml").read_text())["tasks"][0]["id"]
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({"name": "t", "taskset": str(folder), "strategies": [{"name": "baseline"}],
                                   "repeats": 1, "workers": 1, "sandbox": "none"}))
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(tmp_path / "out"), "--no-report"])
    assert result.exit_code == 2, result.output
    assert f"task {task_id}: test_cmd" in result.output and why in result.output, result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_validate_reports_the_command_instead_of_running_it(tmp_path):
    folder = taskset_with(tmp_path, "no-such-test-runner -q")
    task_id = yaml.safe_load((folder / "taskset.yaml").read_text())["tasks"][0]["id"]
    result = CliRunner().invoke(cli, ["tasks", "validate", str(folder), "--sandbox", "none", "--timeout", "60"])
    assert result.exit_code == 1
    assert f"FAIL {task_id}" in result.output and "test command cannot start: 'no-such-test-runner'" in result.output


def test_an_executable_script_in_the_repository_can_start(tmp_path):
    folder = taskset_with(tmp_path, "./run_tests.sh -q", ("run_tests.sh", "#!/bin/sh\nexec python3 -m pytest \"$@\"\n", True))
    task = load_taskset(folder).tasks[0]
    assert command_problem(task, "python3") is None
    assert all(command_problem(t, "python3") is None for t in load_taskset(SMOKE).tasks)
