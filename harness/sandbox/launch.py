"""Starting a command with its limits in place: two setup paths, chosen once per process.

Before the command runs it gets its rlimits, joins its cgroup, gets the parent-death signal (a killed
worker takes its test command with it) and runs without address-space randomisation (object addresses
in test output repeat run to run). Either path does all of that, or the command does not run:

- **exec chain** (`setup_argv`), where `setup_tools` finds setpriv, prlimit (util-linux) and sh doing it
  exactly right: they run in front of the command, so it starts without a fork of the harness (a fork
  copies the harness's page tables: 5–20 ms for a 75 MB worker, on every test command);
- **fork** (`child_setup`), elsewhere: the harness sets it up in the child between fork and exec.
"""

from __future__ import annotations

import ctypes
import os
import resource
import secrets
import shutil
import signal
import subprocess
from contextlib import contextmanager, nullcontext
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterator

from ctxbench.harness.sandbox.limits import ProcessCount, ResourceLimits, rlimits

_ADDR_NO_RANDOMIZE = 0x0040000
_PR_SET_PDEATHSIG = 1


@lru_cache(maxsize=None)
def libc(name: str) -> Any:
    """A libc function (Linux), loaded in the parent, never between fork and exec; None elsewhere.

    Cached, keyed by the function's name (a handful: prctl, personality): the loaded libc stays
    mapped for the life of the process, and the cache is what lets the forked child use a function
    without loading a library.
    """
    try:
        return getattr(ctypes.CDLL(None, use_errno=True), name)
    except (OSError, AttributeError):
        return None


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel SIGKILL this process when its parent dies, even by SIGKILL (Linux only)."""
    prctl = libc("prctl")
    if prctl is None:
        return
    prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:  # the parent died before the line above
        os._exit(1)


def child_setup(limits: ResourceLimits, cpu_seconds: int, cgroup: Path | None, nproc: int | None,
                parent_pid: int) -> None:
    """The fork path: runs in the child between fork and exec."""
    if cgroup is not None:
        (cgroup / _cgroup_file(cgroup)).write_text("0")
    die_with_parent(parent_pid)  # a worker killed mid-run takes its test command with it
    personality = libc("personality")
    if personality is not None:
        personality(_ADDR_NO_RANDOMIZE)  # fixed addresses: `<object at 0x…>` in test output repeats run to run
    for which, value in rlimits(limits, cpu_seconds, nproc):
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):
            pass


def _cgroup_file(cgroup: Path) -> str:
    """Where a process writes `0` to move itself into `cgroup`: v1's `tasks` moves the writing thread
    only, which the kernel does without the global lock (and its RCU grace period, ~13 ms) that
    `cgroup.procs` takes; the process is single-threaded there, between fork and exec."""
    return "tasks" if (cgroup / "tasks").exists() else "cgroup.procs"


SETUP_FAILED = f"ctxbench: cannot set the command up [{secrets.token_hex(8)}]"
"""What the exec chain prints, alone, when it cannot set a limit or join the cgroup (exit code 125)."""
_SETUP_SCRIPT = ('[ "$PPID" = "$1" ] || exit 1; '
                 'ulimit -t "$4" && ulimit -v "$5" && ulimit -f "$6" && ulimit -c 0 || { echo "$3"; exit 125; }; '
                 'if [ -n "$2" ]; then echo 0 > "$2" || { echo "$3"; exit 125; }; fi; '
                 'shift 6; exec "$@"')
"""The shell step of `setup_argv`: exit if the harness died before setpriv set the parent-death signal,
set the rlimits (POSIX units: KiB for -v, 512-byte blocks for -f), join the cgroup, exec the command."""


def setup_argv(tools: tuple[str, ...], limits: ResourceLimits, cpu_seconds: int, cgroup: Path | None,
               nproc: int | None, parent_pid: int) -> list[str]:
    """The exec path: what `child_setup` does, as execs in front of the command (setpriv, then sh;
    prlimit too for a process-count rlimit): parent-death signal, rlimits capped at our own hard
    limits, cgroup. Address randomisation is turned off by the spawning thread (`fixed_addresses`)."""
    setpriv, prlimit, sh = tools
    value = {}
    for which, wanted in rlimits(limits, cpu_seconds, nproc):
        hard = resource.getrlimit(which)[1]
        value[which] = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
    nproc_step = [prlimit, f"--nproc={value[resource.RLIMIT_NPROC]}", "--"] if nproc is not None else []
    target = str(cgroup / _cgroup_file(cgroup)) if cgroup is not None else ""
    return [setpriv, "--pdeathsig", "KILL", "--", *nproc_step, sh, "-c", _SETUP_SCRIPT, "sh", str(parent_pid),
            target, SETUP_FAILED, str(value[resource.RLIMIT_CPU]), str(value[resource.RLIMIT_AS] // 1024),
            str(value[resource.RLIMIT_FSIZE] // 512)]


@contextmanager
def fixed_addresses() -> Iterator[None]:
    """Processes this thread starts meanwhile run without address randomisation: a personality flag,
    kept per thread and inherited by children (the harness's own layout is fixed since its start)."""
    personality = libc("personality")
    old = personality(ctypes.c_ulong(0xFFFFFFFF))  # reads the current value
    personality(old | _ADDR_NO_RANDOMIZE)
    try:
        yield
    finally:
        personality(old)


@lru_cache(maxsize=1)
def setup_tools() -> tuple[str, ...] | None:
    """setpriv, prlimit and sh, when they set a command up here exactly as `child_setup` would; else
    None (the fork path).

    Cached (no key; one probe command per process): the tools' paths and what they do are fixed by the
    installed util-linux and the kernel, which do not change while a run lasts, and every command of
    the run then starts the same way.
    """
    tools = tuple(shutil.which(name) or "" for name in ("setpriv", "prlimit", "sh"))
    if not all(tools) or libc("personality") is None:
        return None
    limits = ResourceLimits(address_space=3 * 1024**3, file_size=10 * 1024**2)
    argv = [*setup_argv(tools, limits, 7, None, None, os.getpid()), "cat", "/proc/self/limits", "/proc/self/personality"]
    try:
        with fixed_addresses():
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


def start(command: list[str], cwd: Path, env: dict[str, str], limits: ResourceLimits, cpu_seconds: int,
          count: ProcessCount) -> subprocess.Popen[bytes]:
    """Start `command` in a new session, set up by the exec chain where it works, else by the fork
    path; stdout and stderr on one pipe, stdin empty."""
    me = os.getpid()
    cgroup = count.cgroup.path if count.cgroup else None
    tools = setup_tools()
    setup: Callable[[], None] | None = None
    if tools is not None:
        command = [*setup_argv(tools, limits, cpu_seconds, cgroup, count.nproc, me), *command]
    else:
        libc("prctl"), libc("personality")  # loaded here: the child must not load libraries
        setup = lambda: child_setup(limits, cpu_seconds, cgroup, count.nproc, me)  # noqa: E731
    with fixed_addresses() if tools is not None else nullcontext():
        return subprocess.Popen(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True, preexec_fn=setup)
