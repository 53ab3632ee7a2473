"""What a contained command may use: rlimits on every process, and a limit on how many processes it holds.

The rlimits (CPU seconds, address space, file size, no core dumps) apply everywhere; `launch` sets them
before the command starts. The process count is held by one of three mechanisms, chosen per command
by `hold_process_count` (and reported for the whole run by `process_limit_mechanism`):

- `cgroup` — a throwaway `pids` cgroup per command (`PidsCgroup`), where this process may create one
  (root with a writable cgroupfs, v1 or v2). A hard limit: `fork` fails with EAGAIN; the cgroup also
  catches every process for the kill. Where cgroups work, one that cannot be made fails the command.
- `RLIMIT_NPROC` — where no cgroup can be made and the harness is not root: the user's processes now
  plus the limit, set on the command (a hard limit, but counted over all the user's processes).
- `watchdog` — where no cgroup can be made and the harness is root, for whom RLIMIT_NPROC does
  nothing: `supervision` counts the command's descendants every `SCAN_S` and kills it over the limit.
"""

from __future__ import annotations

import itertools
import os
import re
import resource
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Literal

from ctxbench.harness.sandbox.procs import kill_and_wait, owner_tag, process_start, user_processes

ProcessLimitMechanism = Literal["cgroup", "RLIMIT_NPROC", "watchdog"]


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


def rlimits(limits: ResourceLimits, cpu_seconds: int, nproc: int | None) -> list[tuple[int, int]]:
    """The (rlimit, value) pairs a command starts with; RLIMIT_NPROC only when that mechanism holds."""
    settings = [(resource.RLIMIT_CPU, cpu_seconds), (resource.RLIMIT_AS, limits.address_space),
                (resource.RLIMIT_FSIZE, limits.file_size), (resource.RLIMIT_CORE, 0)]
    if nproc is not None:
        settings.append((resource.RLIMIT_NPROC, nproc))
    return settings


class PidsCgroup:
    """A throwaway `pids` cgroup (v1 or v2): a hard limit on processes, and a reliable kill."""

    _names = itertools.count()

    def __init__(self, path: Path) -> None:
        self.path = path

    @staticmethod
    @lru_cache(maxsize=1)
    def parent() -> Path | None:
        """A cgroup folder where we may create children with a pids controller, or None.

        Cached (no key; probed once per process): the folder comes from this process's own cgroup,
        which ctxbench never changes, and a forked worker starts in its parent's cgroup, so the answer
        holds for the life of the process and its forks.
        """
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
            if PidsCgroup._usable(base):
                return base
        return None

    @staticmethod
    def _usable(base: Path) -> bool:
        """Whether a child of `base` with a pids limit can be made (a probe child, removed again)."""
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
                return True
            finally:
                probe.rmdir()
        except OSError:
            return False

    @classmethod
    def create(cls, limit: int) -> PidsCgroup | None:
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
            kill_and_wait(pids, min(left, 0.1))

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
    base = PidsCgroup.parent()
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
        PidsCgroup(Path(entry.path)).remove()
        removed += not os.path.exists(entry.path)
    return removed


@lru_cache(maxsize=1)
def process_limit_mechanism() -> ProcessLimitMechanism:
    """How the process limit is enforced here: `cgroup` (hard), `RLIMIT_NPROC` (hard) or `watchdog`.

    Cached (no key): it follows from `PidsCgroup.parent()`, itself probed once, and this process's
    effective uid, which ctxbench never changes.
    """
    if PidsCgroup.parent() is not None:
        return "cgroup"
    return "watchdog" if os.geteuid() == 0 else "RLIMIT_NPROC"


@dataclass(frozen=True)
class ProcessCount:
    """How one command's process count is held: the mechanism, and what it needs."""

    mechanism: ProcessLimitMechanism
    cgroup: PidsCgroup | None = None
    """The command's own cgroup (`cgroup` only); `release` removes it."""
    nproc: int | None = None
    """The RLIMIT_NPROC value to set (`RLIMIT_NPROC` only)."""

    def release(self) -> None:
        """Remove the cgroup, killing what it still holds."""
        if self.cgroup is not None:
            self.cgroup.remove()


def hold_process_count(processes: int) -> ProcessCount:
    """Choose and prepare the mechanism that holds one command to `processes` processes.

    Raises:
        OSError: cgroups work here but the command's cannot be made (see `PidsCgroup.create`).
    """
    cgroup = PidsCgroup.create(processes)
    if cgroup is not None:
        return ProcessCount("cgroup", cgroup=cgroup)
    if os.geteuid() == 0:
        return ProcessCount("watchdog")
    return ProcessCount("RLIMIT_NPROC", nproc=user_processes() + processes)
