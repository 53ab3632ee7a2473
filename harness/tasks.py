"""Tasks and tasksets: the native YAML format and SWE-bench-style JSONL instances."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shlex
import stat
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ctxbench.harness.errors import InputError, did_you_mean
from ctxbench.harness.yamlfile import read_text, read_yaml

__all__ = ["Task", "Taskset", "TasksetEnvironment", "load_taskset", "builtin_tasksets_dir",
           "resolve_taskset_path", "check_repository", "inside"]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class TasksetEnvironment(BaseModel):
    """Where a taskset's tests run."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    python: str | None = Field(None, description="Interpreter path to run tests with.")
    requirements: tuple[str, ...] = Field((), description="Requirements installed once into a cached venv.")


class _TaskEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    repo: str
    problem_statement: str
    test_cmd: str | list[str] = "python -m pytest"
    test_files: list[str] = []
    FAIL_TO_PASS: list[str] = Field(min_length=1)
    PASS_TO_PASS: list[str] = []
    patch: str
    test_patch: str | None = None
    tags: list[str] = []
    environment: TasksetEnvironment | None = None

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not _ID.match(v):
            raise ValueError("task ids use letters, digits, '.', '_' and '-'")
        return v


class _TasksetFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    description: str = ""
    environment: TasksetEnvironment = TasksetEnvironment()
    tasks: list[_TaskEntry] = Field(min_length=1)


@dataclass(frozen=True)
class Task:
    """One task: a repository at a base state, a bug report, and the tests that decide."""

    id: str
    repo_dir: Path
    """Folder with the repository's files (native) or a git repository (SWE-bench)."""
    problem_statement: str
    test_cmd: tuple[str, ...]
    """Argv prefix; a leading `python` means the taskset environment's interpreter."""
    FAIL_TO_PASS: tuple[str, ...]
    PASS_TO_PASS: tuple[str, ...]
    patch: str
    """Gold patch text (reference fix)."""
    test_patch: str | None = None
    """Hidden tests, applied only at evaluation."""
    test_files: tuple[str, ...] = ()
    """What run_tests runs when the agent passes no ids."""
    tags: tuple[str, ...] = ()
    base_commit: str | None = None
    """For git repositories: the commit whose files make the workspace."""
    repo_name: str = ""
    environment: TasksetEnvironment | None = None
    """Where this task's tests run, instead of the taskset's environment."""


@dataclass(frozen=True)
class Taskset:
    name: str
    path: Path
    tasks: tuple[Task, ...]
    environment: TasksetEnvironment = field(default_factory=TasksetEnvironment)

    def content_hash(self) -> str:
        """Hash of everything that defines the tasks: statements, commands, patches, repo files."""
        h = hashlib.sha256()
        seen: set[Path] = set()
        for t in self.tasks:
            fields = [t.id, t.problem_statement, t.test_cmd, t.FAIL_TO_PASS, t.PASS_TO_PASS,
                      t.patch, t.test_patch, t.test_files, t.tags, t.base_commit]
            if t.environment is not None:  # absent from the hash otherwise: older hashes still hold
                fields.append(t.environment.model_dump())
            h.update(json.dumps(fields).encode())
            if t.repo_dir not in seen and t.base_commit is None:
                seen.add(t.repo_dir)
                for f in sorted(_repo_entries(t.repo_dir)):
                    h.update(str(f.relative_to(t.repo_dir)).encode())
                    h.update(os.readlink(f).encode() if f.is_symlink() else f.read_bytes())
        h.update(self.environment.model_dump_json().encode())
        return h.hexdigest()

    def folders(self) -> tuple[Path, ...]:
        """Where the taskset's data lies (its folder, or the JSONL file's folder, and the folders of
        its git repositories, which hold the fixes in their history): hidden from the jailed commands."""
        found = [self.path if self.path.is_dir() else self.path.parent]
        found += [t.repo_dir.parent for t in self.tasks if t.base_commit]
        unique = sorted(set(found), key=lambda p: (len(p.parts), str(p)))
        return tuple(p for i, p in enumerate(unique)
                     if p != Path(p.anchor) and not any(q in p.parents for q in unique[:i]))

    def environment_for(self, task: Task) -> TasksetEnvironment:
        """The task's own environment when it declares one, else the taskset's."""
        return task.environment or self.environment

    def select(self, ids: list[str] | None = None, include_tags: list[str] | None = None,
               exclude_tags: list[str] | None = None, limit: int | None = None) -> Taskset:
        """The tasks with any of `ids` and `include_tags` and none of `exclude_tags`; then the first `limit`."""
        known = [t.id for t in self.tasks]
        unknown = [i for i in ids or [] if i not in known]
        if unknown:
            raise InputError(*(f"taskset {self.name}: no task with id {i!r}{did_you_mean(i, known)}" for i in unknown))
        tasks = [t for t in self.tasks
                 if (not ids or t.id in ids)
                 and (not include_tags or set(include_tags) & set(t.tags))
                 and not (set(exclude_tags or []) & set(t.tags))]
        if not tasks:
            raise InputError(f"taskset {self.name}: the filters leave no task")
        return Taskset(self.name, self.path, tuple(tasks[:limit]), self.environment)


