"""A private, git-initialised copy of a task's repository for one run, and evaluation in it.

The parts it builds on: ctxbench.harness.environments.gitcmd (git plumbing), ctxbench.harness.environments.templates (template
repositories and the caches on them), ctxbench.harness.records.evaluation (test outcomes),
ctxbench.harness.unidiff (patch paths). Their public names are importable from here too.

Three shortcuts skip work whose result is known; each holds under the precondition its docstring
states (tests/harness/test_workspace_shortcuts.py checks each against the slow path):
`Workspace.unchanged` (no git for a run that wrote nothing), `Workspace._untouched` (evaluation of an
exact template copy skips staging, cleaning and resets), and `base_evaluation` (one evaluation of the
base per task and process).

`DockerWorkspace`: the same copy for a task that runs in a container from its image. It is
bind-mounted at the container's `workdir` (default /testbed): the agent's file tools read and write
what the container sees, under the same limits as a local run, its `run_tests` run in the container,
and the patch is the `git diff` of that folder against its base commit. The run's container has no
network and its own memory, CPU and process limits (ctxbench.harness.environments.docker); what it writes
outside the workspace, installs or leaves running goes with it. Evaluation copies the base again,
applies only the patch and runs the tests in a new container from the image (graded from the JUnit
report, or by the swebench package: ctxbench.harness.swebench.grading), so nothing else the agent
did reaches the verdict.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import threading
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, cast

from ctxbench.harness.concurrency import subprocess_slot
from ctxbench.harness.environments.docker import acquire_slot, exec_in, remove_container, run_once, start_container
from ctxbench.harness.records.evaluation import Evaluation, TestOutcome, parse_junit
from ctxbench.harness.environments.gitcmd import GitError, git
from ctxbench.harness.records import Task
from ctxbench.harness.sandbox import ProcessResult, Sandbox, owner_tag, run_contained
from ctxbench.harness.environments.templates import (BASE_EVALUATIONS, copy_tree, prepare_template, remove_templates,
                                        snapshot, sweep_leftovers, sweep_stale, template_snapshot, template_state,
                                        tree_state, work_root)
from ctxbench.harness.swebench.grading import GRADER, eval_script, grade_log
from ctxbench.harness.records.taskset_records import Container
from ctxbench.harness.environments.testenv import cache_dir, test_argv, test_env_vars
from ctxbench.harness.unidiff import patch_paths

__all__ = ["prepare_template", "remove_templates", "base_evaluation", "sweep_stale", "sweep_leftovers", "work_root",
           "Workspace", "DockerWorkspace", "OUT_DIR", "container_slots", "container_env", "TestOutcome", "Evaluation", "parse_junit", "GitError", "git", "patch_paths"]


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
        """A fresh copy of the task's template; `keep` names it so that `sweep_stale` leaves it alone.

        A task with a `container` gets a `DockerWorkspace`: the same copy, mounted into a container
        from the task's image, where its commands run."""
        if task.container is not None and cls is Workspace:
            return DockerWorkspace.create(task, python, parent, sandbox, output_cap, keep)
        owner = "kept" if keep else f"run-{owner_tag()}"
        scratch = Path(tempfile.mkdtemp(prefix=f"ctxbench-{owner}-{task.id[:40]}-", dir=parent or work_root()))
        root = scratch / "repo"
        template = prepare_template(task)
        copy_tree(str(template), str(root))
        return cls(root, task, python, sandbox, output_cap, scratch, template_state(template), template)

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

    def cleanup(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)


def base_evaluation(task: Task, python: str, timeout_s: float, sandbox: Sandbox,
                    ws: Workspace | None = None) -> Evaluation:
    """The evaluation of the task's base (its hidden tests applied), run once per template (so once
    per task and process for an experiment), interpreter, timeout and sandbox; later calls return
    it with `seconds` 0, since no test ran for them.

    A run whose patch is empty is judged on exactly the base: staging its workspace leaves out only
    the files git ignores, and evaluation deletes those first. Such a run passes its own workspace
    as `ws` (the first one is evaluated there); without `ws` a fresh workspace is made.

    Precondition: the base's test outcomes depend only on the key: the task's tests give the same
    outcomes each time they run on the same files (a flaky test breaks it: its first outcome is
    reused for every later run); and `ws`, when given, has an empty `diff`. The cache ends with
    `remove_templates`, as the experiment does. Runs in flight in one process (threads) that ask at
    once share one evaluation: the first evaluates, the others wait for it.
    """
    key = (prepare_template(task), task.id, python, timeout_s, sandbox)
    cached = BASE_EVALUATIONS.get(key)
    if cached is not None:
        return replace(cached, seconds=0.0)
    with _BASE_GUARD:
        first = _BASE_LOCKS.setdefault(key, threading.Lock())
    with first:  # runs in flight (threads) that miss together wait for one evaluation, not one each
        cached = BASE_EVALUATIONS.get(key)
        if cached is not None:
            return replace(cached, seconds=0.0)
        if ws is None:
            fresh = Workspace.create(task, python, sandbox=sandbox)
            try:
                evaluation = fresh.evaluate(timeout_s)
            finally:
                fresh.cleanup()
        else:
            evaluation = ws.evaluate(timeout_s)
        BASE_EVALUATIONS[key] = evaluation
    return evaluation


_BASE_GUARD = threading.Lock()
_BASE_LOCKS: dict[tuple[Path, str, str, float, Sandbox], threading.Lock] = {}
"""One lock per `base_evaluation` key: the first caller evaluates, the others wait for its result."""


