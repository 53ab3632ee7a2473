"""Running test commands: own process group, resource limits, optional bubblewrap jail.

What each layer does (measured; see docs/security.md):

- `bwrap` jail: new user, network, pid, ipc and uts namespaces, every capability dropped, the host
  file system read-only, a private size-capped /tmp and /dev/shm, only the run's scratch folder
  writable; the harness user's home and the folders in `Sandbox.hide` (taskset, results) replaced by
  empty ones. The jail's processes die with it.
- rlimits on every process: CPU seconds, address space, file size, no core dumps.
- Process count: a `pids` cgroup where the harness may create one (a hard limit: fork fails); else a
  watchdog that kills the whole sandbox once it holds more processes than allowed. RLIMIT_NPROC
  alone does nothing for root, who runs the tests here and in CI.
- Timeout or limit: the process group, every descendant and the cgroup are killed.
- Address-space randomisation is off for the command, so object addresses printed in test output
  are the same run to run (the simulated model sees identical observations).
"""

from __future__ import annotations

import ctypes
import itertools
import os
import re
import resource
import secrets
import select
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Iterator, Literal

from ctxbench.harness.textcut import HeadTailBuffer

__all__ = ["ProcessResult", "ResourceLimits", "Sandbox", "run_contained", "bwrap_available", "choose_sandbox",
           "fallback_warning", "process_limit_mechanism", "sweep_cgroups", "owner_tag", "process_start"]

SANDBOX_UID = 65534
"""Uid (and gid) the jailed command sees; it holds no capability whatever its number."""
_SCAN_S = 0.1
"""How often the watchdog counts the sandbox's processes (where no pids cgroup can be made)."""
_SILENT_S = 0.05
_FALLBACK_POLL_S = 0.005


@dataclass(frozen=True)
class ResourceLimits:
    """Per-command limits; the defaults are generous for a test suite and fatal to a runaway one."""

    cpu_seconds: int | None = None
    """CPU seconds per process; default: the command's timeout + 5."""
    address_space: int = 4 * 1024**3
    """Virtual memory per process (RLIMIT_AS), bytes."""
    file_size: int = 256 * 1024**2
    """Largest file a process may write (RLIMIT_FSIZE), bytes."""
    processes: int = 256
    """Processes and threads alive at once in the sandbox."""
    tmp_size: int = 512 * 1024**2
    """Size of the private /tmp and /dev/shm (bwrap only), bytes."""


@dataclass(frozen=True)
class ProcessResult:
    exit_code: int
    output: str
    """Combined stdout/stderr, head and tail kept when over the cap."""
    timed_out: bool
    seconds: float
    omitted_bytes: int = 0
    limit_hit: str | None = None
    """`processes` when the sandbox was killed for holding too many processes."""


_PRIVATE = (Path("/tmp"), Path("/dev/shm"))
"""Replaced by private tmpfs mounts in the jail: an interpreter living there is bound back in."""


def _bwrap_args(scratch: Path, workdir: Path, hide: list[Path], keep: list[Path], tmp_size: int) -> list[str]:
    args = ["bwrap", "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
            "--disable-userns", "--cap-drop", "ALL",
            "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--size", str(tmp_size), "--tmpfs", "/tmp", "--size", str(tmp_size), "--tmpfs", "/dev/shm"]
    # Outer folders first, so each mount lands on top of the one around it: a hidden folder inside a
    # kept interpreter prefix (a taskset in a venv under /tmp) stays hidden, and a kept prefix inside a
    # hidden folder (an environment under the home folder) is bound back; for the same folder, kept wins.
    for path, kind in sorted([*((h, 0) for h in hide), *((k, 1) for k in keep)], key=lambda e: (len(e[0].parts), e[1])):
        if kind == 1:
            args += ["--ro-bind", str(path), str(path)]
        elif path.is_dir():
            args += ["--tmpfs", str(path)]
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    args += ["--bind", str(scratch), str(scratch)]
    for h in hide:
        if h.is_dir() and h != scratch and h not in scratch.parents:
            args += ["--remount-ro", str(h)]
    return [*args, "--chdir", str(workdir)]


