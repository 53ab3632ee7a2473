"""The local environment: a private git copy of the task's repository on this machine, its commands
(the agent's tools, the tests) contained by the sandbox, the tests run by the taskset's interpreter or
a cached venv."""

from __future__ import annotations

from ctxbench.harness.environments.testenv import command_problem, resolve_interpreter
from ctxbench.harness.environments.workspace import Workspace
from ctxbench.harness.records import Task, TasksetEnvironment
from ctxbench.harness.sandbox import Sandbox

__all__ = ["LocalEnvironment"]


class LocalEnvironment:
    """Runs on this machine (the default backend). A subclass that changes only `workspace` gets every
    check and the interpreter of this one."""

    containers = False
    workspace: type[Workspace] = Workspace
    """The per-run handle `prepare` makes (a subclass of `Workspace` may wrap its commands)."""

    def setting_problems(self, setting: TasksetEnvironment) -> list[str]:
        """`image` is refused: nothing here starts from an image."""
        return ["image needs backend: docker"] if setting.image else []

    def interpreter(self, setting: TasksetEnvironment) -> str:
        """`python` as given, or a venv with `requirements`, built once and cached."""
        return resolve_interpreter(setting)

    def problem(self, task: Task, python: str) -> str | None:
        """Whether the task's test command can start here (found, executable, its `#!` interpreter present)."""
        return command_problem(task, python)

    def warm(self, task: Task) -> None:
        """Build the task's template repository (once per process)."""
        self.workspace.template(task)

    def prepare(self, task: Task, python: str, *, sandbox: Sandbox = Sandbox(), output_cap: int = 200_000,
                keep: bool = False) -> Workspace:
        """A fresh copy of the task's template for one run."""
        return self.workspace.create(task, python, sandbox=sandbox, output_cap=output_cap, keep=keep)
