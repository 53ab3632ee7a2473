"""Template repositories and the caches built on them: a task's base files as a git repository, made
once per process and copied for each run, the file states that let a workspace tell "nothing changed"
without asking git, and the sweep of what dead ctxbench processes left behind.

Each cache holds only while its precondition does; they are stated where the cache is read.
"""

from __future__ import annotations

import atexit
import fnmatch
import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ctxbench.harness.records.evaluation import Evaluation
from ctxbench.harness.environments.docker import sweep_containers
from ctxbench.harness.environments.gitcmd import GitError, checkout_tree, git
from ctxbench.harness.paths import check_repository
from ctxbench.harness.records import Task
from ctxbench.harness.sandbox import Sandbox, owner_tag, process_start, sweep_cgroups

__all__ = ["IGNORED", "work_root", "prepare_template", "TemplateOverlay", "image_overlay", "template_state",
           "remove_templates", "tree_state", "copy_tree", "snapshot", "template_snapshot", "BASE_EVALUATIONS",
           "sweep_stale", "Leftovers", "sweep_leftovers"]

IGNORED = ("__pycache__", "*.pyc", ".pytest_cache")
"""Names no template or patch holds: the template's .git/info/exclude lists them."""

FileState = tuple[int, int, int]
"""(size, mtime in ns, mode) of a file."""

_TEMPLATES: dict[tuple[str, str | None, str | None], Path] = {}
_TEMPLATE_STATE: dict[Path, dict[str, FileState]] = {}
_SNAPSHOTS: dict[Path, dict[str, tuple[int, ...]] | None] = {}
BASE_EVALUATIONS: dict[tuple[Any, ...], Evaluation] = {}
"""The base's evaluation per task, environment, interpreter, timeout and sandbox; see
ctxbench.harness.environments.baseline.base_evaluation."""


def work_root() -> Path:
    """Where workspaces live: $CTXBENCH_WORKDIR, else memory-backed /dev/shm when usable (copying and
    deleting a repository there is ~20x faster than on disk), else the system temp folder."""
    configured = os.environ.get("CTXBENCH_WORKDIR")
    if configured:
        Path(configured).mkdir(parents=True, exist_ok=True)
        return Path(configured)
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        return shm
    return Path(tempfile.gettempdir())


class TemplateOverlay(Protocol):
    """Files a task's template gets besides its base, from where the task runs (the docker
    environment's: what its image holds in `workdir`)."""

    @property
    def key(self) -> str:
        """Names the overlay in the template cache: templates of one base with other overlays differ."""
        ...

    def tree(self) -> Path | None:
        """The folder whose entries the base lacks are added (None: nothing to add)."""
        ...


def prepare_template(task: Task, overlay: TemplateOverlay | None = None) -> Path:
    """The task's base repository as a git repo, built once per process and copied for each run.

    The cache is keyed by (repository folder, base commit, overlay): it holds while the taskset does
    not change under a running experiment (its content hash was taken when the experiment started).
    A template is never written after it is built: every run works on its own copy.

    With an `overlay`, the template gets what the overlay's tree holds and the base does not
    (`image_overlay`), so that, for docker, the container sees the image's workdir as the image has
    it. Those files are not part of the base commit and git ignores them (the template's
    .git/info/exclude names each), so they are never in a patch.
    """
    key = (str(task.repo_dir), task.base_commit, overlay.key if overlay else None)
    cached = _TEMPLATES.get(key)
    if cached is not None and cached.exists():
        return cached
    root = Path(tempfile.mkdtemp(prefix=f"ctxbench-template-{owner_tag()}-", dir=work_root())) / "repo"
    try:
        _build_template(task, root)
        tree = overlay.tree() if overlay else None
        if tree is not None:
            added = image_overlay(tree, root)
            with (root / ".git" / "info" / "exclude").open("a") as fh:
                fh.writelines(_literal_pattern(rel) + "\n" for rel in added)
    except BaseException:  # a half-built template is not left behind
        shutil.rmtree(root.parent, ignore_errors=True)
        raise
    _TEMPLATES[key] = root
    _TEMPLATE_STATE[root] = tree_state(root)
    return root


