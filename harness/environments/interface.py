"""The interface every environment implements: where a run's tools act and its tests run.

A taskset chooses one by name (`environment: {backend: NAME}`; ctxbench.harness.environments.registry):
`local` and `docker` are built in, others come from packages (docs/environments.md, "Writing an
environment"). One instance serves every run of a process, so it keeps no state of a run: a run's
state is the workspace it prepares (ctxbench.harness.environments.workspace.Workspace, the per-run
handle: the repository the agent's file tools act on, `run_tests` under the run's limits, `diff`,
`evaluate` in a fresh copy, `cleanup`, and `live_container` for an external agent).

The order of calls: `setting_problems` when the taskset is loaded; `interpreter` then `problem` for
every task before anything is written; `warm` once per task before the runs start; then per run
`prepare`, and `cleanup` of the workspace it returned, whatever happened.
"""

from __future__ import annotations

from typing import Protocol

from ctxbench.harness.environments.workspace import RunContainer, Workspace
from ctxbench.harness.records import Task, TasksetEnvironment
from ctxbench.harness.sandbox import Sandbox

__all__ = ["Environment", "RunContainer", "Workspace"]


class Environment(Protocol):
    """Prepares each run's workspace; says before anything runs what it needs.

    An environment class may also define `Options`, a pydantic model of its own settings (the
    `options` mapping of a taskset's `environment`, validated when the taskset is loaded); one without
    it takes none.
    """

    containers: bool
    """Whether a run's commands run in a container from `environment.image`, not on this machine: a
    SWE-bench instance's image is filled in, the swebench package may grade, and an external agent must
    take the run's container (`Workspace.live_container`)."""

    def setting_problems(self, setting: TasksetEnvironment) -> list[str]:
        """What is wrong with a task's `environment` for this environment (a required key missing,
        another's key given), one phrase each; nothing is run or written. Empty: fine."""
        ...

    def interpreter(self, setting: TasksetEnvironment) -> str:
        """What a leading `python` of a test command becomes. May build something once and cache it
        (a venv), never in the results folder."""
        ...

    def problem(self, task: Task, python: str) -> str | None:
        """Preflight: why the task cannot run here (a daemon down, an image missing, a test command that
        cannot start), or None. Asked of every task before anything is written; writes nothing."""
        ...

    def warm(self, task: Task) -> None:
        """Build what every run of the task starts from (a template repository), once per process, so
        that workers forked later share it. May do nothing."""
        ...

    def prepare(self, task: Task, python: str, *, sandbox: Sandbox = Sandbox(), output_cap: int = 200_000,
                keep: bool = False) -> Workspace:
        """A fresh workspace for one run: the task's base files at `root`, whose commands run under
        `sandbox` (or the environment's own containment) with at most `output_cap` bytes of output kept;
        `keep`: the caller keeps it after the run, so no sweep may remove it. The caller calls its
        `cleanup`; a failure here leaves nothing behind."""
        ...
