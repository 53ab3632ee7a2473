"""Processes as /proc shows them, and signalling them: the primitives the limits and the supervision share."""

from __future__ import annotations

import os
import select
import signal
import time

FALLBACK_POLL_S = 0.005
"""How often an exit is checked where no pidfd can be opened (Linux before 5.3)."""


def proc_stat(pid: int | str) -> list[bytes] | None:
    """The fields of /proc/<pid>/stat after the command name (state, ppid, ...), or None when there
    is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2:].split()


def process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (with the pid, a unique process identity);
    None when no such process runs (a zombie no longer runs)."""
    fields = proc_stat(pid)
    return None if fields is None or fields[0] in (b"Z", b"X") else fields[19].decode()


_OWNER: dict[int, str] = {}
"""Cache of `owner_tag`, keyed by pid: a process's pid and start time never change while it runs, and a
forked child (which inherits the dict) has another pid, so it computes its own tag."""


def owner_tag() -> str:
    """`<pid>.<start time>` of this process, written into the names of the folders it owns."""
    pid = os.getpid()
    if pid not in _OWNER:
        _OWNER[pid] = f"{pid}.{process_start(pid) or 0}"
    return _OWNER[pid]


def descendants(root: int) -> list[int]:
    """Every live descendant of `root` (a scan of /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        fields = proc_stat(entry.name)
        if fields is None:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            out.append(child)
            todo.append(child)
    return out


def tagged(tag: str) -> list[int]:
    """Every process whose environment holds `tag` (`NAME=VALUE`): what a command started, even a daemon
    that left its session and parent, as long as it kept the environment it was given."""
    wanted = tag.encode()
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/environ", "rb") as fh:
                if wanted in fh.read().split(b"\0"):
                    found.append(int(entry.name))
        except OSError:
            continue
    return found


def user_processes() -> int:
    """How many processes this process's user runs (what RLIMIT_NPROC counts)."""
    uid = os.getuid()
    return sum(1 for e in os.scandir("/proc") if e.name.isdigit() and _owner(e.path) == uid)


def _owner(path: str) -> int | None:
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


def send_signal(pid: int, sig: int) -> None:
    """`os.kill`, quiet when the process is gone or not ours."""
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits (Linux 5.3+), or None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def exited(pid: int) -> bool:
    """Whether `pid` has exited, without reaping it (so its process group id stays ours)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def wait_exit(pid: int, fd: int | None, seconds: float) -> None:
    """Until `pid` exits (not reaped) or `seconds` pass; `fd` is its pidfd, if any."""
    if fd is not None:
        poll = select.poll()
        poll.register(fd, select.POLLIN)
        poll.poll(int(seconds * 1000))
        return
    deadline = time.monotonic() + seconds
    while not exited(pid) and time.monotonic() < deadline:
        time.sleep(FALLBACK_POLL_S)


def kill_and_wait(pids: list[int], timeout: float) -> None:
    """SIGKILL `pids` and wait until they have exited or `timeout` passes (pidfds: no polling tick)."""
    fds = []
    for pid in pids:
        fd = pidfd(pid)
        if fd is None:
            send_signal(pid, signal.SIGKILL)
            continue
        fds.append(fd)
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        if len(fds) < len(pids):
            time.sleep(min(timeout, FALLBACK_POLL_S))
        poll = select.poll()
        for fd in fds:
            poll.register(fd, select.POLLIN)
        end = time.monotonic() + timeout
        while fds and (left := end - time.monotonic()) > 0:
            for fd, _ in poll.poll(left * 1000):
                poll.unregister(fd)
                fds.remove(fd)
                os.close(fd)
    finally:
        for fd in fds:
            os.close(fd)
