"""The docker environment: a run's workspace mounted into a container from the task's image, where its
commands run, and evaluation in a fresh container (docs/environments.md).

`DockerWorkspace` is the same copy of the base a local run gets (ctxbench.harness.environments.workspace),
bind-mounted at the container's `workdir` (default /testbed): the agent's file tools read and write
what the container sees, under the same limits as a local run, its `run_tests` run in the container,
and the patch is the `git diff` of that folder against its base commit. The run's container has no
network and its own memory, CPU and process limits (ctxbench.harness.environments.docker); what it writes
outside the workspace, installs or leaves running goes with it. Evaluation copies the base again,
applies only the patch and runs the tests in a new container from the image (graded from the JUnit
report, or by the swebench package: ctxbench.harness.swebench.grading), so nothing else the agent
did reaches the verdict. An external agent reaches the run's container through its `docker`
stand-in (ctxbench.harness.agents.docker_standin), whose commands `serve_exec` runs there.
"""

from __future__ import annotations

import json
import os
import re
import selectors
import socketserver
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, cast

from ctxbench.harness.environments.docker import (acquire_slot, env_args, exec_in, image_problem, image_tree,
                                                  remove_container, run_once, start_container, timed)
from ctxbench.harness.environments.templates import prepare_template
from ctxbench.harness.environments.testenv import cache_dir, test_env_vars
from ctxbench.harness.environments.workspace import Workspace
from ctxbench.harness.records import Task, TasksetEnvironment
from ctxbench.harness.records.evaluation import Evaluation
from ctxbench.harness.records.taskset_records import Container
from ctxbench.harness.sandbox import ProcessResult, Sandbox
from ctxbench.harness.swebench.grading import GRADER, eval_script, grade_log, swebench_problem

__all__ = ["DockerEnvironment", "DockerWorkspace", "DockerRunContainer", "ImageOverlay", "OUT_DIR",
           "container_slots", "container_env", "serve_exec"]


class DockerEnvironment:
    """Runs in containers from a docker image that holds the repository's environment (interpreter,
    system libraries, compiled dependencies), as the SWE-bench harness runs its instances."""

    containers = True

    def setting_problems(self, setting: TasksetEnvironment) -> list[str]:
        """An image is required; `requirements` are refused (the image holds its environment)."""
        problems = []
        if setting.requirements:
            problems.append("requirements are for the local backend; a docker image holds its own environment")
        if not setting.image:
            problems.append("backend docker needs an image")
        return problems

    def interpreter(self, setting: TasksetEnvironment) -> str:
        """The image's own interpreter: `python` unless the setting names one; nothing to build."""
        return setting.python or "python"

    def problem(self, task: Task, python: str) -> str | None:
        """Docker answers, the image is present locally, and the swebench package is there for an
        instance it grades."""
        if not task.test_cmd and task.swebench is None:
            return "test_cmd is empty"
        return image_problem(_spec(task).image) or (swebench_problem(task.swebench) if task.swebench else None)

    def warm(self, task: Task) -> None:
        """Build the task's template, the image's workdir laid under it (copied out of the image once
        per machine)."""
        DockerWorkspace.template(task)

    def prepare(self, task: Task, python: str, *, sandbox: Sandbox = Sandbox(), output_cap: int = 200_000,
                keep: bool = False) -> Workspace:
        """The run's copy of the base and the run's container on it (waiting for a container slot)."""
        return DockerWorkspace.create(task, python, sandbox=sandbox, output_cap=output_cap, keep=keep)


def _spec(task: Task) -> Container:
    spec = task.container
    if spec is None:
        raise RuntimeError(f"task {task.id}: the docker environment needs an image")
    return spec


@dataclass(frozen=True)
class ImageOverlay:
    """What the image holds in its `workdir` and a task's base does not (what the image built in
    place: compiled extensions, generated files), laid under the task's template."""

    spec: Container

    @property
    def key(self) -> str:
        return f"{self.spec.image}\n{self.spec.workdir}"

    def tree(self) -> Path | None:
        return image_tree(self.spec, cache_dir() / "image-trees")


