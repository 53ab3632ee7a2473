"""Running test commands: own process group, resource limits, optional bubblewrap jail."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["ProcessResult", "Sandbox", "run_contained", "bwrap_available"]

CPU_SECONDS = 120
ADDRESS_SPACE = 4 * 1024**3
FILE_SIZE = 256 * 1024**2
PROCESSES = 256


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int
    output: str
    """Combined stdout/stderr, head and tail kept when over the cap."""
    timed_out: bool
    seconds: float
    omitted_bytes: int = 0


@lru_cache(maxsize=1)
def bwrap_available() -> str | None:
    """Why bubblewrap cannot be used here, or None when it works."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bwrap is not installed (Debian package `bubblewrap`)"
    probe = subprocess.run([exe, "--ro-bind", "/", "/", "--unshare-net", "--dev", "/dev", "true"],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"bwrap cannot create a sandbox here: {probe.stderr.strip()[:200]}"
    return None


@dataclass(frozen=True)
class Sandbox:
    """How to contain a command: `bwrap` (no network, only the workspace writable) or `none`."""

    mode: str = "none"
    extra_ro: tuple[str, ...] = ()

    def wrap(self, argv: list[str], workdir: Path, writable: Path | None = None) -> list[str]:
        if self.mode != "bwrap":
            return argv
        rw = writable or workdir
        return [
            "bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--bind", str(rw), str(rw),
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--die-with-parent",
            "--chdir", str(workdir), "--", *argv,
        ]


def _limits(cpu_seconds: int) -> None:
    for which, value in ((resource.RLIMIT_CPU, cpu_seconds), (resource.RLIMIT_AS, ADDRESS_SPACE),
                         (resource.RLIMIT_FSIZE, FILE_SIZE), (resource.RLIMIT_NPROC, PROCESSES)):
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass


def run_contained(argv: list[str], cwd: Path, timeout_s: float, env: dict[str, str],
                  sandbox: Sandbox = Sandbox(), output_cap: int = 200_000,
                  writable: Path | None = None) -> ProcessResult:
    """Run `argv` in its own process group; kill the whole group on timeout.

    Output beyond `output_cap` bytes is dropped from the middle (head and tail kept), so a
    command printing gigabytes costs no memory.
    """
    start = time.monotonic()
    proc = subprocess.Popen(
        sandbox.wrap(argv, cwd, writable), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
        preexec_fn=lambda: _limits(max(1, int(timeout_s) + 5)),
    )
    head = bytearray()
    tail = bytearray()
    dropped = 0
    half = output_cap // 2

    def pump() -> None:
        nonlocal dropped
        assert proc.stdout is not None
        while chunk := proc.stdout.read1(65536):
            room = half - len(head)
            if room > 0:
                head.extend(chunk[:room])
                chunk = chunk[room:]
            tail.extend(chunk)
            if len(tail) > half:
                dropped += len(tail) - half
                del tail[: len(tail) - half]

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()
    timed_out = False
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        reader.join(timeout=5)
        if proc.stdout:
            proc.stdout.close()
    text = head.decode(errors="replace")
    if dropped:
        text += f"\n[… {dropped} bytes of output omitted …]\n"
    text += tail.decode(errors="replace")
    return ProcessResult(proc.returncode if not timed_out else -9, text, timed_out,
                         time.monotonic() - start, dropped)
