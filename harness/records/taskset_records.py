"""Records read from a taskset: its tasks and the environment their tests run in, fixed for a whole
experiment.

Like every in-memory record (see ctxbench.harness.records) these are pydantic dataclasses: validated
when built, positional arguments, `dataclasses.replace`.
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer, model_validator
from pydantic.dataclasses import dataclass

from ctxbench.harness.errors import InputError, did_you_mean

__all__ = ["TasksetEnvironment", "Container", "SwebenchGrading", "Task", "Taskset"]


class TasksetEnvironment(BaseModel):
    """Where a taskset's runs and tests happen: the environment named by `backend` (`local`, `docker`,
    or one a package registers; ctxbench.harness.environments.registry), and its settings.

    Which keys an environment takes is its own to say (checked when the taskset is loaded):
    `python` and `requirements` are local's, `image` to `pids` docker's, and a third-party
    environment's settings go in `options`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    python: str | None = Field(None, description="Interpreter path to run tests with (in the image with docker).")
    requirements: tuple[str, ...] = Field((), description="Requirements installed once into a cached venv.")
    backend: str = Field("local", min_length=1, description="The environment runs and their tests happen in, by name.")
    image: str | None = Field(None, description="docker: the image a run's containers start from.")
    workdir: str = Field("/testbed", description="docker: where the repository is inside the container.")
    memory_mb: int = Field(4096, ge=64, description="docker: memory limit of each container, MiB.")
    cpus: float = Field(2.0, gt=0, description="docker: CPUs each container may use.")
    pids: int = Field(512, ge=16, description="docker: processes each container may hold.")
    options: dict[str, Any] = Field({}, description="A third-party environment's own settings (its `Options`).")

    @model_validator(mode="after")
    def _absolute_workdir(self) -> TasksetEnvironment:
        if not self.workdir.startswith("/"):
            raise ValueError("workdir must be an absolute path inside the container")
        return self

    @model_serializer(mode="wrap")
    def _without_defaults(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """Keys at their default left out, past `python` and `requirements`: a local environment
        dumps (and so hashes) as it did before the other keys existed."""
        out: dict[str, Any] = handler(self)
        return {k: v for k, v in out.items()
                if k in ("python", "requirements") or v != type(self).model_fields[k].default}

    def __hash__(self) -> int:
        return hash(self.model_dump_json())

    def container(self) -> Container | None:
        """The container spec the docker keys give (None without an image)."""
        if not self.image:
            return None
        return Container(self.image, self.workdir, self.python or "python", self.memory_mb, self.cpus, self.pids)


@dataclass(frozen=True)
class Container:
    """The image a task's runs happen in, and each container's limits."""

    image: str
    """Docker image name (with its tag)."""
    workdir: str = "/testbed"
    """Where the repository is, inside the container."""
    python: str = "python"
    """What a leading `python` of the test command becomes inside the container."""
    memory_mb: int = 4096
    cpus: float = 2.0
    pids: int = 512


@dataclass(frozen=True)
class SwebenchGrading:
    """How the swebench package grades an instance: its eval script and the name of its log parser."""

    eval_script: str
    """The instance's eval.sh: resets test files, applies the test patch, runs the tests between markers."""
    log_parser: str
    """A name in swebench's PARSER_REGISTRY (e.g. `parse_log_django`)."""
    version: str = ""
    eval_type: str = "pass_and_fail"


@dataclass(frozen=True)
class Task:
    """One task: a repository at a base state, a bug report, and the tests that decide."""

    id: str
    """Task id, unique in its taskset."""
    repo_dir: Path
    """Folder with the repository's files (native) or a git repository (SWE-bench)."""
    problem_statement: str
    """The bug report the agent is given."""
    test_cmd: tuple[str, ...]
    """Argv prefix; a leading `python` means the taskset environment's interpreter."""
    FAIL_TO_PASS: tuple[str, ...]
    """Test ids that fail before the fix and must pass after it."""
    PASS_TO_PASS: tuple[str, ...]
    """Test ids that pass before and must still pass after."""
    patch: str
    """Gold patch text (reference fix)."""
    test_patch: str | None = None
    """Hidden tests, applied only at evaluation."""
    test_files: tuple[str, ...] = ()
    """What run_tests runs when the agent passes no ids."""
    tags: tuple[str, ...] = ()
    """Free labels for include/exclude filters."""
    base_commit: str | None = None
    """For git repositories: the commit whose files make the workspace."""
    repo_name: str = ""
    """The repository's name as the taskset gives it."""
    environment: TasksetEnvironment | None = None
    """Where this task's tests run, instead of the taskset's environment."""
    runs_in: TasksetEnvironment = field(default_factory=TasksetEnvironment)
    """Where the task runs: its own environment, else the taskset's (a SWE-bench instance's image filled in)."""
    swebench: SwebenchGrading | None = None
    """Graded by the swebench package's eval script and log parser (in a container); None: JUnit XML."""

    @property
    def container(self) -> Container | None:
        """The image the task's runs start from and each container's limits (None without an image)."""
        return self.runs_in.container()


@dataclass(frozen=True)
class Taskset:
    """A named set of tasks and the environment their tests run in."""

    name: str
    """Taskset name."""
    path: Path
    """The taskset folder or JSONL file."""
    tasks: tuple[Task, ...]
    """The tasks, in file order."""
    environment: TasksetEnvironment = field(default_factory=TasksetEnvironment)
    """Where the tests run, unless a task has its own."""

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
