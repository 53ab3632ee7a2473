"""The bubblewrap jail: which namespaces, mounts and folders a jailed command gets, and when it is used.

New user, network, pid, ipc and uts namespaces, every capability dropped, the host file system
read-only, a private size-capped /tmp and /dev/shm, only the run's scratch folder writable; the
harness user's home and the folders in `Sandbox.hide` (taskset, results) replaced by empty ones,
with the test interpreter's installation bound back where a hidden or private folder covers it. The
jail's processes die with it. `sandbox: bwrap` falls back to `none` (limits and kill only) where
bubblewrap cannot run here, and says so.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Literal

from ctxbench.harness.sandbox.limits import ResourceLimits

SANDBOX_UID = 65534
"""Uid (and gid) the jailed command sees; it holds no capability whatever its number."""

_PRIVATE = (Path("/tmp"), Path("/dev/shm"))
"""Replaced by private tmpfs mounts in the jail: an interpreter living there is bound back in."""


def bwrap_args(scratch: Path, workdir: Path, hide: list[Path], keep: list[Path], tmp_size: int) -> list[str]:
    """The bwrap command line (up to `--`) for a jail writable in `scratch` only, starting in `workdir`."""
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
    """Why the bubblewrap jail cannot be used here, or None when it works.

    Cached (no key; one probe jail per process): whether bwrap is installed and the kernel lets it
    make namespaces does not change while a run lasts, and the run's choice and its warning in
    `manifest.json` were made from this answer.
    """
    exe = shutil.which("bwrap")
    if exe is None:
        return "bwrap is not installed (Debian package `bubblewrap`)"
    with tempfile.TemporaryDirectory(prefix="ctxbench-probe-") as tmp:
        argv = bwrap_args(Path(tmp), Path(tmp), [], [], 1024**2) + ["--", "sh", "-c", "touch ./ok"]
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
    mode: Literal["bwrap", "none"] = "bwrap" if requested == "bwrap" and bwrap_available() is None else "none"
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
    """The interpreter folders that a hidden or private folder covers, to bind back into the jail.

    Cached, keyed by the command's first word and the hidden folders (64 entries: a run uses a few
    interpreters): the PATH lookups cost more than the rest of the jail's arguments, on every test
    command. Safe to keep because the answer depends only on the key, this process's own prefixes and
    the harness's PATH, none of which ctxbench changes during a run. The callers do not mutate it.
    """
    masked = [*hide, *_PRIVATE]
    return sorted(p for p in _prefixes(argv0) if any(h == p or h in p.parents for h in masked))


@dataclass(frozen=True)
class Sandbox:
    """How to contain a command: `bwrap` (the jail above) or `none` (limits and kill only)."""

    mode: Literal["bwrap", "none"] = "none"
    hide: tuple[str, ...] = ()
    """Folders (or files) the jailed command must not see, besides the harness user's home."""
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    keep: tuple[str, ...] = ()
    """Folders bound back read-only where a hidden or private folder covers them (an external agent's
    installation), besides the command's interpreter."""

    def wrap(self, argv: list[str], workdir: Path, writable: Path | None = None) -> list[str]:
        """`argv` inside the jail (unchanged under `none`), writable only in `writable` (else `workdir`)."""
        if self.mode != "bwrap":
            return argv
        hide = [Path(p).absolute() for p in (str(Path.home()), *self.hide)]
        hide = [h for h in hide if h != Path("/")]
        keep = [*_kept_prefixes(argv[0] if argv else "", tuple(hide)), *(Path(k) for k in self.keep)]
        return [*bwrap_args(writable or workdir, workdir, hide, keep, self.limits.tmp_size), "--", *argv]
