"""The taskset's folder and its git repositories (which hold the fixes) are hidden from the tests
and the agent's commands wherever they lie on disk, not only under /tmp, which the jail replaces."""

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.config import load_config
from ctxbench.harness.run.runner import prepare
from ctxbench.harness.sandbox import Sandbox
from ctxbench.harness.environments.workspace import Workspace
from sandbox_helpers import needs_bwrap

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=GIT_ENV).stdout


def outside_tmp_and_home() -> Path:
    """A fresh folder on disk that the jail does not mask by itself (not /tmp, /dev/shm or home)."""
    masked = [Path("/tmp"), Path("/dev/shm"), Path.home()]
    for parent in (Path("/var/tmp"), Path(__file__).resolve().parent):
        parent = parent.resolve()
        if os.access(parent, os.W_OK) and not any(m == parent or m in parent.parents for m in masked):
            return Path(tempfile.mkdtemp(prefix="ctxbench-hidden-", dir=parent))
    pytest.fail("no writable folder outside /tmp and the home folder")


@pytest.fixture
def spread_taskset():
    """instances.jsonl in one folder, its repositories in another, both outside /tmp and home."""
    data, repos_parent = outside_tmp_and_home(), outside_tmp_and_home()
    try:
        repos = repos_parent / "repos"
        repo = repos / "owner__lib"
        repo.mkdir(parents=True)
        (repo / "lib.py").write_text("def answer():\n    return 41\n")
        probe = (f"import os\nDATA, REPOS = {str(data)!r}, {str(repos)!r}\n\n\n"
                 "def test_answer():\n    from lib import answer\n    assert answer() == 42\n\n\n"
                 "def test_taskset_hidden():\n"
                 "    for folder in (DATA, REPOS):\n"
                 "        assert not os.path.exists(folder) or os.listdir(folder) == [], folder\n")
        (repo / "test_lib.py").write_text(probe)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "base")
        base = git(repo, "rev-parse", "HEAD").strip()
        (repo / "lib.py").write_text("def answer():\n    return 42\n")
        patch = git(repo, "diff")
        git(repo, "commit", "-qam", "the fix, in history")
        row = {"instance_id": "owner__lib-1", "repo": "owner/lib", "base_commit": base, "patch": patch,
               "test_patch": "", "problem_statement": "answer() is off by one.",
               "FAIL_TO_PASS": ["test_lib.py::test_answer"], "PASS_TO_PASS": ["test_lib.py::test_taskset_hidden"]}
        (data / "instances.jsonl").write_text(json.dumps(row) + "\n")
        yield data / "instances.jsonl", repos
    finally:
        shutil.rmtree(data, ignore_errors=True)
        shutil.rmtree(repos_parent, ignore_errors=True)


@needs_bwrap
def test_validate_hides_the_taskset_and_repositories_outside_tmp(spread_taskset):
    path, repos = spread_taskset
    result = CliRunner().invoke(cli, ["tasks", "validate", str(path), "--repos", str(repos)])
    assert result.exit_code == 0, result.output
    assert "1/1 tasks valid" in result.output


@needs_bwrap
def test_runs_hide_the_taskset_and_repositories_outside_tmp(spread_taskset, tmp_path):
    path, repos = spread_taskset
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({"name": "hidden", "taskset": {"path": str(path), "repos": str(repos)},
                                   "strategies": [{"name": "baseline"}], "sandbox": "bwrap"}))
    ctx = prepare(load_config(exp, []), tmp_path, tmp_path / "out")
    task = ctx.taskset.tasks[0]
    ws = Workspace.create(task, ctx.interpreters[task.id], sandbox=ctx.sandbox)
    try:
        hidden = ws.run_tests(["test_lib.py::test_taskset_hidden"], 60)
        assert hidden.exit_code == 0, hidden.output
        ws.sandbox = Sandbox("bwrap")  # the same jail without hiding them: the probe does see them
        seen = ws.run_tests(["test_lib.py::test_taskset_hidden"], 60)
        assert seen.exit_code == 1 and "instances.jsonl" in seen.output, seen.output
    finally:
        ws.cleanup()
