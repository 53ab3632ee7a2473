"""A run's workspace inside a container: the task's base files mounted at the image's working
directory, the agent's commands run in the container, and evaluation in a fresh container.

The workspace folder is the same private copy a local run gets (`Workspace`), bind-mounted at the
container's `workdir` (default /testbed): the agent's file tools read and write what the container
sees, under the same limits as a local run, and the patch is the `git diff` of that folder against
its base commit. The run's container has no network and its own memory, CPU and process limits;
files it writes outside the workspace, packages it installs and processes it leaves stay in it and
go with it. Evaluation copies the base again, applies only the patch, and runs the tests in a new
container from the image, so nothing else the agent did reaches the verdict.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from ctxbench.harness.docker_env import acquire_slot, exec_in, remove_container, run_once, start_container
from ctxbench.harness.evaluation import Evaluation
from ctxbench.harness.records import Task
from ctxbench.harness.sandbox import ProcessResult, Sandbox
from ctxbench.harness.swebench_grading import GRADER, eval_script, grade_log
from ctxbench.harness.taskset_records import Container
from ctxbench.harness.testenv import test_env_vars
from ctxbench.harness.workspace import Workspace

__all__ = ["DockerWorkspace", "OUT_DIR"]

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
        self._slot = acquire_slot()
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
        result = exec_in(self.container, argv, timeout_s, _container_env(), self.output_cap)
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
            result = run_once(self.spec, argv, self._mounts(), timeout_s, _container_env(), self.output_cap)
            return self.judge_junit(junit, applied, result)
        (self.out_dir / "eval.sh").write_text(eval_script(self.task, grading))
        result = run_once(self.spec, ["bash", f"{OUT_DIR}/eval.sh"], self._mounts(), timeout_s, _container_env(),
                          EVAL_LOG_CAP)
        log = self.out_dir / "eval.log"
        log.write_text(result.output)
        tests, f2p, p2p, valid = grade_log(self.task, grading, log)
        return Evaluation(tests, f2p, p2p, valid, result.output[-4000:], result.seconds, result.exit_code,
                          result.timed_out, GRADER)

    def cleanup(self) -> None:
        self.stop()
        super().cleanup()


def _container_env() -> dict[str, str]:
    """The tests' fixed environment, less what the image sets itself (PATH, HOME)."""
    env = test_env_vars(Path(tempfile.gettempdir()))
    return {k: v for k, v in env.items() if k not in ("PATH", "HOME")}


def _as_local(result: ProcessResult, workdir: str, root: Path) -> ProcessResult:
    text = result.output.replace(workdir.rstrip("/") + "/", f"{root}/")
    return ProcessResult(result.exit_code, text, result.timed_out, result.seconds, result.omitted_bytes,
                         result.limit_hit)
