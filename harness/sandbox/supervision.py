"""Running a contained command: wait for its exit, output, timeout or process limit, then kill it all.

On every way out (exit, timeout, limit, an exception in the harness) the command's descendants, its
process group and its cgroup are killed, and the cgroup is removed. Where there is no cgroup (the
watchdog counts processes), the command's environment carries a tag (`TAG_VARIABLE`) and every process
that still holds it is killed too: a daemon the command left in a session of its own. Output is read
as it comes, head and tail kept, so a command printing gigabytes costs no memory.
"""

from __future__ import annotations

import os
import secrets
import selectors
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ctxbench.harness.sandbox import launch
from ctxbench.harness.sandbox.jail import Sandbox
from ctxbench.harness.sandbox.limits import PidsCgroup, ProcessCount, hold_process_count
from ctxbench.harness.sandbox.procs import (FALLBACK_POLL_S, descendants, exited, kill_and_wait, pidfd, send_signal,
                                             tagged, wait_exit)
from ctxbench.harness.markup.textcut import HeadTailBuffer

SCAN_S = 0.1
"""How often the watchdog counts the sandbox's processes (where no pids cgroup can be made)."""
_SILENT_S = 0.05
TAG_VARIABLE = "CTXBENCH_CONTAINED"
"""The variable whose value tags a contained command's processes where no cgroup holds them."""


@dataclass(frozen=True)
class ProcessResult:
    """What a contained command did: its exit code (-9 when killed at the timeout or a limit) and output."""

    exit_code: int
    output: str
    """Combined stdout/stderr, head and tail kept when over the cap."""
    timed_out: bool
    seconds: float
    omitted_bytes: int = 0
    limit_hit: str | None = None
    """`processes` when the sandbox was killed for holding too many processes."""


class _Events:
    """One selector over the command's output pipe and its exit (a pidfd): the wait wakes on output,
    on exit or at a deadline, never on a polling tick. Without pidfd the exit is checked every
    `FALLBACK_POLL_S`."""

    def __init__(self, proc: subprocess.Popen[bytes], pidfd: int | None, out: HeadTailBuffer) -> None:
        assert proc.stdout is not None
        self.pid = proc.pid
        self.pidfd = pidfd
        self.out = out
        self.fd = proc.stdout.fileno()
        os.set_blocking(self.fd, False)
        self.eof = False
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.fd, selectors.EVENT_READ)
        if pidfd is not None:
            self.sel.register(pidfd, selectors.EVENT_READ)

    def read(self) -> None:
        """Everything the pipe holds now; unregisters it at end of file."""
        while True:
            try:
                chunk = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                return
            if not chunk:
                self.eof = True
                self.sel.unregister(self.fd)
                return
            self.out.feed(chunk)

    def wait(self, until: float) -> bool:
        """Read output until the command exits (True) or `until` passes (False)."""
        while (now := time.monotonic()) < until:
            timeout = until - now if self.pidfd is not None else min(until - now, FALLBACK_POLL_S)
            ready = {key.fd for key, _ in self.sel.select(timeout)}
            if self.fd in ready:
                self.read()
            done = self.pidfd in ready if self.pidfd is not None else exited(self.pid)
            if done:
                return True
        return exited(self.pid)

    def drain(self, until: float) -> None:
        """After the kill: read until end of file, or until the pipe stays silent for `_SILENT_S`
        (a writer that escaped the kill), or `until`."""
        if self.pidfd is not None:
            self.sel.unregister(self.pidfd)
        while not self.eof and (now := time.monotonic()) < until:
            if not self.sel.select(min(_SILENT_S, until - now)):
                return
            self.read()

    def close(self) -> None:
        self.sel.close()


def _wait(events: _Events, count: ProcessCount, processes: int, deadline: float,
          extended: Callable[[], float] | None = None) -> tuple[bool, str | None]:
    """Until the command exits, `deadline` (moved by `extended()` seconds, read again as it runs) passes
    or (watchdog only) it holds more than `processes` processes: (timed out, the limit hit)."""
    if count.mechanism != "watchdog" and extended is None:
        return not events.wait(deadline), None
    def due() -> float:
        return deadline + (extended() if extended is not None else 0.0)
    while True:
        if events.wait(min(due(), time.monotonic() + SCAN_S)):
            return False, None
        if time.monotonic() >= due():
            return True, None
        if count.mechanism == "watchdog" and len(descendants(events.pid)) > processes:
            return False, "processes"


