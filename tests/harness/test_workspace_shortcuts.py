"""Each shortcut of the workspace gives the slow path's result when its precondition holds, and is
not taken when it does not (see the docstrings in ctxbench.harness.environments.workspace)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ctxbench.harness.environments.gitcmd import git
from ctxbench.harness.records import Task
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.environments.templates import prepare_template, remove_templates, template_snapshot
from ctxbench.harness.environments.baseline import base_evaluation
from ctxbench.harness.environments.workspace import Workspace
from ctxbench.harness.sandbox import Sandbox

TASK = "calc-median-even-length"


@pytest.fixture
def task(smoke_dir) -> Task:
    yield next(t for t in load_taskset(smoke_dir).tasks if t.id == TASK)
    remove_templates()


@pytest.fixture
def workspace(task):
    ws = Workspace.create(task, sys.executable)
    yield ws
    ws.cleanup()


def _git_diff(ws: Workspace) -> str:
    """The slow path of `diff`: ask git."""
    git(["add", "-A"], ws.root)
    return git(["diff", "--cached", "--binary", "--no-color", "HEAD"], ws.root).stdout


def _without_template(ws: Workspace) -> Workspace:
    """The same folder seen by a workspace that knows no template: every shortcut is off."""
    return Workspace(ws.root, ws.task, ws.python, ws.sandbox, ws.output_cap, ws._scratch)


def test_unchanged_after_reads_agrees_with_git(workspace):
    for path in workspace.root.rglob("*.py"):
        path.read_text()
    assert workspace.unchanged()
    assert workspace.diff() == "" == _git_diff(workspace)


def test_unchanged_is_not_taken_after_a_write(workspace):
    stats = workspace.root / "calc" / "stats.py"
    text = stats.read_text()
    stats.write_text(text.replace("mid + 1", "mid - 1", 1))  # same size: only the mtime tells
    assert len(stats.read_text()) == len(text)
    assert not workspace.unchanged()
    assert "a/calc/stats.py" in workspace.diff()


def test_unchanged_is_not_taken_without_a_template(workspace):
    other = _without_template(workspace)
    assert not other.unchanged()
    assert other.diff() == ""


def test_untouched_evaluation_agrees_with_the_full_one(task, workspace):
    assert workspace._untouched()
    quick = workspace.evaluate(120)
    fresh = Workspace.create(task, sys.executable)
    try:
        full_ws = _without_template(fresh)
        assert not full_ws._untouched()
        full = full_ws.evaluate(120)
    finally:
        fresh.cleanup()
    assert quick.tests == full.tests and quick.resolved == full.resolved
    assert quick.test_patch_applied == full.test_patch_applied


def test_untouched_is_not_taken_once_git_or_a_file_changed(workspace):
    assert workspace._untouched()
    git(["status", "--porcelain"], workspace.root)  # refreshes .git/index
    (workspace.root / "notes.txt").write_text("x")
    assert not workspace._untouched()


def test_untouched_is_not_taken_for_a_template_with_ignored_files(task):
    """`prepare_template` tracks every file it copies; a template holding an untracked ignored file
    (here put there by hand) is not what evaluation makes of a copy, and the shortcut is off."""
    template = prepare_template(task)
    (template / "calc" / "__pycache__").mkdir()
    (template / "calc" / "__pycache__" / "stale.pyc").write_bytes(b"\0")
    assert template_snapshot(template) is None
    ws = Workspace.create(task, sys.executable)
    try:
        assert (ws.root / "calc" / "__pycache__" / "stale.pyc").exists()
        assert not ws._untouched()
        evaluation = ws.evaluate(120)
        assert not (ws.root / "calc" / "__pycache__" / "stale.pyc").exists()  # evaluation removes it
        assert evaluation.tests[task.FAIL_TO_PASS[0]] == "failed"
    finally:
        ws.cleanup()


def test_staged_diff_is_not_trusted_after_apply_patch(task, workspace):
    (workspace.root / "calc" / "extra.py").write_text("y = 2\n")
    assert workspace.diff() and workspace._staged
    assert workspace.apply_patch(task.patch)
    assert not workspace._staged
    after_diff = workspace.evaluate(120)
    fresh = Workspace.create(task, sys.executable)
    try:
        (fresh.root / "calc" / "extra.py").write_text("y = 2\n")
        assert fresh.apply_patch(task.patch)
        direct = fresh.evaluate(120)
    finally:
        fresh.cleanup()
    assert after_diff.tests == direct.tests and after_diff.resolved and direct.resolved


def test_base_evaluation_is_reused_only_for_the_same_key(task):
    sandbox = Sandbox()
    first = base_evaluation(task, sys.executable, 120, sandbox)
    again = base_evaluation(task, sys.executable, 120, sandbox)
    other_timeout = base_evaluation(task, sys.executable, 121, sandbox)
    fresh = Workspace.create(task, sys.executable)
    try:
        direct = fresh.evaluate(120)
    finally:
        fresh.cleanup()
    assert first.seconds > 0 and again.seconds == 0.0 and other_timeout.seconds > 0
    assert first.tests == again.tests == other_timeout.tests == direct.tests
    assert Path(str(prepare_template(task))).exists()
