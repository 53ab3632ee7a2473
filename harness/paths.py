"""Path checks shared by the taskset loaders, the workspaces and the records: walking a repository
without following links, whether a path stays inside a folder, and refusing a repository that could
reach outside itself; and writing a file whole or not at all."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ctxbench.harness.errors import InputError

__all__ = ["repo_entries", "inside", "check_repository", "name_problem", "write_atomically"]


def repo_entries(root: Path) -> list[Path]:
    """Files and symlinks under `root`, without following any link (caches skipped)."""
    out: list[Path] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        base = Path(folder)
        out.extend(base / n for n in names)
        out.extend(base / d for d in dirs if (base / d).is_symlink())
    return out


def inside(path: Path, root: Path) -> bool:
    """Whether `path`, with every symlink resolved, lies in `root` (itself resolved)."""
    real, top = os.path.realpath(path), os.path.realpath(root)
    return real == top or real.startswith(top.rstrip(os.sep) + os.sep)


def name_problem(name: bytes) -> str | None:
    """Why a repository may not hold a file named `name` (its path in the repository), or None.

    A name that is not UTF-8 is refused rather than carried: file names reach the model and the
    records as text (tool listings and arguments, transcripts, runs.jsonl are UTF-8 JSON), where such
    a name has no faithful spelling, so the agent could neither name nor edit the file.
    """
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        return (f"the file name {name.decode('utf-8', 'backslashreplace')} is not UTF-8; ctxbench shows "
                "file names to the model as text: rename the file")
    return None


def check_repository(root: Path, where: str) -> None:
    """Refuse a repository that could reach outside itself: a symlink whose target resolves outside
    `root` (or loops), or a special file (fifo, socket, device); and one with a file name that is
    not UTF-8 (`name_problem`). Links inside stay links.

    Raises:
        InputError: naming the file (and a link's target).
    """
    for path in sorted(repo_entries(root)):
        problem = name_problem(os.fsencode(path.relative_to(root)))
        if problem:
            raise InputError(f"{where}: {root}: {problem}")
        mode = path.lstat().st_mode
        if stat.S_ISLNK(mode):
            target = os.readlink(path)
            try:
                os.path.realpath(path, strict=True)
            except OSError as exc:
                if exc.errno == errno.ELOOP:
                    raise InputError(f"{where}: symlink {path} -> {target} is a loop") from None
            if not inside(path, root):
                raise InputError(f"{where}: symlink {path} -> {target} leads outside the repository "
                                 f"{root}; a task repository may only link inside itself") from None
        elif not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise InputError(f"{where}: {path} is not a regular file, folder or symlink")


def write_atomically(path: Path, data: str | bytes) -> Path:
    """Write `data` (text as UTF-8) to `path` whole or not at all: into a temporary file beside it, flushed
    to disk, then renamed over it, so that a process killed while writing leaves the old file or none,
    never a part of the new one (a zero-byte plot). Returns `path`."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    return path
