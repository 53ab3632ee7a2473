"""A taskset cannot reach outside itself: links out, loops and `repo: ../..` are refused at load."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.errors import InputError
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.environments.workspace import Workspace, prepare_template, remove_templates

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "tasksets" / "smoke"


def copy_smoke(tmp_path: Path) -> Path:
    folder = tmp_path / "ts"
    shutil.copytree(SMOKE, folder)
    return folder


def run(tmp_path: Path, taskset: Path):
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({"name": "t", "taskset": str(taskset), "strategies": [{"name": "baseline"}],
                                   "repeats": 1, "workers": 1, "sandbox": "none"}))
    out = tmp_path / "out"
    return CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"]), out


def make_loop(repo: Path) -> tuple[Path, str]:
    os.symlink("b.txt", repo / "a.txt")
    os.symlink("a.txt", repo / "b.txt")
    return repo / "a.txt", "b.txt"


LINKS_OUT = {
    "environ": lambda repo: (repo / "env.txt", "/proc/self/environ"),
    "home": lambda repo: (repo / "dotfiles", str(Path.home() / ".bashrc")),
    "usr_dir": lambda repo: (repo / "calc" / "usr", "/usr"),
    "relative_up": lambda repo: (repo / "up.txt", "../../taskset.yaml"),
}


@pytest.mark.parametrize("kind", [*LINKS_OUT, "loop"])
def test_a_link_out_of_the_repository_is_refused_by_run_and_validate(tmp_path, kind, monkeypatch):
    monkeypatch.setenv("CTXBENCH_WORKDIR", str(tmp_path / "work"))
    folder = copy_smoke(tmp_path)
    repo = folder / "repos" / "calc"
    if kind == "loop":
        link, target = make_loop(repo)
    else:
        link, target = LINKS_OUT[kind](repo)
        os.symlink(target, link)
    result, out = run(tmp_path, folder)
    assert result.exit_code == 2, result.output
    assert str(link) in result.output and target in result.output, result.output
    assert ("loop" if kind == "loop" else "outside") in result.output
    assert "Traceback" not in result.output and not out.exists()
    assert not any((tmp_path / "work").glob("ctxbench-*")), "a template or workspace folder was left"
    validated = CliRunner().invoke(cli, ["tasks", "validate", str(folder), "--sandbox", "none"])
    assert validated.exit_code == 2 and str(link) in validated.output, validated.output


def test_environ_never_reaches_a_workspace(tmp_path, monkeypatch):
    """The old failure: the link was followed and the runner's environment copied into the workspace."""
    monkeypatch.setenv("CTXBENCH_CANARY", "canary-5f0c1e")
    folder = copy_smoke(tmp_path)
    os.symlink("/proc/self/environ", folder / "repos" / "calc" / "env.txt")
    with pytest.raises(InputError, match="env.txt -> /proc/self/environ"):
        load_taskset(folder)


@pytest.mark.parametrize("repo", ["../..", "..", "../repos/../../ts", "/usr"])
def test_repo_path_outside_the_repos_folder_is_refused(tmp_path, repo):
    folder = copy_smoke(tmp_path)
    data = yaml.safe_load((folder / "taskset.yaml").read_text())
    data["tasks"][0]["repo"] = repo
    (folder / "taskset.yaml").write_text(yaml.safe_dump(data))
    result, out = run(tmp_path, folder)
    assert result.exit_code == 2 and "tasks.0" in result.output and "repo" in result.output, result.output
    assert "outside" in result.output and not out.exists()


def test_patch_path_outside_the_taskset_is_refused(tmp_path):
    folder = copy_smoke(tmp_path)
    (tmp_path / "elsewhere.diff").write_text((folder / "patches" / os.listdir(folder / "patches")[0]).read_text())
    data = yaml.safe_load((folder / "taskset.yaml").read_text())
    data["tasks"][0]["patch"] = "../elsewhere.diff"
    (folder / "taskset.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(InputError, match=r"tasks\.0 .*patch.*outside the taskset"):
        load_taskset(folder)


def test_links_inside_the_repository_stay_links(tmp_path):
    folder = copy_smoke(tmp_path)
    repo = folder / "repos" / "calc"
    os.symlink("calc", repo / "alias")
    os.symlink("stats.py", repo / "calc" / "stats_link.py")
    task = next(t for t in load_taskset(folder).tasks if t.repo_name == "calc")
    ws = Workspace.create(task, "python3")
    try:
        assert (ws.root / "alias").is_symlink() and os.readlink(ws.root / "alias") == "calc"
        assert os.readlink(ws.root / "calc" / "stats_link.py") == "stats.py"
        assert ws.diff() == ""
    finally:
        ws.cleanup()
        remove_templates()


def test_a_link_out_added_after_loading_never_reaches_a_workspace(tmp_path, monkeypatch):
    """The workspace copy keeps links as links and checks again: nothing outside is ever copied."""
    monkeypatch.setenv("CTXBENCH_WORKDIR", str(tmp_path / "work"))
    folder = copy_smoke(tmp_path)
    task = next(t for t in load_taskset(folder).tasks if t.repo_name == "calc")
    os.symlink("/usr", folder / "repos" / "calc" / "usr")
    with pytest.raises(InputError, match="usr -> /usr"):
        prepare_template(task)
    assert not any((tmp_path / "work").glob("ctxbench-*"))


def git(cwd: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout


def swebench(tmp_path: Path, link_target: str | None, repo_name: str = "acme/calc") -> Path:
    repo = tmp_path / "repos" / "acme__calc"
    shutil.copytree(SMOKE / "repos" / "calc", repo)
    if link_target:
        os.symlink(link_target, repo / "secret.txt")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    row = {"instance_id": "acme__calc-1", "repo": repo_name, "base_commit": git(repo, "rev-parse", "HEAD").strip(),
           "patch": "", "test_patch": "", "problem_statement": "x", "FAIL_TO_PASS": ["tests/t.py::t"],
           "PASS_TO_PASS": []}
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path


@pytest.mark.parametrize("target", ["/proc/self/environ", "../../../etc/passwd"])
def test_swebench_commit_with_a_link_out_is_refused(tmp_path, target):
    path = swebench(tmp_path, target)
    result = CliRunner().invoke(cli, ["tasks", "list", str(path), "--repos", str(tmp_path / "repos")])
    assert result.exit_code == 2 and f"secret.txt -> {target}" in result.output, result.output


def test_swebench_link_inside_is_kept(tmp_path):
    path = swebench(tmp_path, "calc/stats.py")
    task = load_taskset(path, tmp_path / "repos").tasks[0]
    ws = Workspace.create(task, "python3")
    try:
        assert os.readlink(ws.root / "secret.txt") == "calc/stats.py"
    finally:
        ws.cleanup()
        remove_templates()


def test_swebench_repo_outside_the_repos_folder_is_refused(tmp_path):
    path = swebench(tmp_path, None, repo_name="..")
    result = CliRunner().invoke(cli, ["tasks", "list", str(path), "--repos", str(tmp_path / "repos")])
    assert result.exit_code == 2 and "outside the repositories folder" in result.output, result.output
