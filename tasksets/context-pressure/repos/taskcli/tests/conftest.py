"""Shared fixtures: an isolated data directory and an in-process CLI runner.

Every command a test runs is echoed (with its output) to stdout, so that a
failing test shows the whole session in pytest's "Captured stdout" section.
"""

from __future__ import annotations

import io
import json
import shlex
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

import pytest

from taskcli.cli import main

NOW = "2024-05-08T10:00:00"  # a Wednesday


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()

    def json(self):
        return json.loads(self.out)


class TaskCLI:
    """Runs ``taskcli`` commands against one temporary data directory."""

    def __init__(self, data_dir):
        self.data_dir = data_dir

    def __call__(self, *argv: str, expect: int | None = 0) -> Result:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main(["--data-dir", str(self.data_dir), *argv])
        print(f"$ taskcli {shlex.join(argv)}")
        if out.getvalue():
            print(out.getvalue(), end="" if out.getvalue().endswith("\n") else "\n")
        if err.getvalue():
            print("[stderr] " + err.getvalue().rstrip())
        result = Result(code, out.getvalue(), err.getvalue())
        if expect is not None:
            assert code == expect, f"exit code {code}, expected {expect}; stderr: {result.err}"
        return result

    def add(self, *argv: str) -> int:
        """Add a task and return its id."""
        result = self("add", *argv)
        return int(result.out.split()[2].rstrip(":"))

    def set_now(self, monkeypatch, value: str) -> None:
        monkeypatch.setenv("TASKCLI_NOW", value)

    def data(self) -> dict:
        with open(self.data_dir / "tasks.json", encoding="utf-8") as handle:
            return json.load(handle)


@pytest.fixture(autouse=True)
def _environment(monkeypatch):
    monkeypatch.setenv("TASKCLI_NOW", NOW)
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.delenv("TASKCLI_DIR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)


@pytest.fixture
def tc(tmp_path):
    return TaskCLI(tmp_path / "data")