def _build_template(task: Task, root: Path) -> None:
    """The task's base files in `root`, a fresh git repository whose one commit holds all of them."""
    if task.base_commit:
        root.mkdir()
        checkout_tree(task.repo_dir, task.base_commit, root)
    else:  # links are copied as links, never followed (the taskset's loader refused any leading out)
        shutil.copytree(task.repo_dir, root, symlinks=True, ignore=shutil.ignore_patterns(*IGNORED, ".git"))
    check_repository(root, f"task {task.id}")
    # A bare-minimum .git (no sample hooks, no reflog, one pack file) keeps each run's copy small.
    git(["init", "-q", "--template=", "-b", "main"], root)
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("\n".join(IGNORED) + "\n")
    # --force: the base holds every file, those its own .gitignore lists included (a tracked
    # `pkg/version.py` that .gitignore names must still show up in the agent's patch when edited).
    git(["add", "-A", "--force"], root)
    git(["-c", "core.logAllRefUpdates=false", "commit", "-q", "--no-verify", "-m", "base"], root)
    git(["repack", "-a", "-d", "-n", "-q"], root)  # -d also prunes the loose objects now packed


def image_overlay(tree: Path, root: Path) -> list[str]:
    """Copy into `root` what `tree` (an image's workdir, `image_tree`) holds and `root` does not: whole
    folders and files absent from `root`, links as links; returns their paths relative to `root`
    (folders end in `/`). The base wins wherever both have a path; the image's `.git` and the IGNORED
    names are left out."""
    added: list[str] = []

    def walk(src: str, dst: str, rel: str) -> None:
        with os.scandir(src) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if (not rel and entry.name == ".git") or any(fnmatch.fnmatch(entry.name, p) for p in IGNORED):
                    continue
                if "\n" in entry.name or "\r" in entry.name:
                    continue  # no exclude line can name it
                target = os.path.join(dst, entry.name)
                is_dir = entry.is_dir(follow_symlinks=False)
                if os.path.lexists(target):
                    if is_dir and os.path.isdir(target) and not os.path.islink(target):
                        walk(entry.path, target, f"{rel}{entry.name}/")
                    continue
                if is_dir:
                    copy_tree(entry.path, target)
                    added.append(f"{rel}{entry.name}/")
                elif entry.is_symlink() or entry.is_file(follow_symlinks=False):
                    copy_tree_entry(entry, target)
                    added.append(f"{rel}{entry.name}")

    walk(str(tree), str(root), "")
    return added


def _literal_pattern(rel: str) -> str:
    """A .gitignore line that matches exactly `rel` (relative to the repository's top)."""
    body = re.sub(r"([\\*?\[\]])", r"\\\1", rel)
    if body.endswith(" "):
        body = body[:-1] + "\\ "
    return "/" + body


def template_state(template: Path) -> dict[str, FileState] | None:
    """The `tree_state` of a template as it was built (None for a folder that is not one)."""
    return _TEMPLATE_STATE.get(template)


def remove_templates() -> None:
    """Delete this process's template repositories, and forget every cache built on them."""
    for root in _TEMPLATES.values():
        shutil.rmtree(root.parent, ignore_errors=True)
    _TEMPLATES.clear()
    _TEMPLATE_STATE.clear()
    _SNAPSHOTS.clear()
    BASE_EVALUATIONS.clear()


atexit.register(remove_templates)


def tree_state(root: Path) -> dict[str, FileState]:
    """(size, mtime in ns, mode) of every file git would see, keyed by relative path (.git and the
    IGNORED names left out)."""
    def seen(name: str) -> bool:
        return not any(fnmatch.fnmatch(name, pattern) for pattern in IGNORED)

    state = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" and seen(d)]
        rel = os.path.relpath(folder, root)
        for name in filter(seen, names):
            st = os.lstat(os.path.join(folder, name))
            state[name if rel == "." else f"{rel}/{name}"] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return state


def copy_tree(src: str, dst: str) -> None:
    """Copy a template: files with their mode and times (so `tree_state` and `snapshot` match), links
    as links.

    A lean `shutil.copytree(symlinks=True)`: no extended attributes, a few system calls per file.
    It takes only regular files, folders and symlinks, all a template holds (`check_repository`).
    """
    os.mkdir(dst)
    with os.scandir(src) as entries:
        for entry in entries:
            copy_tree_entry(entry, os.path.join(dst, entry.name))
    os.chmod(dst, stat.S_IMODE(os.stat(src).st_mode))


