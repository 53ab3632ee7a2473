"""Git plumbing for workspaces: one way to run git with a fixed identity and dates, and writing a
commit's tree into a folder."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

from ctxbench.harness.errors import InputError

__all__ = ["GitError", "git", "GIT_ENV", "checkout_tree"]

GIT_ENV = {"GIT_AUTHOR_NAME": "ctxbench", "GIT_AUTHOR_EMAIL": "ctxbench@localhost",
           "GIT_COMMITTER_NAME": "ctxbench", "GIT_COMMITTER_EMAIL": "ctxbench@localhost",
           "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}
"""What every git command of a workspace runs with: the same commits on every machine, no user config."""


class GitError(InputError):
    """A git command on a taskset's repository failed: the repository cannot be used as it is."""


def git(args: list[str], cwd: Path, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV}
    proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc


def checkout_tree(repo: Path, commit: str, dest: Path) -> None:
    """Write every file of `commit`'s tree into `dest`: exactly the tree (unlike `git archive`, no
    `export-ignore` or `export-subst` attribute changes it), and none of the repository's history."""
    with tempfile.TemporaryDirectory(prefix="ctxbench-index-") as tmp:
        env = {**os.environ, **GIT_ENV, "GIT_INDEX_FILE": os.path.join(tmp, "index")}
        for args in (["read-tree", commit], ["checkout-index", "--all", "--force", f"--prefix={dest}/"]):
            proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                raise GitError(f"{repo}: cannot check out {commit}: {proc.stderr.strip()[:300]}")
