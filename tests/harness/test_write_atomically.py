"""Report files are written whole or not at all: a process killed while `ctxbench report` plotted left a
zero-byte PNG (7 of 7 aimed kills)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ctxbench.harness.paths import write_atomically


def test_a_write_that_fails_midway_leaves_the_old_file_and_no_scrap(tmp_path, monkeypatch):
    path = tmp_path / "plot.png"
    path.write_bytes(b"old picture")

    def crash(fd: int) -> None:
        raise OSError("killed")

    monkeypatch.setattr(os, "fsync", crash)
    with pytest.raises(OSError, match="killed"):
        write_atomically(path, b"new picture, half written")
    assert path.read_bytes() == b"old picture"
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]


def test_text_and_bytes_are_written_whole(tmp_path):
    assert write_atomically(tmp_path / "a.md", "€ text").read_bytes() == "€ text".encode()
    assert write_atomically(tmp_path / "b.png", b"\x89PNG").read_bytes() == b"\x89PNG"


def test_a_process_killed_while_writing_leaves_no_partial_file(tmp_path):
    """A writer stopped (SIGSTOP) after the temporary file is opened, then SIGKILLed: the target never
    appears, partly written or empty."""
    target = tmp_path / "plot.png"
    script = ("import os, signal, sys\n"
              "from pathlib import Path\n"
              "from ctxbench.harness.paths import write_atomically\n"
              "real = os.fsync\n"
              "def stop(fd):\n"
              "    os.kill(os.getpid(), signal.SIGSTOP)\n"
              "    real(fd)\n"
              "os.fsync = stop\n"
              f"write_atomically(Path({str(target)!r}), b'x' * 1_000_000)\n")
    child = subprocess.Popen([sys.executable, "-c", script])
    _, status = os.waitpid(child.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert not target.exists()
