"""The one unified-diff parser: the paths a patch touches and its hunks, read from real `git diff` output."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.unidiff import parse_patch, patch_paths

ROOT = Path(__file__).resolve().parents[2]


def _git_diff(tmp_path: Path, before: dict[str, str], after: dict[str, str | None]) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True, text=True,
                              env=env).stdout

    git("init", "-q")
    for name, text in before.items():
        (tmp_path / name).write_text(text)
    git("add", "-A")
    git("commit", "-qm", "base")
    for name, new_text in after.items():
        if new_text is None:
            (tmp_path / name).unlink()
        else:
            (tmp_path / name).write_text(new_text)
    git("add", "-A")
    return git("diff", "--cached", "-M", "HEAD")


def test_paths_of_a_new_a_deleted_a_renamed_and_a_quoted_file(tmp_path):
    body = "".join(f"line {i}\n" for i in range(20))
    patch = _git_diff(tmp_path, {"old.py": "a = 1\n", "moved.py": body, "kept.py": "k = 1\n"},
                      {"old.py": None, "moved.py": None, "renamed.py": body, "tab\tname.py": "t = 1\n",
                       "kept.py": "k = 2\n"})
    assert sorted(patch_paths(patch), key=str) == sorted(
        [("old.py", None), ("moved.py", "renamed.py"), (None, "tab\tname.py"), ("kept.py", "kept.py")], key=str)


def test_hunks_of_a_changed_and_a_deleted_file(tmp_path):
    patch = _git_diff(tmp_path, {"gone.py": "x = 1\ny = 2\n", "calc.py": "def f():\n    return 1\n"},
                      {"gone.py": None, "calc.py": "def f():\n    return 2\n"})
    hunks = {h.path: h for h in parse_patch(patch)}
    assert set(hunks) == {"calc.py", "gone.py"}  # a deleted file's hunk names it, not /dev/null
    assert hunks["calc.py"].old_text == "def f():\n    return 1" and hunks["calc.py"].new_text == "def f():\n    return 2"
    assert hunks["gone.py"].old_text.startswith("x = 1\ny = 2") and not hunks["gone.py"].new_file


def test_every_builtin_gold_patch_parses_into_hunks_of_the_files_it_names():
    for name in ("smoke", "context-pressure"):
        for task in load_taskset(ROOT / "tasksets" / name).tasks:
            hunks = parse_patch(task.patch)
            assert hunks, task.id
            assert {h.path for h in hunks} == {new for _, new in patch_paths(task.patch) if new}, task.id