def builtin_tasksets_dir() -> Path:
    return Path(__file__).resolve().parent.parent / "tasksets"


def resolve_taskset_path(spec: str, base: Path | None = None) -> Path:
    """A taskset path: as given, relative to `base` (the config's folder), or a built-in name."""
    p = Path(spec)
    for candidate in ([p] if p.is_absolute() else [(base or Path.cwd()) / p, Path.cwd() / p]):
        if candidate.exists():
            return candidate.resolve()
    builtin = builtin_tasksets_dir() / spec
    if builtin.exists():
        return builtin
    names = sorted(d.name for d in builtin_tasksets_dir().iterdir() if (d / "taskset.yaml").exists()) \
        if builtin_tasksets_dir().exists() else []
    raise InputError(f"taskset {spec!r} not found (not a path; built-in tasksets: {', '.join(names)})")


def _repo_entries(root: Path) -> list[Path]:
    """Files and symlinks under `root`, without following any link (caches skipped)."""
    out = []
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


def check_repository(root: Path, where: str) -> None:
    """Refuse a repository that could reach outside itself: a symlink whose target resolves outside
    `root` (or loops), or a special file (fifo, socket, device). Links inside stay links.

    Raises:
        InputError: naming the link and its target.
    """
    for path in sorted(_repo_entries(root)):
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


def _split_cmd(cmd: str | list[str]) -> tuple[str, ...]:
    return tuple(shlex.split(cmd) if isinstance(cmd, str) else cmd)


def _pydantic_problems(exc: ValidationError) -> str:
    """Each problem as `key.path: what was expected`, in the taskset's words (no class names)."""
    out = []
    for e in exc.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "(top level)"
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        elif e["type"] == "missing":
            msg = "missing (required)"
        elif e["type"] in ("model_type", "model_attributes_type", "dict_type"):
            msg = f"expected a mapping (got {e.get('input')!r:.60})"
        else:
            msg = f"{e['msg']} (got {e.get('input')!r:.60})"
        out.append(f"{loc}: {msg}")
    return "; ".join(out)


def load_taskset(path: Path, swebench_repos: Path | None = None) -> Taskset:
    """Load a native taskset folder (or its taskset.yaml) or a SWE-bench JSONL file.

    Raises:
        InputError: naming the file and the key that is wrong.
    """
    path = Path(path)
    if path.suffix == ".jsonl":
        from ctxbench.harness.swebench import load_swebench

        return load_swebench(path, swebench_repos)
    folder = path.parent if path.is_file() else path
    file = folder / "taskset.yaml"
    if not file.exists():
        raise InputError(f"{folder}: no taskset.yaml (a taskset is a folder with taskset.yaml, or a .jsonl file)")
    raw = read_yaml(file)
    try:
        spec = _TasksetFile.model_validate(raw)
    except ValidationError as exc:
        raise InputError(f"{file}: {_pydantic_problems(exc)}") from exc
    tasks, seen, checked = [], set(), set()
    for i, entry in enumerate(spec.tasks):
        where = f"{file}: tasks.{i} ({entry.id})"
        if entry.id in seen:
            raise InputError(f"{where}: duplicate task id {entry.id!r}")
        seen.add(entry.id)
        repo_dir = folder / "repos" / entry.repo
        if (not inside(repo_dir, folder / "repos") or not inside(folder / "repos", folder)
                or repo_dir.resolve() == (folder / "repos").resolve()):
            raise InputError(f"{where}.repo: {entry.repo!r} resolves to {repo_dir.resolve()}, outside "
                             f"{folder / 'repos'}; expected a folder name in repos/")
        if not repo_dir.is_dir():
            raise InputError(f"{where}.repo: no folder repos/{entry.repo}")
        if repo_dir not in checked:
            check_repository(repo_dir, f"{where}.repo")
            checked.add(repo_dir)

        def read_patch(key: str, rel: str | None) -> str | None:
            if rel is None:
                return None
            p = folder / rel
            if not inside(p, folder):
                raise InputError(f"{where}.{key}: {rel!r} resolves to {p.resolve()}, outside the taskset {folder}")
            if not p.is_file():
                raise InputError(f"{where}.{key}: no file {rel}")
            return read_text(p)

        tasks.append(Task(
            id=entry.id, repo_dir=repo_dir.resolve(), problem_statement=entry.problem_statement.strip(),
            test_cmd=_split_cmd(entry.test_cmd), FAIL_TO_PASS=tuple(entry.FAIL_TO_PASS),
            PASS_TO_PASS=tuple(entry.PASS_TO_PASS), patch=read_patch("patch", entry.patch) or "",
            test_patch=read_patch("test_patch", entry.test_patch), test_files=tuple(entry.test_files),
            tags=tuple(entry.tags), repo_name=entry.repo, environment=entry.environment,
        ))
    return Taskset(spec.name, folder.resolve(), tuple(tasks), spec.environment)