@lru_cache(maxsize=1)
def bwrap_available() -> str | None:
    """Why the bubblewrap jail cannot be used here, or None when it works (probed once)."""
    exe = shutil.which("bwrap")
    if exe is None:
        return "bwrap is not installed (Debian package `bubblewrap`)"
    with tempfile.TemporaryDirectory(prefix="ctxbench-probe-") as tmp:
        argv = _bwrap_args(Path(tmp), Path(tmp), [], [], 1024**2) + ["--", "sh", "-c", "touch ./ok"]
        try:
            probe = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"bwrap cannot run: {exc}"
        if probe.returncode != 0 or not (Path(tmp) / "ok").exists():
            return f"bwrap cannot create a sandbox here: {probe.stderr.strip()[:200]}"
    return None


def choose_sandbox(requested: str, hide: tuple[Path | str | None, ...] = ()) -> Sandbox:
    """The sandbox for a `sandbox: bwrap | none` setting: bwrap falls back to none where it does not
    work (`fallback_warning` says so); `hide` are folders the jailed command must not see."""
    mode = "bwrap" if requested == "bwrap" and bwrap_available() is None else "none"
    return Sandbox(mode, hide=tuple(str(p) for p in hide if p is not None))


def fallback_warning(requested: str, sandbox: Sandbox) -> str | None:
    """Why `sandbox` is not the bwrap jail that was requested, or None."""
    if requested == "bwrap" and sandbox.mode != "bwrap":
        return f"sandbox fell back to none: {bwrap_available()}"
    return None


def _prefixes(argv0: str) -> set[Path]:
    """Folders an interpreter needs: its own prefix, the one it links to, and ours."""
    out = {Path(sys.prefix), Path(sys.base_prefix)}
    exe = shutil.which(argv0) if argv0 else None
    if exe:
        out |= {Path(exe).absolute().parent.parent, Path(os.path.realpath(exe)).parent.parent}
    return out


@lru_cache(maxsize=64)
def _kept_prefixes(argv0: str, hide: tuple[Path, ...]) -> list[Path]:
    """The interpreter folders that a hidden or private folder covers, to bind back into the jail
    (cached: the lookups cost more than the rest of the jail's arguments, on every test command)."""
    masked = [*hide, *_PRIVATE]
    return sorted(p for p in _prefixes(argv0) if any(h == p or h in p.parents for h in masked))


@dataclass(frozen=True)
class Sandbox:
    """How to contain a command: `bwrap` (the jail above) or `none` (limits and kill only)."""

    mode: Literal["bwrap", "none"] = "none"
    hide: tuple[str, ...] = ()
    """Folders (or files) the jailed command must not see, besides the harness user's home."""
    limits: ResourceLimits = field(default_factory=ResourceLimits)

    def wrap(self, argv: list[str], workdir: Path, writable: Path | None = None) -> list[str]:
        if self.mode != "bwrap":
            return argv
        hide = [Path(p).absolute() for p in (str(Path.home()), *self.hide)]
        hide = [h for h in hide if h != Path("/")]
        keep = _kept_prefixes(argv[0] if argv else "", tuple(hide))
        return [*_bwrap_args(writable or workdir, workdir, hide, keep, self.limits.tmp_size), "--", *argv]


# -- process count ----------------------------------------------------------------------------

