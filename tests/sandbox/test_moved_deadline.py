"""A contained command's timeout moves by time that is not its own (an external agent's waits on a
failing model endpoint), read again while it runs."""

from __future__ import annotations

import time

from ctxbench.harness.sandbox import Sandbox, run_contained

ENV = {"PATH": "/usr/bin:/bin"}


def test_the_timeout_moves_by_the_seconds_added_while_the_command_runs(tmp_path):
    started = time.monotonic()
    waited = lambda: 2.0 if time.monotonic() - started > 0.3 else 0.0  # a retry storm, 0.3 s in
    moved = run_contained(["sleep", "1.5"], tmp_path, 1.0, ENV, Sandbox(), extended=waited)
    assert not moved.timed_out and moved.exit_code == 0 and moved.seconds >= 1.5
    fixed = run_contained(["sleep", "1.5"], tmp_path, 1.0, ENV, Sandbox())
    assert fixed.timed_out and fixed.exit_code == -9