OUT_DIR = "/ctxbench"
"""Where, in the container, the harness's files for one command lie (the JUnit report, the eval script)."""
EVAL_LOG_CAP = 64 * 1024**2
"""Bytes of an eval script's log kept whole for the swebench parser (the agent's own runs are capped as
locally)."""


@dataclass
class DockerWorkspace(Workspace):
    """A `Workspace` whose commands run in a container from `task.container.image`."""

    container: str | None = None
    """The running container's name (None before `start` and after `stop`)."""
    _slot: IO[str] | None = None

    @classmethod
    def create(cls, task: Task, python: str, parent: Path | None = None, sandbox: Sandbox = Sandbox(),
               output_cap: int = 200_000, keep: bool = False, start: bool = True) -> DockerWorkspace:
        """The base's copy, as for a local run, and (with `start`) the run's container on it."""
        ws = cast(DockerWorkspace, super().create(task, python, parent, sandbox, output_cap, keep))
        (ws.out_dir).mkdir()
        if start:
            try:
                ws.start()
            except BaseException:
                ws.cleanup()
                raise
        return ws

    @property
    def spec(self) -> Container:
        assert self.task.container is not None
        return self.task.container

    @property
    def out_dir(self) -> Path:
        assert self._scratch is not None
        return self._scratch / "out"

    def _mounts(self) -> dict[Path, str]:
        return {self.root: self.spec.workdir, self.out_dir: OUT_DIR}

    def start(self) -> None:
        """Start the run's container (waiting for a free container slot first)."""
        self._slot = acquire_slot(container_slots())
        self.container = start_container(self.spec, self._mounts())

    def stop(self) -> None:
        """Remove the run's container and free its slot."""
        if self.container is not None:
            remove_container(self.container)
            self.container = None
        if self._slot is not None:
            self._slot.close()
            self._slot = None

    def command(self, test_ids: list[str] | tuple[str, ...]) -> list[str]:
        argv = list(self.task.test_cmd)
        if argv and argv[0] in ("python", "python3"):
            argv[0] = self.spec.python
        return [*argv, *test_ids]

    def run_tests(self, test_ids: list[str] | tuple[str, ...], timeout_s: float,
                  junit: Path | None = None) -> ProcessResult:
        """The test command in the run's container; paths in its output read as the workspace's own."""
        if self.container is None:
            raise RuntimeError("the run's container is gone (the workspace was evaluated or cleaned up)")
        argv = self.command(test_ids)
        if junit is not None:
            argv.append(f"--junitxml={OUT_DIR}/{junit.name}")
        result = exec_in(self.container, argv, timeout_s, container_env(), self.output_cap)
        return _as_local(result, self.spec.workdir, self.root)

    def evaluate(self, timeout_s: float) -> Evaluation:
        """The patch judged in a fresh container: the run's container is removed first, then a new
        copy of the base gets the patch only, and the task's grader runs on it."""
        patch = self.diff()
        self.stop()
        fresh = DockerWorkspace.create(self.task, self.python, self.root.parent.parent, self.sandbox,
                                       self.output_cap, start=False)
        try:
            if not fresh.apply_patch(patch):
                raise RuntimeError("the run's own patch does not apply to a fresh copy of the base")
            return fresh._graded(timeout_s)
        finally:
            fresh.cleanup()

    def _graded(self, timeout_s: float) -> Evaluation:
        grading = self.task.swebench
        if grading is None:
            self._reset_test_files()
            applied = self.apply_patch(self.task.test_patch or "")
            junit = self.out_dir / "junit.xml"
            argv = [*self.command(self._evaluation_targets()), f"--junitxml={OUT_DIR}/{junit.name}"]
            result = run_once(self.spec, argv, self._mounts(), timeout_s, container_env(), self.output_cap,
                              container_slots())
            return self.judge_junit(junit, applied, result)
        (self.out_dir / "eval.sh").write_text(eval_script(self.task, grading))
        result = run_once(self.spec, ["bash", f"{OUT_DIR}/eval.sh"], self._mounts(), timeout_s, container_env(),
                          EVAL_LOG_CAP, container_slots())
        log = self.out_dir / "eval.log"
        log.write_text(result.output)
        tests, f2p, p2p, valid = grade_log(self.task, grading, log)
        return Evaluation(tests, f2p, p2p, valid, result.output[-4000:], result.seconds, result.exit_code,
                          result.timed_out, GRADER)

    def cleanup(self) -> None:
        self.stop()
        super().cleanup()


def container_slots() -> Path:
    """The lock files that bound the containers in flight (ctxbench.harness.environments.docker.acquire_slot)."""
    return cache_dir() / "container-slots"


def container_env() -> dict[str, str]:
    """The tests' fixed environment, less what the image sets itself (PATH, HOME)."""
    env = test_env_vars(Path(tempfile.gettempdir()))
    return {k: v for k, v in env.items() if k not in ("PATH", "HOME")}


def _as_local(result: ProcessResult, workdir: str, root: Path) -> ProcessResult:
    """The output with the container's `workdir` written as the workspace's path, as a local run prints
    it (`/testbed/x.py` -> `<root>/x.py`, a bare `/testbed` -> `<root>`; `/testbed2` stays)."""
    text = re.sub(re.escape(workdir.rstrip("/")) + r"(?=/|(?![\w-])(?!\.\w))", lambda _: str(root), result.output)
    return ProcessResult(result.exit_code, text, result.timed_out, result.seconds, result.omitted_bytes,
                         result.limit_hit)