class _PidsCgroup:
    """A throwaway `pids` cgroup (v1 or v2): a hard limit on processes, and a reliable kill."""

    _names = itertools.count()

    def __init__(self, path: Path) -> None:
        self.path = path

    @staticmethod
    @lru_cache(maxsize=1)
    def parent() -> Path | None:
        """A cgroup folder where we may create children with a pids controller, or None."""
        try:
            lines = Path("/proc/self/cgroup").read_text().splitlines()
        except OSError:
            return None
        candidates = []
        for line in lines:
            _, controllers, path = line.split(":", 2)
            if "pids" in controllers.split(","):
                candidates.append(Path("/sys/fs/cgroup/pids") / path.lstrip("/"))
            elif controllers == "":
                candidates.append(Path("/sys/fs/cgroup") / path.lstrip("/"))
        for base in candidates:
            probe = base / f"ctxbench-probe-{os.getpid()}"
            try:
                if base.name != "pids" and "pids" in (base / "cgroup.controllers").read_text().split():
                    try:
                        (base / "cgroup.subtree_control").write_text("+pids")
                    except OSError:
                        pass
                probe.mkdir()
                try:
                    (probe / "pids.max").write_text("1\n")
                    return base
                finally:
                    probe.rmdir()
            except OSError:
                continue
        return None

    @classmethod
    def create(cls, limit: int) -> _PidsCgroup | None:
        """A new cgroup named after this process (`ctxbench-<pid>.<start time>-<n>`, so
        `sweep_cgroups` can tell a dead owner's); None where there are no pids cgroups at all.

        Raises:
            OSError: cgroups work here but this one cannot be made: never a silent fall back to
                the weaker watchdog.
        """
        base = cls.parent()
        if base is None:
            return None
        for _ in range(100):
            path = base / f"ctxbench-{owner_tag()}-{next(cls._names)}"
            try:
                path.mkdir()
            except FileExistsError:
                continue
            except OSError as exc:
                raise OSError(exc.errno, f"cannot create the pids cgroup {path} ({exc.strerror}); "
                                         "the process limit would have fallen back to the watchdog") from None
            try:
                (path / "pids.max").write_text(f"{limit}\n")
            except OSError as exc:
                path.rmdir()
                raise OSError(exc.errno, f"cannot set {path}/pids.max ({exc.strerror})") from None
            return cls(path)
        raise OSError(f"no free pids cgroup name under {base}")

    def pids(self) -> list[int]:
        try:
            return [int(p) for p in (self.path / "cgroup.procs").read_text().split()]
        except OSError:
            return []

    def kill(self) -> None:
        """SIGKILL what the cgroup holds until it is empty (5 s at most), waking as they exit."""
        deadline = time.monotonic() + 5
        while (pids := self.pids()) and (left := deadline - time.monotonic()) > 0:
            _kill_and_wait(pids, min(left, 0.1))

    def remove(self) -> None:
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                self.kill()
                time.sleep(0.02)


_OWNED_CGROUP = re.compile(r"ctxbench-(\d+)(?:\.(\d+))?-\d+$")


def sweep_cgroups() -> int:
    """Remove the pids cgroups left by ctxbench processes that no longer run (a runner or worker
    killed with SIGKILL never removes its own); returns how many. Their processes are killed first."""
    base = _PidsCgroup.parent()
    if base is None:
        return 0
    removed = 0
    for entry in os.scandir(base):
        match = _OWNED_CGROUP.match(entry.name)
        if not match or not entry.is_dir(follow_symlinks=False):
            continue
        pid, start = match.groups()
        alive = process_start(int(pid))
        if alive is not None and (start is None or alive == start):
            continue
        _PidsCgroup(Path(entry.path)).remove()
        removed += not os.path.exists(entry.path)
    return removed


def process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot (with the pid, a unique process identity);
    None when no such process runs (a zombie no longer runs)."""
    fields = proc_stat(pid)
    return None if fields is None or fields[0] in (b"Z", b"X") else fields[19].decode()


_OWNER: dict[int, str] = {}


def owner_tag() -> str:
    """`<pid>.<start time>` of this process, written into the names of the folders it owns."""
    pid = os.getpid()
    if pid not in _OWNER:
        _OWNER[pid] = f"{pid}.{process_start(pid) or 0}"
    return _OWNER[pid]


@lru_cache(maxsize=1)
def process_limit_mechanism() -> str:
    """How the process limit is enforced here: `cgroup` (hard), `RLIMIT_NPROC` (hard) or `watchdog`."""
    if _PidsCgroup.parent() is not None:
        return "cgroup"
    return "watchdog" if os.geteuid() == 0 else "RLIMIT_NPROC"


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_and_wait(pids: list[int], timeout: float) -> None:
    """SIGKILL `pids` and wait until they have exited or `timeout` passes (pidfds: no polling tick)."""
    fds = []
    for pid in pids:
        fd = _pidfd(pid)
        if fd is None:
            _signal(pid, signal.SIGKILL)
            continue
        fds.append(fd)
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        if len(fds) < len(pids):
            time.sleep(min(timeout, _FALLBACK_POLL_S))
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


def proc_stat(pid: int | str) -> list[bytes] | None:
    """The fields of /proc/<pid>/stat after the command name (state, ppid, ...), or None when there
    is no such process."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    return stat[stat.rindex(b")") + 2:].split()


