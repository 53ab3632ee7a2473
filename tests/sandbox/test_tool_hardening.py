"""Every refusal of a tool is an error observation the agent sees; nothing a model sends crashes a run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from ctxbench.harness.loop import tools
from ctxbench.harness.history import ToolCall
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.loop.tools import Toolbox
from ctxbench.harness.environments.workspace import Workspace

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def box():
    ws = Workspace.create(load_taskset(ROOT / "tasksets" / "smoke").tasks[0], sys.executable)
    yield Toolbox(ws, test_timeout_s=30, output_bytes=5_000)
    ws.cleanup()


def call(box, name, args):
    raw = args if isinstance(args, str) else json.dumps(args)
    return box.execute(ToolCall("c", name, raw), turn=0)


def refused(result, text, invalid=False):
    obs = result.observation
    assert obs.is_error and obs.kind == "error" and obs.content.startswith("error: "), obs.content
    assert text in obs.content, obs.content
    assert result.invalid is invalid


def test_reads_over_the_cap_and_binary_files_are_refused(box):
    (box.root / "big.txt").write_text("x" * (tools.MAX_READ_BYTES + 1))
    (box.root / "blob.bin").write_bytes(b"abc" * 5000 + b"\0" + b"def")
    (box.root / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    refused(call(box, "read_file", {"path": "big.txt"}), "read limit")
    refused(call(box, "read_file", {"path": "blob.bin"}), "binary file")
    refused(call(box, "read_file", {"path": "latin1.txt"}), "not UTF-8")
    refused(call(box, "edit_file", {"path": "blob.bin", "old_text": "abc", "new_text": "x"}), "binary file")


def test_writes_over_the_cap_are_refused_and_nothing_is_written(box):
    big = "y" * (tools.MAX_WRITE_BYTES + 1)
    refused(call(box, "write_file", {"path": "new.py", "content": big}), "larger than")
    assert not (box.root / "new.py").exists()
    refused(call(box, "edit_file", {"path": "calc/stats.py", "old_text": "def median(", "new_text": big}), "larger than")
    half = "z" * (tools.MAX_WRITE_BYTES // 2 + 10)
    assert not call(box, "write_file", {"path": "grow.txt", "content": "A\n"}).observation.is_error
    assert not call(box, "edit_file", {"path": "grow.txt", "old_text": "A", "new_text": half + "A"}).observation.is_error
    refused(call(box, "edit_file", {"path": "grow.txt", "old_text": "A", "new_text": half + "A"}), "read limit")


def test_undecodable_text_and_bad_paths_are_errors_not_crashes(box):
    refused(call(box, "write_file", '{"path": "s.txt", "content": "\\ud800"}'), "UnicodeEncodeError")
    refused(call(box, "read_file", {"path": "calc\u0000/stats.py"}), "NUL")
    (box.root / "afile").write_text("x")
    refused(call(box, "write_file", {"path": "afile/inner.txt", "content": "x"}), "is a file, not a folder")
    refused(call(box, "write_file", {"path": "calc", "content": "x"}), "is a folder")
    refused(call(box, "list_files", {"path": "nope"}), "no such file")


@pytest.mark.parametrize("tool, args, message", [
    ("read_file", {"path": "calc/stats.py", "start_line": "abc"}, "must be an integer"),
    ("read_file", {"path": "calc/stats.py", "start_line": True}, "must be an integer"),
    ("read_file", {"path": "calc/stats.py", "start_line": 0}, "at least 1"),
    ("read_file", {"path": 7}, "must be a string"),
    ("read_file", {"path": "calc/stats.py", "mode": "fast"}, "unknown argument 'mode'"),
    ("search", {"query": ["a"]}, "must be a string"),
    ("search", {"query": "a", "regex": "yes"}, "must be a boolean"),
    ("run_tests", {"test_ids": "tests/test_stats.py"}, "list of strings"),
    ("run_tests", {"test_ids": [1, 2]}, "list of strings"),
    ("edit_file", {"path": "calc/stats.py", "old_text": 1, "new_text": "x"}, "must be a string"),
])
def test_wrong_argument_types_are_invalid_actions(box, tool, args, message):
    refused(call(box, tool, args), message, invalid=True)


def test_integer_strings_and_nulls_are_accepted(box):
    r = call(box, "read_file", {"path": "calc/stats.py", "start_line": "2", "end_line": None})
    assert not r.observation.is_error and r.observation.line_range[0] == 2


def test_test_ids_cannot_smuggle_options(box):
    for bad in ("--junitxml=/tmp/x.xml", "-p", "", "tests/x.py\u0000"):
        refused(call(box, "run_tests", {"test_ids": [bad]}), "never an option")
    refused(call(box, "run_tests", {"test_ids": ["t"] * (tools.MAX_TEST_IDS + 1)}), f"at most {tools.MAX_TEST_IDS}")


def test_search_is_bounded_in_matches_time_and_walk(box, monkeypatch):
    for i in range(5):
        (box.root / f"many{i}.txt").write_text("needle\n" * 40)
    r = call(box, "search", {"query": "needle"})
    assert not r.observation.is_error
    assert f"{tools.MAX_SEARCH_MATCHES} matches" in r.observation.content and "narrow the search" in r.observation.content
    (box.root / "redos.txt").write_text(("a" * 60 + "!\n") * 200)
    monkeypatch.setattr(tools, "SEARCH_SECONDS", 0.5)
    r = call(box, "search", {"query": "(a|aa)+$", "regex": True})
    assert "search stopped after" in r.observation.content
    refused(call(box, "search", {"query": "(unclosed", "regex": True}), "invalid regular expression")
    monkeypatch.setattr(tools, "MAX_WALK", 10)
    r = call(box, "list_files", {})
    assert "listing stopped after 10 entries" in r.observation.content


def test_tool_output_is_capped_in_bytes(box):
    (box.root / "wide.txt").write_text(("é" * 100 + "\n") * 200)
    r = call(box, "read_file", {"path": "wide.txt"})
    assert len(r.observation.content.encode()) < 5_000 + 200
    assert "bytes of tool output omitted" in r.observation.content
