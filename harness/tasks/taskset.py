"""Tasks and tasksets: the native YAML format and SWE-bench-style JSONL instances."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ctxbench.harness.errors import InputError, validation_problems
from ctxbench.harness.paths import check_repository, inside, repo_entries
from ctxbench.harness.records import Task, Taskset, TasksetEnvironment
from ctxbench.harness.swebench.instances import load_swebench, task_environment
from ctxbench.harness.yamlfile import read_text, read_yaml

__all__ = ["Task", "Taskset", "TasksetEnvironment", "load_taskset", "builtin_tasksets_dir",
           "resolve_taskset_path", "check_repository", "inside"]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

LARGE_TASKSET_BYTES = 5_000_000
"""A taskset.yaml this large takes seconds to minutes to read: loading it says so on stderr, with
progress every PROGRESS_EVERY tasks."""
PROGRESS_EVERY = 10_000


def _say(message: str) -> None:
    print(f"ctxbench: {message}", file=sys.stderr, flush=True)


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


def builtin_tasksets_dir() -> Path:
    return Path(__file__).resolve().parents[2] / "tasksets"


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


def _split_cmd(cmd: str | list[str]) -> tuple[str, ...]:
    return tuple(shlex.split(cmd) if isinstance(cmd, str) else cmd)


def load_taskset(path: Path, swebench_repos: Path | None = None) -> Taskset:
    """Load a native taskset folder (or its taskset.yaml) or a SWE-bench JSONL file.

    Raises:
        InputError: naming the file and the key that is wrong.
    """
    path = Path(path)
    if path.suffix == ".jsonl":
        return load_swebench(path, swebench_repos)
    folder = path.parent if path.is_file() else path
    file = folder / "taskset.yaml"
    if not file.exists():
        raise InputError(f"{folder}: no taskset.yaml (a taskset is a folder with taskset.yaml, or a .jsonl file)")
    large = file.stat().st_size >= LARGE_TASKSET_BYTES
    if large:
        _say(f"reading {file} ({file.stat().st_size / 1e6:,.0f} MB)...")
    raw = read_yaml(file)
    try:
        spec = _TasksetFile.model_validate(raw)
    except ValidationError as exc:
        raise InputError(f"{file}: " + "; ".join(validation_problems(exc))) from exc
    tasks, seen, checked = [], set(), set()
    for i, entry in enumerate(spec.tasks):
        if large and i % PROGRESS_EVERY == 0:
            _say(f"checking tasks {i + 1:,}-{min(i + PROGRESS_EVERY, len(spec.tasks)):,} of {len(spec.tasks):,}")
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
            runs_in=task_environment(entry.environment, spec.environment, where, f"{file}: environment"),
        ))
    return Taskset(spec.name, folder.resolve(), tuple(tasks), spec.environment)