def _kill_all(proc: subprocess.Popen[bytes], cgroup: PidsCgroup | None, fd: int | None) -> None:
    """Kill the command's descendants first (so bwrap reaps its own and leaves no orphan), then the rest.

    Once the leader has exited, its children belong to init and a scan of its descendants finds
    nothing: the process group and the cgroup are then what catch stragglers.
    """
    running = not exited(proc.pid)
    if running:
        for pid in descendants(proc.pid):
            send_signal(pid, signal.SIGKILL)
        wait_exit(proc.pid, fd, 1.0)
    send_signal(-proc.pid, signal.SIGKILL)  # the leader is not reaped yet, so the group id is still ours
    if cgroup is not None:
        cgroup.kill()
    if running:
        for pid in descendants(proc.pid):
            send_signal(pid, signal.SIGKILL)
    proc.wait()


def _end(proc: subprocess.Popen[bytes], count: ProcessCount, fd: int | None, events: _Events | None,
         tag: str | None) -> None:
    """Kill everything the command started (and every process holding its `tag`), read what it left in
    the pipe, release what it held."""
    _kill_all(proc, count.cgroup, fd)
    for _ in range(3 if tag else 0):  # a daemon may fork between the scan and the kill
        if not (left := tagged(tag or "")):
            break
        kill_and_wait(left, 1.0)
    if events is not None:
        events.drain(time.monotonic() + 1.0)
        events.close()
    if fd is not None:
        os.close(fd)
    assert proc.stdout is not None
    proc.stdout.close()
    count.release()


def run_contained(argv: list[str], cwd: Path, timeout_s: float, env: dict[str, str],
                  sandbox: Sandbox = Sandbox(), output_cap: int = 200_000,
                  writable: Path | None = None, extended: Callable[[], float] | None = None) -> ProcessResult:
    """Run `argv` contained by `sandbox`; kill everything it started on exit, timeout or limit.
    `extended()`, read again while it runs, is seconds the timeout moves by (time that is not the
    command's: an external agent's waits on a failing model endpoint).

    Output beyond `output_cap` bytes is dropped from the middle (head and tail kept), so a
    command printing gigabytes costs no memory.

    Raises:
        subprocess.SubprocessError: the command's limits or cgroup could not be set; it did not run.
        OSError: the command could not be started, or its pids cgroup could not be made.
    """
    limits = sandbox.limits
    start = time.monotonic()
    count = hold_process_count(limits.processes)
    cpu = limits.cpu_seconds or max(1, int(timeout_s) + 5)
    tag = f"{TAG_VARIABLE}={secrets.token_hex(12)}" if count.mechanism == "watchdog" else None
    if tag:
        env = {**env, TAG_VARIABLE: tag.split("=", 1)[1]}
    try:
        proc = launch.start(sandbox.wrap(argv, cwd, writable), cwd, env, limits, cpu, count)
    except BaseException:
        count.release()
        raise
    out = HeadTailBuffer(output_cap // 2, output_cap // 2)
    fd = pidfd(proc.pid)
    events = None
    try:
        events = _Events(proc, fd, out)
        timed_out, limit_hit = _wait(events, count, limits.processes, start + timeout_s, extended)
    finally:
        _end(proc, count, fd, events, tag)
    text = out.text("bytes of output")
    if proc.returncode == 125 and text.startswith(launch.SETUP_FAILED):
        raise subprocess.SubprocessError(text.strip())
    if limit_hit:
        text += f"\n[ctxbench: killed: more than {limits.processes} processes]\n"
    code = -9 if timed_out or limit_hit else proc.returncode
    return ProcessResult(code, text, timed_out, time.monotonic() - start, out.dropped, limit_hit)
