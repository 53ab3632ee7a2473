"""One runner per results folder: an exclusive lock file, taken before anything else is written."""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
from datetime import datetime, timezone
from pathlib import Path

from ctxbench.harness.errors import InputError

__all__ = ["FolderLock", "LOCK_NAME"]

LOCK_NAME = ".ctxbench.lock"
"""The lock file in a results folder; it holds the runner's pid, host and start time."""


def _describe(holder: dict) -> str:
    return (f"pid {holder.get('pid', '?')} on host {holder.get('host', '?')}, "
            f"started {holder.get('started', '?')}")


def _read_holder(fd: int) -> dict:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = json.loads(os.read(fd, 4096) or b"{}")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


class FolderLock:
    """An exclusive `flock` on `<folder>/.ctxbench.lock`, released by `release()` or by the kernel
    when the holder dies. A lock file left by a dead holder is taken over with a message.

    The file is removed on release while still locked; a runner that opened the old file notices
    (its file is no longer the one at the path) and tries again, so two runners never both hold it.
    """

    def __init__(self, folder: Path, fd: int, created: list[Path]) -> None:
        self.folder = folder
        self.path = folder / LOCK_NAME
        self._fd: int | None = fd
        self.created = created
        """Folders this lock created (deepest last), removed by `release(remove_created=True)`."""

    @classmethod
    def acquire(cls, folder: Path) -> FolderLock:
        """Create `folder` (and missing parents) and lock it.

        Raises:
            InputError: another runner holds the folder (naming its pid, host and start time), or
                the folder cannot be created.
        """
        folder = Path(folder)
        created = [p for p in (folder, *folder.parents) if not p.exists()][::-1]
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"{folder}: cannot create the results folder: {exc.strerror or exc}") from None
        path = folder / LOCK_NAME
        while True:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise InputError(f"{folder} is being written by another ctxbench run ({_describe(holder)}); "
                                 "wait for it to end, or choose another --output") from None
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(path))
            except FileNotFoundError:
                same = False
            if same:
                break
            os.close(fd)  # the holder removed the file between our open and our lock
        stale = _read_holder(fd)
        if stale:
            print(f"ctxbench: taking over the lock of {folder}: the run that held it ({_describe(stale)}) "
                  "no longer runs", file=sys.stderr)
        me = {"pid": os.getpid(), "host": socket.gethostname(),
              "started": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps(me).encode(), 0)
        os.fsync(fd)
        return cls(folder, fd, created)

    def release(self, remove_created: bool = False) -> None:
        """Remove the lock file and unlock; with `remove_created`, also remove the folders this lock
        created when nothing else was written in them."""
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)
            self._fd = None
        if remove_created:
            for p in reversed(self.created):
                try:
                    p.rmdir()
                except OSError:
                    break