@dataclass
class DockerRunContainer:
    """A run's container as an external agent reaches it (ctxbench.harness.environments.workspace.RunContainer)."""

    name: str
    image: str
    workdir: str

    def serve(self, socket: Path, deadline: float, output_cap: int) -> socketserver.BaseServer:
        """The stand-in's commands, served into this container with the tests' environment (`serve_exec`)."""
        return serve_exec(self.name, socket, container_env(), deadline, output_cap)


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
        ws.out_dir.mkdir()
        if start:
            try:
                ws.start()
            except BaseException:
                ws.cleanup()
                raise
        return ws

    @classmethod
    def template(cls, task: Task) -> Path:
        """The task's template with what the image holds in its workdir laid under the base (`ImageOverlay`)."""
        return prepare_template(task, ImageOverlay(_spec(task)))

    @property
    def spec(self) -> Container:
        """The image and limits of the run's containers."""
        return _spec(self.task)

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

    def live_container(self) -> DockerRunContainer | None:
        """The run's container (None once stopped)."""
        if self.container is None:
            return None
        return DockerRunContainer(self.container, self.spec.image, self.spec.workdir)

    def cleanup(self) -> None:
        """Remove the run's container, then its folder."""
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


class _ExecServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    container: str
    env: dict[str, str]
    deadline: float
    output_cap: int


class _ExecHandler(socketserver.StreamRequestHandler):
    """One command of the docker stand-in (ctxbench.harness.agents.docker_standin): run it in the container by
    `docker exec`, its standard output and error sent back as frames, then its exit code."""

    server: _ExecServer

    def handle(self) -> None:
        try:
            request = json.loads(self.rfile.readline(1 << 20))
            argv, workdir, env = request["argv"], request.get("workdir") or "", request.get("env") or {}
            if not (isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv)
                    and isinstance(workdir, str) and isinstance(env, dict)
                    and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
                raise ValueError("expected argv (a list of strings), workdir and env")
        except (ValueError, KeyError, TypeError) as exc:
            self._frame(b"e", f"docker: bad request: {exc}\n".encode())
            self._frame(b"x", 125)
            return
        if workdir and not workdir.startswith("/"):
            self._frame(b"e", f"docker: the working directory {workdir!r} is not an absolute path\n".encode())
            self._frame(b"x", 125)
            return
        left = self.server.deadline - time.monotonic()
        if left <= 1:
            self._frame(b"e", b"docker: the run's time is up\n")
            self._frame(b"x", 124)
            return
        server = self.server
        command = ["docker", "exec", *(["--workdir", workdir] if workdir else []),
                   *env_args({**server.env, **env}), server.container, *timed(argv, left)]
        proc = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout is not None and proc.stderr is not None
        sent, gone = 0, False
        with selectors.DefaultSelector() as streams:
            streams.register(proc.stdout, selectors.EVENT_READ, b"o")
            streams.register(proc.stderr, selectors.EVENT_READ, b"e")
            while streams.get_map():
                for key, _ in streams.select():
                    data = os.read(key.fd, 65536)
                    if not data:
                        streams.unregister(key.fileobj)
                        continue
                    keep = data[:max(0, server.output_cap - sent)]
                    sent += len(data)
                    if keep and not gone:
                        try:
                            self._frame(key.data, keep)
                        except OSError:  # the agent stopped waiting (its own timeout): stop the command
                            gone = True
                            proc.kill()
        code = proc.wait()
        if not gone:
            if sent > server.output_cap:
                self._frame(b"e", f"\n[docker: {sent - server.output_cap} bytes of output omitted]\n".encode())
            self._frame(b"x", code)

    def _frame(self, kind: bytes, body: bytes | int) -> None:
        if isinstance(body, int):
            self.wfile.write(kind + struct.pack("!i", body))
        else:
            self.wfile.write(kind + struct.pack("!i", len(body)) + body)
        self.wfile.flush()


def serve_exec(container: str, path: Path, env: dict[str, str], deadline: float,
               output_cap: int) -> socketserver.BaseServer:
    """Serve the docker stand-in's commands on the Unix socket `path`: each runs in `container` (and no
    other), with `env` under what the command sets, killed inside the container when the run's time
    (`deadline`, monotonic) is up; at most `output_cap` bytes of each command's output are passed on.
    The caller runs `serve_forever` in a thread and shuts it down."""
    server = _ExecServer(str(path), _ExecHandler)
    os.chmod(path, 0o777)  # the agent's jail may map it to another user; the folder is the run's alone
    server.container, server.env, server.deadline, server.output_cap = container, env, deadline, output_cap
    return server
