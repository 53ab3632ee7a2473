import os
import sys
import time
from pathlib import Path

from ctxbench.harness.sandbox import run_contained
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.environments.testenv import test_env_vars as env_vars
from ctxbench.harness.environments.workspace import Workspace


def _task(smoke_dir, task_id):
    return next(t for t in load_taskset(smoke_dir).tasks if t.id == task_id)


def test_workspace_is_private_git_copy_and_patch_is_git_diff(smoke_dir):
    task = _task(smoke_dir, "calc-median-even-length")
    ws = Workspace.create(task, sys.executable)
    try:
        assert (ws.root / ".git").is_dir()
        assert ws.diff() == ""
        (ws.root / "calc" / "new.py").write_text("x = 1\n")
        diff = ws.diff()
        assert "diff --git a/calc/new.py b/calc/new.py" in diff and "+x = 1" in diff
        assert not (task.repo_dir / "calc" / "new.py").exists()
    finally:
        ws.cleanup()
    assert not ws.root.exists()


def test_same_size_rewrite_and_deletion_are_in_the_patch(smoke_dir):
    """The quick "nothing changed" check must not hide an edit that keeps the file's size."""
    task = _task(smoke_dir, "calc-median-even-length")
    ws = Workspace.create(task, sys.executable)
    try:
        ops = ws.root / "calc" / "ops.py"
        text = ops.read_text()
        swapped = text.replace("+", "-", 1)
        assert swapped != text and len(swapped) == len(text)
        ops.write_text(swapped)
        assert "a/calc/ops.py" in ws.diff()
        ops.write_text(text)
        assert ws.diff() == ""
        (ws.root / "calc" / "errors.py").unlink()
        assert "deleted file mode" in ws.diff()
    finally:
        ws.cleanup()


def test_evaluation_reads_junit_outcomes(smoke_dir):
    task = _task(smoke_dir, "calc-median-even-length")
    ws = Workspace.create(task, sys.executable)
    try:
        before = ws.evaluate(60)
        assert set(before.tests) == set(task.FAIL_TO_PASS) | set(task.PASS_TO_PASS)
        assert all(before.tests[t] == "failed" for t in task.FAIL_TO_PASS)
        assert all(before.tests[t] == "passed" for t in task.PASS_TO_PASS)
        assert not before.resolved
        assert ws.apply_patch(task.patch)
        after = ws.evaluate(60)
        assert after.resolved and set(after.tests.values()) == {"passed"}
    finally:
        ws.cleanup()


def test_hidden_tests_appear_only_at_evaluation(smoke_dir):
    task = _task(smoke_dir, "calc-percentile-upper-bound")
    ws = Workspace.create(task, sys.executable)
    try:
        hidden_file = task.FAIL_TO_PASS[0].split("::")[0]
        visible = (ws.root / hidden_file).read_text() if (ws.root / hidden_file).exists() else ""
        hidden_name = task.FAIL_TO_PASS[0].split("::")[-1]
        assert hidden_name not in visible
        result = ws.evaluate(60)
        assert result.test_patch_applied
        assert result.tests[task.FAIL_TO_PASS[0]] == "failed"
    finally:
        ws.cleanup()


def test_timeout_kills_the_whole_process_tree(tmp_path):
    marker = tmp_path / "alive"
    child = tmp_path / "child.py"
    child.write_text(f"import time\nwhile True:\n    open({str(marker)!r}, 'w').write(str(time.time()))\n    time.sleep(0.1)\n")
    script = (f"import os, subprocess, sys, time\nsubprocess.Popen([sys.executable, {str(child)!r}])\n"
              f"while not os.path.exists({str(marker)!r}):\n    time.sleep(0.01)\ntime.sleep(60)\n")
    # 5 s: time enough for the grandchild to start on a loaded machine; the script sleeps only once it has
    result = run_contained([sys.executable, "-c", script], tmp_path, 5.0, env_vars(tmp_path))
    assert result.timed_out and result.exit_code == -9
    time.sleep(0.5)
    stamp = marker.read_text()
    time.sleep(0.5)
    assert marker.read_text() == stamp, "the grandchild survived the timeout"


def test_output_is_capped_head_and_tail(tmp_path):
    script = "import sys\nfor i in range(200000): print('line', i)\nprint('THE END')"
    result = run_contained([sys.executable, "-c", script], tmp_path, 30, env_vars(tmp_path), output_cap=10_000)
    assert len(result.output) < 12_000 and result.omitted_bytes > 0
    assert result.output.startswith("line 0") and result.output.rstrip().endswith("THE END")