def _descendants(root: int) -> list[int]:
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


def _user_processes() -> int:
    uid = os.getuid()
    return sum(1 for e in os.scandir("/proc") if e.name.isdigit() and _owner(e.path) == uid)


def _owner(path: str) -> int | None:
    try:
        return os.stat(path).st_uid
    except OSError:
        return None


_ADDR_NO_RANDOMIZE = 0x0040000


_PR_SET_PDEATHSIG = 1


@lru_cache(maxsize=None)
def _libc(name: str):
    """A libc function (Linux), loaded in the parent, never between fork and exec; None elsewhere."""
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel SIGKILL this process when its parent dies, even by SIGKILL (Linux only)."""
    prctl = _libc("prctl")
    if prctl is None:
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before the line above
        os._exit(1)


def _child_setup(limits: ResourceLimits, cpu_seconds: int, cgroup: Path | None, nproc: int | None,
                 parent_pid: int) -> None:
    """Runs in the child between fork and exec (where `_setup_tools` is missing)."""
    if cgroup is not None:
        (cgroup / _cgroup_file(cgroup)).write_text("0")
    die_with_parent(parent_pid)  # a worker killed mid-run takes its test command with it
    personality = _libc("personality")
    if personality is not None:
        personality(_ADDR_NO_RANDOMIZE)  # fixed addresses: `<object at 0x…>` in test output repeats run to run
    for which, value in _rlimits(limits, cpu_seconds, nproc):
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass


def _rlimits(limits: ResourceLimits, cpu_seconds: int, nproc: int | None) -> list[tuple[int, int]]:
    settings = [(resource.RLIMIT_CPU, cpu_seconds), (resource.RLIMIT_AS, limits.address_space),
                (resource.RLIMIT_FSIZE, limits.file_size), (resource.RLIMIT_CORE, 0)]
    if nproc is not None:
        settings.append((resource.RLIMIT_NPROC, nproc))
    return settings


def _cgroup_file(cgroup: Path) -> str:
    """Where a process writes `0` to move itself into `cgroup`: v1's `tasks` moves the writing thread
    only, which the kernel does without the global lock (and its RCU grace period, ~13 ms) that
    `cgroup.procs` takes; the process is single-threaded there, between fork and exec."""
    return "tasks" if (cgroup / "tasks").exists() else "cgroup.procs"


_SETUP_FAILED = f"ctxbench: cannot set the command up [{secrets.token_hex(8)}]"
_SETUP_SCRIPT = ('[ "$PPID" = "$1" ] || exit 1; '
                 'ulimit -t "$4" && ulimit -v "$5" && ulimit -f "$6" && ulimit -c 0 || { echo "$3"; exit 125; }; '
                 'if [ -n "$2" ]; then echo 0 > "$2" || { echo "$3"; exit 125; }; fi; '
                 'shift 6; exec "$@"')
"""The shell step of `_setup_argv`: exit if the harness died before setpriv set the parent-death signal,
set the rlimits (POSIX units: KiB for -v, 512-byte blocks for -f), join the cgroup, exec the command."""


def _setup_argv(tools: tuple[str, ...], limits: ResourceLimits, cpu_seconds: int, cgroup: Path | None,
                nproc: int | None, parent_pid: int) -> list[str]:
    """What `_child_setup` does, as execs in front of the command (setpriv, then sh; prlimit too for
    a process-count rlimit): parent-death signal, rlimits capped at our own hard limits, cgroup.
    Address randomisation is turned off by the spawning thread (`_fixed_addresses`)."""
    setpriv, prlimit, sh = tools
    value = {}
    for which, wanted in _rlimits(limits, cpu_seconds, nproc):
        hard = resource.getrlimit(which)[1]
        value[which] = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    nproc_step = [prlimit, f"--nproc={value[resource.RLIMIT_NPROC]}", "--"] if nproc is not None else []
    target = str(cgroup / _cgroup_file(cgroup)) if cgroup is not None else ""
    return [setpriv, "--pdeathsig", "KILL", "--", *nproc_step, sh, "-c", _SETUP_SCRIPT, "sh", str(parent_pid),
            target, _SETUP_FAILED, str(value[resource.RLIMIT_CPU]), str(value[resource.RLIMIT_AS] // 1024),
            str(value[resource.RLIMIT_FSIZE] // 512)]


@contextmanager
def _fixed_addresses() -> Iterator[None]:
    """Processes this thread starts meanwhile run without address randomisation: a personality flag,
    kept per thread and inherited by children (the harness's own layout is fixed since its start)."""
    personality = _libc("personality")
    old = personality(ctypes.c_ulong(0xFFFFFFFF))  # reads the current value
    personality(old | _ADDR_NO_RANDOMIZE)
    try:
        yield
    finally:
        personality(old)


@lru_cache(maxsize=1)
def _setup_tools() -> tuple[str, ...] | None:
    """setpriv, prlimit (util-linux) and sh, when they set a command up here exactly as `_child_setup`
    would (probed once). Then a command starts without a fork of the harness: a fork copies the
    harness's page tables and costs 5–20 ms for a 75 MB worker, on every test command."""
    tools = tuple(shutil.which(name) or "" for name in ("setpriv", "prlimit", "sh"))
    if not all(tools) or _libc("personality") is None:
        return None
    limits = ResourceLimits(address_space=3 * 1024**3, file_size=10 * 1024**2)
    argv = [*_setup_argv(tools, limits, 7, None, None, os.getpid()), "cat", "/proc/self/limits", "/proc/self/personality"]
    try:
        with _fixed_addresses():
            probe = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = probe.stdout.splitlines()
    expected = {"Max cpu time": "7", "Max file size": str(10 * 1024**2), "Max address space": str(3 * 1024**3),
                "Max core file size": "0"}
    set_right = all(any(line.startswith(name) and line[len(name):].split()[:2] == [v, v] for line in lines)
                    for name, v in expected.items())
    fixed = bool(lines) and int(lines[-1], 16) & _ADDR_NO_RANDOMIZE if probe.returncode == 0 else False
    return tools if probe.returncode == 0 and set_right and fixed else None


# -- running ----------------------------------------------------------------------------------

def _exited(pid: int) -> bool:
    """Whether `pid` has exited, without reaping it (so its process group id stays ours)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _pidfd(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits (Linux 5.3+), or None."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _wait_exit(pid: int, pidfd: int | None, seconds: float) -> None:
    """Until `pid` exits (not reaped) or `seconds` pass."""
    if pidfd is not None:
        poll = select.poll()
        poll.register(pidfd, select.POLLIN)
        poll.poll(int(seconds * 1000))
        return
    deadline = time.monotonic() + seconds
    while not _exited(pid) and time.monotonic() < deadline:
        time.sleep(_FALLBACK_POLL_S)


class _Events:
    """One selector over the command's output pipe and its exit (a pidfd): the wait wakes on output,
    on exit or at a deadline, never on a polling tick. Without pidfd the exit is checked every
    `_FALLBACK_POLL_S`."""

    def __init__(self, proc: subprocess.Popen, pidfd: int | None, out: HeadTailBuffer) -> None:
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
            timeout = until - now if self.pidfd is not None else min(until - now, _FALLBACK_POLL_S)
            ready = {key.fd for key, _ in self.sel.select(timeout)}
            if self.fd in ready:
                self.read()
            exited = self.pidfd in ready if self.pidfd is not None else _exited(self.pid)
            if exited:
                return True
        return _exited(self.pid)

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


def _kill_all(proc: subprocess.Popen, cgroup: _PidsCgroup | None, pidfd: int | None) -> None:
    """Kill the command's descendants first (so bwrap reaps its own and leaves no orphan), then the rest.

    Once the leader has exited, its children belong to init and a scan of its descendants finds
    nothing: the process group and the cgroup are then what catch stragglers.
    """
    running = not _exited(proc.pid)
    if running:
        for pid in _descendants(proc.pid):
            _signal(pid, signal.SIGKILL)
        _wait_exit(proc.pid, pidfd, 1.0)
    _signal(-proc.pid, signal.SIGKILL)  # the leader is not reaped yet, so the group id is still ours
    if cgroup is not None:
        cgroup.kill()
    if running:
        for pid in _descendants(proc.pid):
            _signal(pid, signal.SIGKILL)
    proc.wait()


def run_contained(argv: list[str], cwd: Path, timeout_s: float, env: dict[str, str],
                  sandbox: Sandbox = Sandbox(), output_cap: int = 200_000,
                  writable: Path | None = None) -> ProcessResult:
    """Run `argv` contained by `sandbox`; kill everything it started on exit, timeout or limit.

    Output beyond `output_cap` bytes is dropped from the middle (head and tail kept), so a
    command printing gigabytes costs no memory.
    """
    limits = sandbox.limits
    start = time.monotonic()
    cgroup = _PidsCgroup.create(limits.processes)
    watchdog = cgroup is None and os.geteuid() == 0
    nproc = None if cgroup is not None or watchdog else _user_processes() + limits.processes
    cpu = limits.cpu_seconds or max(1, int(timeout_s) + 5)
    me = os.getpid()
    command, setup = sandbox.wrap(argv, cwd, writable), None
    tools = _setup_tools()
    if tools is not None:
        command = [*_setup_argv(tools, limits, cpu, cgroup.path if cgroup else None, nproc, me), *command]
    else:
        _libc("prctl"), _libc("personality")  # loaded here: the child must not load libraries
        setup = lambda: _child_setup(limits, cpu, cgroup.path if cgroup else None, nproc, me)  # noqa: E731
    try:
        with _fixed_addresses() if tools is not None else nullcontext():
            proc = subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=setup)
    except BaseException:
        if cgroup is not None:
            cgroup.remove()
        raise
    out = HeadTailBuffer(output_cap // 2, output_cap // 2)
    timed_out, limit_hit = False, None
    deadline = start + timeout_s
    pidfd = _pidfd(proc.pid)
    events = None
    try:
        events = _Events(proc, pidfd, out)
        while True:
            if not watchdog:
                timed_out = not events.wait(deadline)
                break
            if events.wait(min(deadline, time.monotonic() + _SCAN_S)):
                break
            if time.monotonic() >= deadline:
                timed_out = True
                break
            if len(_descendants(proc.pid)) > limits.processes:
                limit_hit = "processes"
                break
    finally:
        _kill_all(proc, cgroup, pidfd)
        if events is not None:
            events.drain(time.monotonic() + 1.0)
            events.close()
        if pidfd is not None:
            os.close(pidfd)
        proc.stdout.close()
        if cgroup is not None:
            cgroup.remove()
    text = out.text("bytes of output")
    if proc.returncode == 125 and text.startswith(_SETUP_FAILED):
        raise subprocess.SubprocessError(text.strip())
    if limit_hit:
        text += f"\n[ctxbench: killed: more than {limits.processes} processes]\n"
    code = -9 if timed_out or limit_hit else proc.returncode
    return ProcessResult(code, text, timed_out, time.monotonic() - start, out.dropped, limit_hit)
