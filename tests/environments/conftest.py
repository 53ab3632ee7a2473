"""Fixtures of the docker-backed tests: the locally built image, and SWE-bench-style instances made from
the smoke taskset.

The tests need a running docker daemon and the image that build_image.sh makes from its current
recipe (CI builds it in .ci/run; `build_image.sh --tag` names it). Where either is missing they fail, saying what to do: they are never skipped.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ctxbench.harness.environments.docker import image_problem, owned_containers
from ctxbench.harness.tasks.taskset import load_taskset

BUILD = Path(__file__).with_name("build_image.sh")
IMAGE = subprocess.run(["bash", str(BUILD), "--tag"], check=True, capture_output=True, text=True).stdout.strip()
"""The image build_image.sh makes from its current recipe (`ctxbench-test:bookworm-<hash>`)."""


@pytest.fixture(scope="session")
def image() -> str:
    problem = image_problem(IMAGE)
    if problem:
        pytest.fail(f"the docker tests need a docker daemon and the image {IMAGE}: {problem}. "
                    f"Start dockerd and run {BUILD} (as root; needs debootstrap).", pytrace=False)
    return IMAGE


@pytest.fixture(scope="session")
def swebench_package() -> None:
    try:
        import swebench  # noqa: F401
    except ImportError:
        pytest.fail("the swebench grading tests need the swebench package: pip install -e '.[test,swebench]'",
                    pytrace=False)


@pytest.fixture
def no_leftover_containers():
    """After the test, none of this process's containers is left."""
    yield
    from ctxbench.harness.sandbox import owner_tag
    assert [n for n, owner in owned_containers() if owner == owner_tag()] == []


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}).stdout


def git_repo(folder: Path) -> str:
    """Make `folder` a git repository of one commit; returns the commit."""
    git(folder, "init", "-q", "-b", "main")
    git(folder, "add", "-A")
    git(folder, "commit", "-qm", "base")
    return git(folder, "rev-parse", "HEAD").strip()


def write_instances(tmp_path: Path, rows: list[dict], environment: dict | None) -> Path:
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    if environment is not None:
        import yaml
        path.with_name("instances.environment.yaml").write_text(yaml.safe_dump(environment))
    return path


def smoke_instances(tmp_path: Path, smoke_dir: Path, environment: dict | None) -> Path:
    """Every smoke task as a SWE-bench-style instance over a git repository `acme/<repo>`."""
    taskset = load_taskset(smoke_dir)
    commits = {}
    for name in sorted({t.repo_name for t in taskset.tasks}):
        repo = tmp_path / "repos" / f"acme__{name}"
        shutil.copytree(smoke_dir / "repos" / name, repo)
        commits[name] = git_repo(repo)
    rows = [{"instance_id": f"acme__{t.id}", "repo": f"acme/{t.repo_name}", "base_commit": commits[t.repo_name],
             "patch": t.patch, "test_patch": t.test_patch or "", "problem_statement": t.problem_statement,
             "FAIL_TO_PASS": list(t.FAIL_TO_PASS), "PASS_TO_PASS": list(t.PASS_TO_PASS),
             "test_cmd": list(t.test_cmd), "test_files": list(t.test_files)} for t in taskset.tasks]
    return write_instances(tmp_path, rows, environment)


def run_instances(tmp_path: Path, name: str, path: Path, repos: Path, repeats: int = 1) -> tuple[Path, list[dict]]:
    """`ctxbench run` of baseline on an instance taskset (the simulator, one worker, no sandbox): its
    results folder and its run records."""
    from click.testing import CliRunner

    from ctxbench.harness.cli import cli

    exp = tmp_path / f"{name}.yaml"
    exp.write_text(json.dumps({"name": name, "taskset": {"path": str(path), "repos": str(repos)},
                               "strategies": [{"name": "baseline"}], "repeats": repeats, "workers": 1,
                               "sandbox": "none", "model": {"provider": "sim"}}))
    out = tmp_path / f"out-{name}"
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"])
    assert result.exit_code == 0, result.output
    return out, [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
