"""A repository a workspace cannot be made of is refused when the taskset is loaded: `tasks validate`
and `run` say the same one line (exit 2), and `run` writes nothing."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zlib
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxbench.harness.cli import cli

NON_UTF8 = b"caf\xe9.py"


def _git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def _native(tmp_path: Path, smoke_dir: Path) -> tuple[list[str], dict]:
    taskset = tmp_path / "ts"
    shutil.copytree(smoke_dir, taskset)
    (Path(os.fsdecode(bytes(taskset / "repos" / "calc") + b"/" + NON_UTF8))).write_text("x = 1\n")
    return [str(taskset)], {"taskset": str(taskset)}


def _swebench(tmp_path: Path, smoke_dir: Path, damage) -> tuple[list[str], dict]:
    """The smoke `calc` repository as a SWE-bench instance, its base commit then damaged."""
    repo = tmp_path / "repos" / "acme__calc"
    shutil.copytree(smoke_dir / "repos" / "calc", repo)
    _git(repo, "init", "-q", "-b", "main")
    damage(repo, "before")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "base")
    damage(repo, "after")
    row = {"instance_id": "acme__calc-1", "repo": "acme/calc", "base_commit": _git(repo, "rev-parse", "HEAD").strip(),
           "patch": "", "test_patch": "", "problem_statement": "median is wrong",
           "FAIL_TO_PASS": ["tests/test_stats.py::test_median_even_length"], "PASS_TO_PASS": []}
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps(row) + "\n")
    repos = str(tmp_path / "repos")
    return [str(path), "--repos", repos], {"taskset": {"path": str(path), "repos": repos}}


def _non_utf8_name(repo: Path, when: str) -> None:
    if when == "before":
        Path(os.fsdecode(bytes(repo) + b"/" + NON_UTF8)).write_text("x = 1\n")


def _corrupt_blob(repo: Path, when: str) -> None:
    """Overwrite the loose object of calc/stats.py with a valid header and a cut zlib stream."""
    if when != "after":
        return
    sha = _git(repo, "rev-parse", "HEAD:calc/stats.py").strip()
    obj = repo / ".git" / "objects" / sha[:2] / sha[2:]
    data = zlib.compress(zlib.decompress(obj.read_bytes())[:-40] + b"#" * 40)[:-8]
    obj.chmod(0o644)
    obj.write_bytes(data)


CASES = {
    "native non-UTF-8 name": (lambda tmp, smoke: _native(tmp, smoke), "is not UTF-8"),
    "SWE-bench non-UTF-8 name": (lambda tmp, smoke: _swebench(tmp, smoke, _non_utf8_name), "is not UTF-8"),
    "SWE-bench corrupt object": (lambda tmp, smoke: _swebench(tmp, smoke, _corrupt_blob), "the repository is damaged"),
}


@pytest.mark.parametrize("case", CASES)
def test_validate_and_run_refuse_the_repository_alike(case, tmp_path, smoke_dir, experiment_file):
    make, words = CASES[case]
    validate_args, taskset = make(tmp_path, smoke_dir)
    runner = CliRunner()
    validated = runner.invoke(cli, ["tasks", "validate", *validate_args])
    out = tmp_path / "out"
    ran = runner.invoke(cli, ["run", str(experiment_file(**taskset)), "--output", str(out)])
    for result in (validated, ran):
        assert result.exit_code == 2, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], result.output
        assert "Traceback" not in result.output
    assert validated.output == ran.output
    assert not out.exists()
