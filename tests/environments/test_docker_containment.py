"""Hostile tests inside the container are contained, and a runner killed with SIGKILL leaves no
container once the next run has started."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import yaml

from ctxbench.harness.environments.docker import owned_containers
from ctxbench.harness.environments.docker_environment import DockerWorkspace
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.environments.workspace import sweep_leftovers

HOSTILE = '''\
import os
import socket
import subprocess
import sys
import time

MARK = open(os.path.join(os.path.dirname(__file__), "mark.txt")).read().strip()


def test_network():
    socket.create_connection(("1.1.1.1", 53), timeout=5)


def test_write_outside():
    for folder in ("/tmp", "/etc", "/root"):
        with open(os.path.join(folder, MARK), "w") as fh:
            fh.write("escaped")


def test_processes():
    procs = [subprocess.Popen(["sleep", "60"]) for _ in range(400)]
    assert len(procs) == 400


def test_room_after_the_bomb():
    procs = [subprocess.Popen(["sleep", "5"]) for _ in range(30)]
    assert len(procs) == 30


def test_memory():
    hog = bytearray(1024 * 1024 * 1024)
    assert hog


def test_sleep_forever():
    time.sleep(10 ** 6)


def test_flood():
    for _ in range(40_000):
        sys.stdout.write("x" * 500 + "\\n")
    assert False, "pytest shows a failing test's output: all of it"
'''


def _hostile_task(tmp_path: Path, image: str):
    folder = tmp_path / "hostile"
    repo = folder / "repos" / "hostile"
    (repo / "tests").mkdir(parents=True)
    mark = f"ctxbench-hostile-{uuid.uuid4().hex}"
    (repo / "tests" / "mark.txt").write_text(mark)
    (repo / "tests" / "test_hostile.py").write_text(HOSTILE)
    (folder / "fix.diff").write_text("")
    (folder / "taskset.yaml").write_text(yaml.safe_dump({
        "name": "hostile", "environment": {"backend": "docker", "image": image, "memory_mb": 256, "pids": 64},
        "tasks": [{"id": "hostile", "repo": "hostile", "problem_statement": "x", "test_cmd": "python -m pytest -q",
                   "FAIL_TO_PASS": ["tests/test_hostile.py::test_network"], "patch": "fix.diff"}]}))
    return load_taskset(folder).tasks[0], mark


def test_hostile_tests_stay_in_the_container(tmp_path, image, no_leftover_containers):
    task, mark = _hostile_task(tmp_path, image)
    ws = DockerWorkspace.create(task, "python", output_cap=20_000)
    try:
        def run(name: str, timeout: float = 60):
            return ws.run_tests([f"tests/test_hostile.py::test_{name}"], timeout)

        network = run("network")
        assert network.exit_code == 1 and "OSError" in network.output and "unreachable" in network.output
        outside = run("write_outside")
        assert outside.exit_code == 0
        assert not any(Path(folder, mark).exists() for folder in ("/tmp", "/etc", "/root"))
        processes = run("processes")
        assert processes.exit_code == 1 and "Resource temporarily unavailable" in processes.output
        room = run("room_after_the_bomb")  # what the bomb left was killed with it
        assert room.exit_code == 0, room.output
        memory = run("memory")
        assert memory.exit_code != 0 and not memory.timed_out
        asleep = run("sleep_forever", timeout=3)
        assert asleep.timed_out and asleep.exit_code == -9
        flood = run("flood")
        assert flood.exit_code == 1 and len(flood.output.encode()) <= 21_000 and flood.omitted_bytes > 15_000_000
        assert not (ws.root / mark).exists()
        assert run("network").exit_code == 1  # the container still serves the run
    finally:
        ws.cleanup()


def test_a_killed_runner_leaves_no_container_after_the_next_run_starts(tmp_path, smoke_dir, image):
    taskset = tmp_path / "smoke"
    shutil.copytree(smoke_dir, taskset)
    with (taskset / "taskset.yaml").open("a") as fh:
        fh.write(f"environment:\n  backend: docker\n  image: {image}\n")
    exp = tmp_path / "exp.yaml"
    exp.write_text(json.dumps({"name": "killed", "taskset": str(taskset), "strategies": [{"name": "baseline"}],
                               "repeats": 3, "workers": 1, "sandbox": "none", "model": {"provider": "sim"}}))
    runner = subprocess.Popen([str(Path(sys.executable).parent / "ctxbench"), "run", str(exp), "--output",
                               str(tmp_path / "out"), "--no-report"], start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ours = f"{os.getpid()}."
    try:
        for _ in range(600):
            theirs = [name for name, owner in owned_containers() if not owner.startswith(ours)
                      and _in_session(int(owner.split(".")[0]), runner.pid)]
            if theirs:
                break
            time.sleep(0.2)
        assert theirs, "the runner started no container"
    finally:
        os.killpg(runner.pid, signal.SIGKILL)
        runner.wait()
    left = {name for name, _ in owned_containers()}
    assert set(theirs) <= left  # SIGKILL removed nothing itself
    swept = sweep_leftovers()  # what the next run does first
    assert swept.containers >= len(theirs)
    assert any("docker containers" in line for line in swept.messages())
    assert not set(theirs) & {name for name, _ in owned_containers()}


def _in_session(pid: int, session: int) -> bool:
    try:
        return os.getsid(pid) == session
    except ProcessLookupError:
        return False