def test_sweep_removes_folders_of_dead_processes_only(smoke_dir, tmp_path, monkeypatch):
    """A runner killed with SIGKILL leaves its templates and workspaces; the next sweep removes them,
    not those of live processes and not kept workspaces."""
    import signal
    import subprocess

    from ctxbench.harness.environments.workspace import sweep_leftovers

    monkeypatch.setenv("CTXBENCH_WORKDIR", str(tmp_path))
    task = _task(smoke_dir, "calc-median-even-length")
    killed = subprocess.run([sys.executable, "-c", (
        "import os, sys\n"
        "from ctxbench.harness.tasks.taskset import load_taskset\n"
        "from ctxbench.harness.environments.workspace import Workspace\n"
        f"task = next(t for t in load_taskset({str(smoke_dir)!r}).tasks if t.id == {task.id!r})\n"
        "Workspace.create(task, sys.executable)\n"
        "print(os.getpid(), flush=True)\n"
        "os.kill(os.getpid(), 9)\n")], capture_output=True, text=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    dead = [p.name for p in tmp_path.iterdir()]
    assert sorted(name.split("-")[1] for name in dead) == ["run", "template"]
    assert all(name.split("-")[2].startswith(killed.stdout.strip() + ".") for name in dead)

    mine = Workspace.create(task, sys.executable)
    kept = Workspace.create(task, sys.executable, keep=True)
    swept = sweep_leftovers()
    assert swept.workspaces == 2
    assert swept.messages()[0] == "removed 2 workspace folders left by ctxbench processes that no longer run"
    assert mine.root.exists() and kept.root.exists()
    assert not any((tmp_path / name).exists() for name in dead)
    mine.cleanup()
    kept.cleanup()


def test_strategies_see_the_files_the_tools_list(smoke_dir):
    """file_selector's repository view lists what `list_files` lists: no .git, caches or symlinks."""
    from ctxbench.harness.environments.workspace_files import WorkspaceFiles
    from ctxbench.harness.loop.tools import Toolbox

    task = _task(smoke_dir, "calc-median-even-length")
    ws = Workspace.create(task, sys.executable)
    try:
        (ws.root / "calc" / "__pycache__").mkdir()
        (ws.root / "calc" / "__pycache__" / "ops.cpython-311.pyc").write_bytes(b"\0")
        (ws.root / "calc" / "link.py").symlink_to(ws.root / "calc" / "ops.py")
        paths = WorkspaceFiles(ws.root).paths()
        assert "calc/ops.py" in paths and "tests/test_stats.py" in paths
        assert not [p for p in paths if ".git/" in p or "__pycache__" in p or p == "calc/link.py"]
        listing = Toolbox(ws, 60, 200_000)._tool_list_files()[0]
        assert listing.splitlines() == paths
    finally:
        ws.cleanup()


def _ignoring_task(root):
    """A one-test task whose repository ignores `*.log` and holds a `debug.log`."""
    repo = root / "repos" / "lib"
    repo.mkdir(parents=True)
    (repo / "lib.py").write_text("X = 1\n")
    (repo / "test_lib.py").write_text("from lib import X\n\n\ndef test_x():\n    assert X == 1\n")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "debug.log").write_text("left by the author\n")
    (root / "fix.diff").write_text("--- a/lib.py\n+++ b/lib.py\n@@ -1 +1 @@\n-X = 1\n+X = 2\n")
    (root / "taskset.yaml").write_text(
        "name: ignoring\ntasks:\n- id: lib\n  repo: lib\n  problem_statement: x\n  test_cmd: python -m pytest -q\n"
        "  FAIL_TO_PASS: [test_lib.py::test_x]\n  patch: fix.diff\n")
    return load_taskset(root).tasks[0]


def test_evaluation_skips_staging_only_for_an_untouched_copy(tmp_path):
    """An exact copy of the template is evaluated without staging and cleaning it (the taskset's own
    ignored file is tracked and stays); an ignored file made during the run is still removed."""
    task = _ignoring_task(tmp_path / "taskset")
    ws = Workspace.create(task, sys.executable)
    try:
        assert ws._untouched()
        assert ws.evaluate(60).tests == {"test_lib.py::test_x": "passed"}
        assert (ws.root / "debug.log").exists()
        (ws.root / "run.log").write_text("made by a test\n")
        assert not ws._untouched()
        assert ws.evaluate(60).tests == {"test_lib.py::test_x": "passed"}
        assert not (ws.root / "run.log").exists() and (ws.root / "debug.log").exists()
    finally:
        ws.cleanup()
