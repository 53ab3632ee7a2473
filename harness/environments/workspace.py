"""A private, git-initialised copy of a task's repository for one run, and evaluation in it: the
per-run handle every environment prepares (the local environment's as it is; the docker environment's
a subclass whose commands run in a container, ctxbench.harness.environments.docker_environment).

The parts it builds on: ctxbench.harness.environments.gitcmd (git plumbing), ctxbench.harness.environments.templates (template
repositories and the caches on them), ctxbench.harness.records.evaluation (test outcomes),
ctxbench.harness.unidiff (patch paths). Their public names are importable from here too.

Three shortcuts skip work whose result is known; each holds under the precondition its docstring
states (tests/harness/test_workspace_shortcuts.py checks each against the slow path):
`Workspace.unchanged` (no git for a run that wrote nothing), `Workspace._untouched` (evaluation of an
exact template copy skips staging, cleaning and resets), and `base_evaluation` (one evaluation of the
base per task and process; ctxbench.harness.environments.baseline).
"""

from __future__ import annotations

import shutil
import socketserver
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ctxbench.harness.concurrency import subprocess_slot
from ctxbench.harness.records.evaluation import Evaluation, TestOutcome, parse_junit
from ctxbench.harness.environments.gitcmd import GitError, git
from ctxbench.harness.records import Task
from ctxbench.harness.sandbox import ProcessResult, Sandbox, owner_tag, run_contained
from ctxbench.harness.environments.templates import (copy_tree, prepare_template, remove_templates, snapshot,
                                        sweep_leftovers, sweep_stale, template_snapshot, template_state,
                                        tree_state, work_root)
from ctxbench.harness.environments.testenv import test_argv, test_env_vars
from ctxbench.harness.unidiff import patch_paths

__all__ = ["prepare_template", "remove_templates", "sweep_stale", "sweep_leftovers", "work_root",
           "Workspace", "RunContainer", "TestOutcome", "Evaluation", "parse_junit", "GitError", "git", "patch_paths"]


class RunContainer(Protocol):
    """The running container a run's commands run in, as an external agent reaches it: its `docker`
    stand-in (ctxbench.harness.agents.docker_standin) names it, and its commands are served into it."""

    name: str
    """What the stand-in's `docker run -d` prints."""
    image: str
    """The image it runs (the `{image}` placeholder)."""
    workdir: str
    """Where the repository is inside it (the `{workdir}` placeholder)."""

    def serve(self, socket: Path, deadline: float, output_cap: int) -> socketserver.BaseServer:
        """Serve the stand-in's commands on the Unix socket `socket`: each runs in this container (and no
        other), killed when the run's time (`deadline`, monotonic) is up, at most `output_cap` bytes of
        its output passed on. The caller runs `serve_forever` in a thread and shuts it down."""
        ...


