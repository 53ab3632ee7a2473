"""The interpreter a taskset's tests run with: ours, a given one, or a cached venv."""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

from ctxbench.harness.errors import InputError
from ctxbench.harness.records import Task, TasksetEnvironment

__all__ = ["resolve_interpreter", "test_env_vars", "cache_dir", "command_problem", "test_argv"]


def cache_dir() -> Path:
    return Path(os.environ.get("CTXBENCH_CACHE", Path.home() / ".cache" / "ctxbench"))


def resolve_interpreter(env: TasksetEnvironment) -> str:
    """Path of the Python that runs the tests: `python` as given, or a venv (made from `python`, or
    from the interpreter running ctxbench) with `requirements` installed, built once and cached
    under `cache_dir()/envs` for every later run, experiment and process (the local environment's)."""
    base = env.python or sys.executable
    if env.python and not Path(env.python).exists():
        raise InputError(f"taskset environment: interpreter {env.python} does not exist")
    if not env.requirements:
        return base
    key = hashlib.sha256("\n".join([os.path.abspath(base), *sorted(env.requirements)]).encode()).hexdigest()[:16]
    target = cache_dir() / "envs" / key
    python = target / "bin" / "python"
    if (target / ".complete").exists():
        return str(python)
    target.parent.mkdir(parents=True, exist_ok=True)
    with open(target.parent / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one builder; the others wait and then find it complete
        if (target / ".complete").exists():
            return str(python)
        print(f"ctxbench: building test environment {target} ({', '.join(env.requirements)})", file=sys.stderr)
        shutil.rmtree(target, ignore_errors=True)
        made = subprocess.run([base, "-m", "venv", str(target)], capture_output=True, text=True)
        if made.returncode != 0:
            raise InputError(f"taskset environment: {base} cannot make a venv:\n{made.stderr[-2000:]}")
        proc = subprocess.run([str(python), "-m", "pip", "install", "-q", *env.requirements],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise InputError(f"taskset environment: installing {list(env.requirements)} failed:\n{proc.stderr[-2000:]}")
        (target / ".complete").write_text("\n".join([base, *env.requirements]))
    return str(python)


def test_env_vars(workdir: Path) -> dict[str, str]:
    """A small, fixed environment: nothing of the harness's (API keys included) leaks in."""
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(workdir),
        "LANG": "C.UTF-8",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTEST_ADDOPTS": "-p no:cacheprovider",
        "TMPDIR": "/tmp",
    }


def test_argv(task: Task, python: str) -> list[str]:
    """The task's test command with a leading `python`/`python3` replaced by the taskset's interpreter."""
    argv = list(task.test_cmd)
    if argv and argv[0] in ("python", "python3"):
        argv[0] = python
    return argv


def _repo_file(task: Task, rel: str) -> tuple[bool, bool, bytes] | None:
    """(is a folder, is executable, first bytes) of `rel` in the task's base files; None if absent."""
    if task.base_commit is None:
        path = task.repo_dir / rel
        if not path.exists():
            return None
        if path.is_dir():
            return True, False, b""
        with path.open("rb") as fh:
            return False, os.access(path, os.X_OK), fh.read(256)
    listing = subprocess.run(["git", "ls-tree", task.base_commit, "--", rel], cwd=task.repo_dir,
                             capture_output=True, text=True).stdout.split()
    if not listing:
        return None
    if listing[1] == "tree":
        return True, False, b""
    head = subprocess.run(["git", "cat-file", "blob", listing[2]], cwd=task.repo_dir, capture_output=True).stdout
    return False, listing[0] == "100755", head[:256]


def command_problem(task: Task, python: str) -> str | None:
    """Why the task's test command cannot start (not found, a folder, not executable, a script whose
    interpreter is missing), or None. A relative path is looked up in the task's repository, a bare
    name on the tests' PATH. Such a command is the taskset's fault, never the agent's (the local
    environment's check)."""
    argv = test_argv(task, python)
    if not argv:
        return "test_cmd is empty"
    exe = argv[0]
    if "/" not in exe:
        found = shutil.which(exe, path=test_env_vars(task.repo_dir)["PATH"])
        if found is None:
            return f"{exe!r} is not found on PATH"
        exe = found
    if os.path.isabs(exe):
        path = Path(exe)
        if not path.exists():
            return f"{exe} does not exist"
        with_ = (path.is_dir(), os.access(path, os.X_OK), b"" if path.is_dir() else path.open("rb").read(256))
    else:
        found_in_repo = _repo_file(task, os.path.normpath(exe))
        if found_in_repo is None:
            return f"{exe} is not in the repository"
        with_ = found_in_repo
    is_dir, executable, head = with_
    if is_dir:
        return f"{exe} is a folder"
    if not executable:
        return f"{exe} is not executable"
    if head.startswith(b"#!"):
        words = head[2:].split(b"\n", 1)[0].decode(errors="replace").split()
        interpreter = words[0] if words else ""
        if not interpreter or not Path(interpreter).exists():
            return f"{exe} starts with #!{interpreter}, which does not exist"
        if Path(interpreter).name == "env" and len(words) > 1 and not words[1].startswith("-"):
            if shutil.which(words[1], path=test_env_vars(task.repo_dir)["PATH"]) is None:
                return f"{exe} runs {words[1]!r} (#!{' '.join(words)}), which is not found on PATH"
    return None
