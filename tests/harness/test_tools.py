import json
import os
from pathlib import Path

import pytest

from ctxbench.harness.history import ToolCall
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.loop.tools import Toolbox
from ctxbench.harness.environments.workspace import Workspace
import sys


@pytest.fixture
def box(smoke_dir):
    task = load_taskset(smoke_dir).tasks[0]
    ws = Workspace.create(task, sys.executable)
    yield Toolbox(ws, test_timeout_s=30, output_bytes=50_000)
    ws.cleanup()


def call(box, name, **args):
    return box.execute(ToolCall("c1", name, json.dumps(args)), turn=0)


def test_read_file_numbers_lines_and_range(box):
    r = call(box, "read_file", path="calc/stats.py", start_line=2, end_line=4)
    assert not r.observation.is_error
    assert r.observation.kind == "file_read" and r.observation.line_range == (2, 4)
    assert r.observation.content.splitlines()[0].startswith("== calc/stats.py (lines 2-4 of ")
    assert len(r.observation.content.splitlines()) == 4


@pytest.mark.parametrize("path, message", [
    ("../outside.txt", "'..' is not allowed"),
    ("calc/../../x", "'..' is not allowed"),
    ("/etc/passwd", "absolute paths are not allowed"),
    (".git/config", ".git folder"),
])
def test_paths_outside_are_refused(box, path, message):
    r = call(box, "read_file", path=path)
    assert r.observation.is_error and message in r.observation.content
    assert not r.invalid


def test_symlink_leading_out_is_refused(box, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("top secret")
    os.symlink(secret, box.root / "link.txt")
    os.symlink(tmp_path, box.root / "linkdir")
    for path in ("link.txt", "linkdir/secret.txt"):
        r = call(box, "read_file", path=path)
        assert r.observation.is_error and "outside the repository" in r.observation.content
        assert "top secret" not in r.observation.content
    w = call(box, "write_file", path="linkdir/new.txt", content="x")
    assert w.observation.is_error and not (tmp_path / "new.txt").exists()


def test_edit_file_exact_unique_replacement(box):
    r = call(box, "edit_file", path="calc/stats.py", old_text="def median(", new_text="def median(")
    assert not r.observation.is_error and r.observation.content.startswith("edited calc/stats.py")


def test_edit_file_absent_and_ambiguous(box):
    absent = call(box, "edit_file", path="calc/stats.py", old_text="no such text here", new_text="x")
    assert absent.observation.is_error and "not found" in absent.observation.content
    ambiguous = call(box, "edit_file", path="calc/stats.py", old_text="return", new_text="return")
    assert ambiguous.observation.is_error and "occurs" in ambiguous.observation.content
    missing = call(box, "edit_file", path="calc/nope.py", old_text="a", new_text="b")
    assert missing.observation.is_error and "no such file" in missing.observation.content


def test_malformed_calls_are_invalid_actions(box):
    bad_json = box.execute(ToolCall("c", "read_file", "{not json"), 0)
    unknown = box.execute(ToolCall("c", "delete_everything", "{}"), 0)
    missing = box.execute(ToolCall("c", "edit_file", json.dumps({"path": "a"})), 0)
    for r in (bad_json, unknown, missing):
        assert r.invalid and r.observation.is_error and r.observation.kind == "error"
    assert "unknown tool" in unknown.observation.content
    assert "old_text" in missing.observation.content


def test_search_literal_and_regex(box):
    lit = call(box, "search", query="def median(")
    assert lit.observation.content.startswith("1 matches")
    assert "calc/stats.py:" in lit.observation.content
    rx = call(box, "search", query=r"def (mean|median)\(", regex=True)
    assert rx.observation.content.startswith("2 matches")
    bad = call(box, "search", query="(", regex=True)
    assert bad.observation.is_error


def test_run_tests_reports_exit_code(box):
    r = call(box, "run_tests")
    assert r.observation.kind == "test_run"
    assert r.observation.content.rstrip().endswith("[exit code 1]")
    assert "failed" in r.observation.content
    assert r.test_seconds > 0


def test_list_files_hides_git(box):
    r = call(box, "list_files")
    lines = r.observation.content.splitlines()
    assert "calc/stats.py" in lines and not any(".git/" in l for l in lines)
