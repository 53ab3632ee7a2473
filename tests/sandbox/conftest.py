"""Fixtures for the containment tests."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from sandbox_helpers import HOSTILE, ChatServer, Listener, tempfile_dir


@pytest.fixture
def chat_server() -> Callable[[list[tuple[str, dict[str, Any]]]], ChatServer]:
    servers: list[ChatServer] = []

    def start(script: list[tuple[str, dict[str, Any]]]) -> ChatServer:
        servers.append(ChatServer(script))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


@pytest.fixture
def listener():
    lst = Listener()
    yield lst
    lst.close()


@pytest.fixture
def hostile(tmp_path: Path, listener: Listener) -> dict[str, Any]:
    """A copy of tests/fixtures/hostile aimed at this test's listener and an outside file on the host disk."""
    folder = tmp_path / "hostile"
    shutil.copytree(HOSTILE, folder)
    outside_dir = Path(tempfile_dir())
    outside = outside_dir / "pwned.txt"
    (folder / "repos" / "hostile" / "tests" / "port.txt").write_text(f"{listener.port}\n")
    (folder / "repos" / "hostile" / "tests" / "outside.txt").write_text(f"{outside}\n")
    yield {"path": folder, "outside": outside, "listener": listener,
           "tasks": [t["id"] for t in yaml.safe_load((folder / "taskset.yaml").read_text())["tasks"]]}
    shutil.rmtree(outside_dir, ignore_errors=True)
