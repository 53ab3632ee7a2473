"""The interpreter a taskset's tests run with: ours, a given one, or a cached venv."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

from ctxbench.harness.errors import InputError
from ctxbench.harness.tasks import TasksetEnvironment

__all__ = ["resolve_interpreter", "test_env_vars", "cache_dir"]


def cache_dir() -> Path:
    return Path(os.environ.get("CTXBENCH_CACHE", Path.home() / ".cache" / "ctxbench"))


def resolve_interpreter(env: TasksetEnvironment) -> str:
    """Path of the Python that runs the tests; builds the cached venv on first use."""
    if env.python:
        if not Path(env.python).exists():
            raise InputError(f"taskset environment: interpreter {env.python} does not exist")
        return env.python
    if not env.requirements:
        return sys.executable
    key = hashlib.sha256("\n".join(sorted(env.requirements)).encode()).hexdigest()[:16]
    target = cache_dir() / "envs" / key
    python = target / "bin" / "python"
    if (target / ".complete").exists():
        return str(python)
    print(f"ctxbench: building test environment {target} ({', '.join(env.requirements)})", file=sys.stderr)
    venv.EnvBuilder(with_pip=True, clear=True).create(target)
    proc = subprocess.run([str(python), "-m", "pip", "install", "-q", *env.requirements],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise InputError(f"taskset environment: installing {list(env.requirements)} failed:\n{proc.stderr[-2000:]}")
    (target / ".complete").write_text("\n".join(env.requirements))
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