def copy_tree_entry(entry: os.DirEntry[str], target: str) -> None:
    """Copy one entry of a folder as `copy_tree` does (a folder with all it holds)."""
    st = entry.stat(follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        os.symlink(os.readlink(entry.path), target)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
    elif stat.S_ISDIR(st.st_mode):
        copy_tree(entry.path, target)
    elif stat.S_ISREG(st.st_mode):
        _copy_file(entry.path, target, st)
    else:
        raise GitError(f"{entry.path}: not a regular file, folder or symlink")


def _copy_file(src: str, dst: str, st: os.stat_result) -> None:
    fin = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        fout = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            while os.sendfile(fout, fin, None, 1 << 30):
                pass
            os.fchmod(fout, stat.S_IMODE(st.st_mode))
            os.utime(fout, ns=(st.st_atime_ns, st.st_mtime_ns))
        finally:
            os.close(fout)
    finally:
        os.close(fin)


def snapshot(folder: str, prefix: str = "", out: dict[str, tuple[int, ...]] | None = None) -> dict[str, tuple[int, ...]]:
    """Every entry under `folder`, .git included: files and links by (size, mtime, mode), folders by
    mode (a copy does not keep their mtimes)."""
    out = {} if out is None else out
    with os.scandir(folder) as entries:
        for entry in entries:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                out[prefix + entry.name] = (st.st_mode,)
                snapshot(entry.path, f"{prefix}{entry.name}/", out)
            else:
                out[prefix + entry.name] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return out


def template_snapshot(template: Path) -> dict[str, tuple[int, ...]] | None:
    """The template's `snapshot`, or None when it holds files git ignores (evaluation removes those,
    so a copy of it is not already what evaluation would make of it)."""
    if template not in _SNAPSHOTS:
        ignored = git(["clean", "-n", "-d", "-X"], template).stdout.strip()
        _SNAPSHOTS[template] = None if ignored else snapshot(str(template))
    return _SNAPSHOTS[template]


_OWNED = re.compile(r"ctxbench-(?:template|run)-(\d+)\.(\d+)-")


def sweep_stale(root: Path | None = None) -> int:
    """Delete template and workspace folders left behind by ctxbench processes that no longer exist
    (a runner killed with SIGKILL, Ray workers stopped without cleanup); returns how many.

    A folder's owner is the pid and start time in its name, so a reused pid does not protect a stale
    folder. Workspaces kept with `keep_workspaces` carry no owner and are never swept.
    """
    if not os.path.isdir("/proc/self"):
        return 0  # no way to tell a live owner from a dead one here
    removed = 0
    root = root or work_root()
    for entry in os.scandir(root):
        match = _OWNED.match(entry.name)
        if not match or not entry.is_dir(follow_symlinks=False):
            continue
        pid, start = match.groups()
        if process_start(int(pid)) == start:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += 1
    return removed


def folder_owners(root: Path | None = None) -> list[int]:
    """The pids of the live processes that own template or workspace folders under `root`."""
    owners = []
    for entry in os.scandir(root or work_root()):
        match = _OWNED.match(entry.name)
        if match and process_start(int(match.group(1))) == match.group(2):
            owners.append(int(match.group(1)))
    return sorted(set(owners))


@dataclass(frozen=True)
class Leftovers:
    """What one sweep removed."""

    workspaces: int
    """Template and workspace folders (`sweep_stale`)."""
    cgroups: int
    """Process-limit cgroups (ctxbench.harness.sandbox.sweep_cgroups)."""
    containers: int = 0
    """Docker containers (ctxbench.harness.environments.docker.sweep_containers)."""

    def messages(self) -> list[str]:
        """One line per kind of leftover removed."""
        lines = []
        if self.workspaces:
            lines.append(f"removed {self.workspaces} workspace folders left by ctxbench processes that no longer run")
        if self.cgroups:
            lines.append(f"removed {self.cgroups} process-limit cgroups left by ctxbench processes that no longer run")
        if self.containers:
            lines.append(f"removed {self.containers} docker containers left by ctxbench processes that no longer run")
        return lines


def sweep_leftovers() -> Leftovers:
    """Remove everything ctxbench processes that no longer run left behind: their workspace and
    template folders, their pids cgroups (whose processes are killed first) and their containers."""
    return Leftovers(sweep_stale(), sweep_cgroups(), sweep_containers())
