"""Shared fixtures: the built-in smoke taskset and experiment files."""

from __future__ import annotations

import fcntl
import os
import signal
from pathlib import Path
from typing import Any

import pytest


ROOT = Path(__file__).resolve().parent.parent

# The tests against a real model need a llama.cpp server (examples/local-model/llama_server.sh: a 20-minute
# build the first time): `.ci/run` starts one and runs them with CTXBENCH_LLAMA_SERVER set to its base URL.
collect_ignore = [] if os.environ.get("CTXBENCH_LLAMA_SERVER") else ["real_model"]

# A suite started in the background by a shell without job control inherits SIGINT ignored, and so would
# every ctxbench process a test starts: the tests of Ctrl-C would then meet a process that cannot hear it.
# A handled signal is reset to its default in a child, an ignored one stays ignored.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def smoke_dir() -> Path:
    return ROOT / "tasksets" / "smoke"


@pytest.fixture
def experiment_file(tmp_path: Path):
    """Write an experiment YAML into tmp_path and return its path."""

    def make(**overrides: Any) -> Path:
        import yaml

        data = {"name": "t", "taskset": str(ROOT / "tasksets" / "smoke"), "strategies": [{"name": "baseline"}],
                "repeats": 1, "workers": 1, "sandbox": "none"}
        data.update(overrides)
        path = tmp_path / "exp.yaml"
        path.write_text(yaml.safe_dump(data))
        return path

    return make


@pytest.fixture
def one_ray_at_a_time(tmp_path_factory):
    """Held by each test that starts Ray, so the pytest processes of a run (pytest-xdist) never start
    two Ray runtimes at once: on a loaded 2-core machine two of them starve each other for minutes."""
    shared = tmp_path_factory.getbasetemp().parent  # the same folder for every process of the run
    with open(shared / "ctxbench-ray-tests.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
