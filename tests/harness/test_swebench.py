"""A SWE-bench-style JSONL over a git repository built here: load, validate, run, export."""

import json
import shutil
import subprocess

from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.tasks.taskset import load_taskset


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                               "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(cwd), "PATH": "/usr/bin:/bin"}).stdout


def make_instances(tmp_path, smoke_dir):
    """The smoke `calc` library as a git repo whose later commit (and tag) holds the fix."""
    repo = tmp_path / "repos" / "acme__calc"
    shutil.copytree(smoke_dir / "repos" / "calc", repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    base = git(repo, "rev-parse", "HEAD").strip()
    ts = load_taskset(smoke_dir)
    task = next(t for t in ts.tasks if t.id == "calc-median-even-length")
    subprocess.run(["git", "apply"], input=task.patch, cwd=repo, check=True, text=True)
    git(repo, "commit", "-qam", "fix median")
    git(repo, "tag", "v1.0-fixed")
    row = {"instance_id": "acme__calc-1", "repo": "acme/calc", "base_commit": base, "patch": task.patch,
           "test_patch": "", "problem_statement": task.problem_statement,
           "FAIL_TO_PASS": json.dumps(list(task.FAIL_TO_PASS)), "PASS_TO_PASS": list(task.PASS_TO_PASS)}
    path = tmp_path / "instances.jsonl"
    path.write_text(json.dumps(row) + "\n")
    return path, tmp_path / "repos"


def test_swebench_instances_validate_run_and_export(tmp_path, smoke_dir, monkeypatch):
    monkeypatch.setenv("CTXBENCH_WORKDIR", str(tmp_path / "work"))  # the kept workspaces go with tmp_path
    path, repos = make_instances(tmp_path, smoke_dir)
    runner = CliRunner()
    validated = runner.invoke(cli, ["tasks", "validate", str(path), "--repos", str(repos)])
    assert validated.exit_code == 0, validated.output
    assert "1/1 tasks valid" in validated.output

    exp = tmp_path / "exp.yaml"
    exp.write_text(json.dumps({"name": "swe", "taskset": {"path": str(path), "repos": str(repos)},
                               "strategies": [{"name": "baseline"}], "repeats": 2, "workers": 1,
                               "sandbox": "none", "keep_workspaces": True}))
    out = tmp_path / "out"
    result = runner.invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"])
    assert result.exit_code == 0, result.output
    runs = [json.loads(l) for l in (out / "runs.jsonl").read_text().splitlines()]
    assert len(runs) == 2 and any(r["resolved"] for r in runs)

    exported = runner.invoke(cli, ["export-predictions", str(out)])
    assert exported.exit_code == 0, exported.output
    rows = [json.loads(l) for l in (out / "predictions" / "baseline.r0.jsonl").read_text().splitlines()]
    assert len(rows) == 1
    assert set(rows[0]) == {"instance_id", "model_name_or_path", "model_patch"}
    assert rows[0]["instance_id"] == "acme__calc-1"


def test_workspace_holds_no_history_of_the_source_repo(tmp_path, smoke_dir):
    import sys

    from ctxbench.harness.environments.workspace import Workspace

    path, repos = make_instances(tmp_path, smoke_dir)
    task = load_taskset(path, repos).tasks[0]
    ws = Workspace.create(task, sys.executable)
    try:
        log = git(ws.root, "log", "--all", "--oneline")
        assert len(log.strip().splitlines()) == 1
        assert git(ws.root, "tag").strip() == ""
        assert "values[mid + 1]" in (ws.root / "calc" / "stats.py").read_text()
    finally:
        ws.cleanup()