@dataclass
class Workspace:
    """A run's private copy of the repository, a git repo whose first commit is the base."""

    root: Path
    task: Task
    python: str
    sandbox: Sandbox = field(default_factory=Sandbox)
    output_cap: int = 200_000
    _scratch: Path | None = None
    _base_state: dict[str, tuple[int, int, int]] | None = None
    _template: Path | None = None
    _staged: bool = False
    """`diff` has staged every change, and only `apply_patch` (which clears this) wrote since."""

    @classmethod
    def create(cls, task: Task, python: str, parent: Path | None = None, sandbox: Sandbox = Sandbox(),
               output_cap: int = 200_000, keep: bool = False) -> Workspace:
        """A fresh copy of the task's template (`template`); `keep` names it so that `sweep_stale` leaves
        it alone. Where the run's commands run is the class's to say: this one runs them here."""
        owner = "kept" if keep else f"run-{owner_tag()}"
        scratch = Path(tempfile.mkdtemp(prefix=f"ctxbench-{owner}-{task.id[:40]}-", dir=parent or work_root()))
        root = scratch / "repo"
        template = cls.template(task)
        copy_tree(str(template), str(root))
        return cls(root, task, python, sandbox, output_cap, scratch, template_state(template), template)

    @classmethod
    def template(cls, task: Task) -> Path:
        """The template repository this class's workspaces of `task` are copies of (built once per process)."""
        return prepare_template(task)

    @property
    def scratch(self) -> Path:
        """The run's folder: the repository (`repo/`) and what the harness writes beside it."""
        assert self._scratch is not None
        return self._scratch

    def diff(self) -> str:
        """The agent's changes against the base commit, new files included (empty without asking
        git when `unchanged`).

        Stages every change: `evaluate` then skips staging again, on the caller's promise that nothing
        but `apply_patch` writes to the workspace between the two (as `run_one` does).
        """
        if self.unchanged():
            return ""
        git(["add", "-A"], self.root)
        self._staged = True
        return git(["diff", "--cached", "--binary", "--no-color", "HEAD"], self.root).stdout

    def unchanged(self) -> bool:
        """Whether every file still has the template's size, mtime and mode, none added or removed:
        then `git diff` against the base is empty, and asking git is skipped.

        Precondition: the workspace is a `copy_tree` of its template (times kept), and whatever wrote
        to it since set the mtime of what it wrote, as every write does (a write stamps the current
        time, later than the template's own files). It does not hold for a writer that puts an old
        mtime back on a file it rewrote to the same size; nothing ctxbench runs does. A workspace
        not made by `create` has no template state and is never `unchanged`.
        """
        return self._base_state is not None and tree_state(self.root) == self._base_state

    def apply_patch(self, patch: str) -> bool:
        if not patch.strip():
            return True
        self._staged = False
        if git(["apply", "--whitespace=nowarn", "-"], self.root, stdin=patch, check=False).returncode != 0:
            return False
        created = [new for old, new in patch_paths(patch) if old is None and new and (self.root / new).exists()]
        if created:  # part of the tree even where .gitignore names them (evaluation drops ignored files)
            git(["add", "--force", "--", *created], self.root)
        return True

    def default_test_targets(self) -> list[str]:
        """What `run_tests` without ids runs: the task's test files (a file the hidden tests will
        create stands for its nearest existing folder); nothing, meaning the whole suite, when the
        task names none."""
        out: list[str] = []
        for target in self.task.test_files:
            path = Path(target.split("::")[0])
            while path.parts and not (self.root / path).exists():
                path = path.parent
            if path.parts:
                out.append(target if path == Path(target.split("::")[0]) else path.as_posix())
        return list(dict.fromkeys(out))

    def _evaluation_targets(self) -> list[str]:
        """The task's test files (as SWE-bench runs the files its test patch touches), plus any
        FAIL_TO_PASS/PASS_TO_PASS id outside them; the ids alone when the task names no test file."""
        ids = list(dict.fromkeys([*self.task.FAIL_TO_PASS, *self.task.PASS_TO_PASS]))
        files = [f for f in self.task.test_files if (self.root / f.split("::")[0]).exists()]
        if not files:
            return ids
        covered = {f.split("::")[0].rstrip("/") for f in files}

        def inside(test_id: str) -> bool:
            path = test_id.split("::")[0]
            return any(path == c or path.startswith(c + "/") for c in covered)

        return [*files, *(i for i in ids if not inside(i))]

    def _reset_test_files(self) -> None:
        """Put every file the test patch touches back to the base (the agent's edits to them are
        in its patch already): SWE-bench checks these files out at base_commit before applying it."""
        paths = sorted({p for pair in patch_paths(self.task.test_patch or "") for p in pair if p})
        if not paths:
            return
        tracked = set(git(["ls-tree", "-r", "--name-only", "-z", "HEAD", "--", *paths], self.root).stdout
                      .split("\0")) - {""}
        if tracked:
            git(["checkout", "HEAD", "--", *sorted(tracked)], self.root)
        for path in paths:
            target = self.root / path
            if path not in tracked and (target.is_file() or target.is_symlink()):
                target.unlink()
                git(["rm", "-q", "--cached", "--ignore-unmatch", "--", path], self.root)

    def command(self, test_ids: list[str] | tuple[str, ...]) -> list[str]:
        return [*test_argv(self.task, self.python), *test_ids]

    def run_tests(self, test_ids: list[str] | tuple[str, ...], timeout_s: float,
                  junit: Path | None = None) -> ProcessResult:
        argv = self.command(test_ids)
        if junit is not None:
            argv.append(f"--junitxml={junit}")
        with subprocess_slot():  # runs in flight share the cores: tests wait for a slot
            return run_contained(argv, self.root, timeout_s, test_env_vars(self.root), self.sandbox, self.output_cap,
                                 writable=self._scratch)

    def evaluate(self, timeout_s: float) -> Evaluation:
        """Evaluate what the patch holds: drop ignored files the patch cannot carry, reset the files
        the hidden tests touch and apply them, run the task's test files (or its FAIL_TO_PASS +
        PASS_TO_PASS ids), and read each id's outcome from the JUnit XML report."""
        if not self._untouched():  # else every file is the base's, tracked: these would change nothing
            if not self._staged:  # `diff` staged everything just before
                git(["add", "-A"], self.root)
            git(["clean", "-q", "-d", "-X", "--force"], self.root)
            self._reset_test_files()
        applied = self.apply_patch(self.task.test_patch or "")
        assert self._scratch is not None
        junit = self._scratch / "junit.xml"
        junit.unlink(missing_ok=True)
        result = self.run_tests(self._evaluation_targets(), timeout_s, junit)
        if result.output.startswith("bwrap: execvp"):  # the jail could not start the command: not the agent's fault
            raise RuntimeError(f"the test command cannot start in the sandbox: {result.output.strip()[:300]}")
        return self.judge_junit(junit, applied, result)

    def judge_junit(self, junit: Path, applied: bool, result: ProcessResult) -> Evaluation:
        """The evaluation that the JUnit report `junit` of the test command's `result` gives."""
        ids = list(dict.fromkeys([*self.task.FAIL_TO_PASS, *self.task.PASS_TO_PASS]))
        tests = parse_junit(junit, ids)
        f2p = all(tests[t] == "passed" for t in self.task.FAIL_TO_PASS)
        p2p = all(tests[t] == "passed" for t in self.task.PASS_TO_PASS)
        return Evaluation(tests, f2p, p2p, applied, result.output[-4000:], result.seconds, result.exit_code,
                          result.timed_out)

    def _untouched(self) -> bool:
        """Whether the workspace, .git included, is still an exact copy of a template that holds no
        ignored files: then staging, cleaning and resetting files to the base would change nothing,
        and `evaluate` skips them.

        Precondition: as for `unchanged` (every write changes a size, mtime or mode), over .git too,
        so the index is the template's; and the template holds no untracked file git ignores (`git
        clean -X` would delete it, so a copy is not yet what evaluation makes of it). `prepare_template`
        tracks every file it copies, so this holds for its templates; `template_snapshot` checks it
        and is None otherwise, and the shortcut is not taken.
        """
        if self._template is None:
            return False
        expected = template_snapshot(self._template)
        return expected is not None and snapshot(str(self.root)) == expected

    def live_container(self) -> RunContainer | None:
        """The running container the run's commands run in; None: they run on this machine."""
        return None

    def cleanup(self) -> None:
        """Remove the run's folder and whatever the run still holds: nothing of it is left behind."""
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)
