"""A private, git-initialised copy of a task's repository for one run, and evaluation in it."""

from __future__ import annotations

import atexit
import fnmatch
import os
import re
import shutil
import stat
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from ctxbench.harness.records import Task
from ctxbench.harness.sandbox import ProcessResult, Sandbox, owner_tag, process_start, run_contained
from ctxbench.harness.paths import check_repository
from ctxbench.harness.testenv import test_argv, test_env_vars

__all__ = ["prepare_template", "remove_templates", "base_evaluation", "sweep_stale", "work_root", "Workspace", "TestOutcome", "Evaluation", "parse_junit", "GitError", "patch_paths"]

TestOutcome = Literal["passed", "failed", "error", "skipped", "missing"]

_GIT_ENV = {"GIT_AUTHOR_NAME": "ctxbench", "GIT_AUTHOR_EMAIL": "ctxbench@localhost",
            "GIT_COMMITTER_NAME": "ctxbench", "GIT_COMMITTER_EMAIL": "ctxbench@localhost",
            "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
            "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}
_IGNORED = ("__pycache__", "*.pyc", ".pytest_cache")


class GitError(RuntimeError):
    pass


def git(args: list[str], cwd: Path, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, **_GIT_ENV}
    proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, text=True, env=env)
    if check and proc.returncode != 0:
        raise GitError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc


@dataclass(frozen=True)
class Evaluation:
    """What the tests said about the agent's patch."""

    tests: dict[str, TestOutcome]
    fail_to_pass_ok: bool
    pass_to_pass_ok: bool
    test_patch_applied: bool
    output_tail: str = ""
    seconds: float = 0.0
    exit_code: int = 0
    timed_out: bool = False

    @property
    def resolved(self) -> bool:
        return self.fail_to_pass_ok and self.pass_to_pass_ok and self.test_patch_applied

    @property
    def not_collected(self) -> bool:
        """The tests did not run: no requested test was reported, or pytest stopped before running
        them (exit 2 collection errors, 3 internal error, 4 usage error, 5 nothing collected)."""
        if self.timed_out:
            return False
        return self.exit_code in (2, 3, 4, 5) or all(o == "missing" for o in self.tests.values())


def _node_key(node_id: str) -> tuple[str, str]:
    """(classname, name) that pytest's JUnit report gives the test `node_id`."""
    parts = node_id.split("::")
    module = parts[0][:-3] if parts[0].endswith(".py") else parts[0]
    classname = ".".join([module.replace("/", "."), *parts[1:-1]])
    return classname, parts[-1]


def parse_junit(xml_path: Path, test_ids: list[str]) -> dict[str, TestOutcome]:
    """Outcome of each requested test id from a JUnit XML report; absent tests are `missing`."""
    found: dict[tuple[str, str], TestOutcome] = {}
    if xml_path.exists():
        try:
            root = ET.parse(xml_path).getroot()
        except ET.ParseError:
            root = None
        for case in root.iter("testcase") if root is not None else ():
            key = (case.get("classname", ""), case.get("name", ""))
            tags = {child.tag for child in case}
            outcome: TestOutcome = ("failed" if "failure" in tags else "error" if "error" in tags
                                    else "skipped" if "skipped" in tags else "passed")
            if found.get(key) in ("failed", "error"):
                continue  # setup/teardown errors are reported as a second testcase element
            found[key] = outcome
    return {tid: found.get(_node_key(tid), "missing") for tid in test_ids}


_TEMPLATES: dict[tuple[str, str | None], Path] = {}
_TEMPLATE_STATE: dict[Path, dict[str, tuple[int, int, int]]] = {}


def work_root() -> Path:
    """Where workspaces live: $CTXBENCH_WORKDIR, else memory-backed /dev/shm when usable (copying and
    deleting a repository there is ~20x faster than on disk), else the system temp folder."""
    configured = os.environ.get("CTXBENCH_WORKDIR")
    if configured:
        Path(configured).mkdir(parents=True, exist_ok=True)
        return Path(configured)
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK):
        return shm
    return Path(tempfile.gettempdir())


_OWNED = re.compile(r"ctxbench-(?:template|run)-(\d+)\.(\d+)-")


def sweep_stale(root: Path | None = None) -> int:
    """Delete template and workspace folders left behind by ctxbench processes that no longer exist
    (a runner killed with SIGKILL, Ray workers stopped without cleanup); returns how many.

    A folder's owner is the pid and start time in its name, so a reused pid does not protect a stale
    folder. Workspaces kept with `keep_workspaces` carry no owner and are never swept.
    """
    if not os.path.isdir("/proc/self"):
        return 0  # no way to tell a live owner from a dead one here
    removed = 0
    root = root or work_root()
    for entry in os.scandir(root):
        match = _OWNED.match(entry.name)
        if not match or not entry.is_dir(follow_symlinks=False):
            continue
        pid, start = match.groups()
        if process_start(int(pid)) == start:
            continue
        shutil.rmtree(entry.path, ignore_errors=True)
        removed += 1
    return removed


def remove_templates() -> None:
    """Delete this process's template repositories."""
    for root in _TEMPLATES.values():
        shutil.rmtree(root.parent, ignore_errors=True)
    _TEMPLATES.clear()
    _TEMPLATE_STATE.clear()
    _SNAPSHOTS.clear()
    _BASE_EVALUATIONS.clear()


atexit.register(remove_templates)


def prepare_template(task: Task) -> Path:
    """The task's base repository as a git repo, built once per process and copied for each run."""
    key = (str(task.repo_dir), task.base_commit)
    cached = _TEMPLATES.get(key)
    if cached is not None and cached.exists():
        return cached
    root = Path(tempfile.mkdtemp(prefix=f"ctxbench-template-{owner_tag()}-", dir=work_root())) / "repo"
    try:
        if task.base_commit:
            root.mkdir()
            _checkout_tree(task.repo_dir, task.base_commit, root)
        else:  # links are copied as links, never followed (the taskset's loader refused any leading out)
            shutil.copytree(task.repo_dir, root, symlinks=True, ignore=shutil.ignore_patterns(*_IGNORED, ".git"))
        check_repository(root, f"task {task.id}")
        # A bare-minimum .git (no sample hooks, no reflog, one pack file) keeps each run's copy small.
        git(["init", "-q", "--template=", "-b", "main"], root)
        (root / ".git" / "info").mkdir(exist_ok=True)
        (root / ".git" / "info" / "exclude").write_text("\n".join(_IGNORED) + "\n")
        # --force: the base holds every file, those its own .gitignore lists included (a tracked
        # `pkg/version.py` that .gitignore names must still show up in the agent's patch when edited).
        git(["add", "-A", "--force"], root)
        git(["-c", "core.logAllRefUpdates=false", "commit", "-q", "--no-verify", "-m", "base"], root)
        git(["repack", "-a", "-d", "-n", "-q"], root)  # -d also prunes the loose objects now packed
    except BaseException:  # a half-built template is not left behind
        shutil.rmtree(root.parent, ignore_errors=True)
        raise
    _TEMPLATES[key] = root
    _TEMPLATE_STATE[root] = _tree_state(root)
    return root


def _checkout_tree(repo: Path, commit: str, dest: Path) -> None:
    """Write every file of `commit`'s tree into `dest`: exactly the tree (unlike `git archive`, no
    `export-ignore` or `export-subst` attribute changes it), and none of the repository's history."""
    with tempfile.TemporaryDirectory(prefix="ctxbench-index-") as tmp:
        env = {**os.environ, **_GIT_ENV, "GIT_INDEX_FILE": os.path.join(tmp, "index")}
        for args in (["read-tree", commit], ["checkout-index", "--all", "--force", f"--prefix={dest}/"]):
            proc = subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True)
            if proc.returncode != 0:
                raise GitError(f"{repo}: cannot check out {commit}: {proc.stderr.strip()[:300]}")


def patch_paths(patch: str) -> list[tuple[str | None, str | None]]:
    """(old path, new path) of each file a `git diff` patch touches; None for /dev/null."""
    out = []
    old = new = None
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            if old or new:
                out.append((old, new))
            old = new = None
        elif line.startswith("--- ") and old is None:
            old = _diff_path(line[4:], "a/")
        elif line.startswith("+++ ") and new is None:
            new = _diff_path(line[4:], "b/")
        elif line.startswith(("rename from ", "copy from ")):
            old = line.split(" from ", 1)[1]
        elif line.startswith(("rename to ", "copy to ")):
            new = line.split(" to ", 1)[1]
    if old or new:
        out.append((old, new))
    return out


def _diff_path(text: str, prefix: str) -> str | None:
    text = text.split("\t", 1)[0].rstrip()
    if text == "/dev/null":
        return None
    if text.startswith('"') and text.endswith('"'):
        text = text[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1").decode()
    return text[len(prefix):] if text.startswith(prefix) else text


def _tree_state(root: Path) -> dict[str, tuple[int, int, int]]:
    """(size, mtime in ns, mode) of every file git would see, keyed by relative path."""
    def seen(name: str) -> bool:
        return not any(fnmatch.fnmatch(name, pattern) for pattern in _IGNORED)

    state = {}
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git" and seen(d)]
        rel = os.path.relpath(folder, root)
        for name in filter(seen, names):
            st = os.lstat(os.path.join(folder, name))
            state[name if rel == "." else f"{rel}/{name}"] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return state


def _copy_tree(src: str, dst: str) -> None:
    """Copy a template: files with their mode and times (so `_tree_state` matches), links as links.

    A lean `shutil.copytree(symlinks=True)`: no extended attributes, a few system calls per file.
    """
    os.mkdir(dst)
    with os.scandir(src) as entries:
        for entry in entries:
            target = os.path.join(dst, entry.name)
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                os.symlink(os.readlink(entry.path), target)
                os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns), follow_symlinks=False)
            elif stat.S_ISDIR(st.st_mode):
                _copy_tree(entry.path, target)
            elif stat.S_ISREG(st.st_mode):
                fin = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW)
                try:
                    fout = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
                    try:
                        while os.sendfile(fout, fin, None, 1 << 30):
                            pass
                        os.fchmod(fout, stat.S_IMODE(st.st_mode))
                        os.utime(fout, ns=(st.st_atime_ns, st.st_mtime_ns))
                    finally:
                        os.close(fout)
                finally:
                    os.close(fin)
            else:
                raise GitError(f"{entry.path}: not a regular file, folder or symlink")
    os.chmod(dst, stat.S_IMODE(os.stat(src).st_mode))


def _snapshot(folder: str, prefix: str = "", out: dict[str, tuple[int, ...]] | None = None) -> dict[str, tuple[int, ...]]:
    """Every entry under `folder`, .git included: files and links by (size, mtime, mode), folders by
    mode (a copy does not keep their mtimes)."""
    out = {} if out is None else out
    with os.scandir(folder) as entries:
        for entry in entries:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                out[prefix + entry.name] = (st.st_mode,)
                _snapshot(entry.path, f"{prefix}{entry.name}/", out)
            else:
                out[prefix + entry.name] = (st.st_size, st.st_mtime_ns, st.st_mode)
    return out


_SNAPSHOTS: dict[Path, dict[str, tuple[int, ...]] | None] = {}


def _template_snapshot(template: Path) -> dict[str, tuple[int, ...]] | None:
    """The template's `_snapshot`, or None when it holds files git ignores (evaluation removes those)."""
    if template not in _SNAPSHOTS:
        ignored = git(["clean", "-n", "-d", "-X"], template).stdout.strip()
        _SNAPSHOTS[template] = None if ignored else _snapshot(str(template))
    return _SNAPSHOTS[template]


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
    """`diff` has staged every change (nothing writes between it and `evaluate`)."""

    @classmethod
    def create(cls, task: Task, python: str, parent: Path | None = None, sandbox: Sandbox = Sandbox(),
               output_cap: int = 200_000, keep: bool = False) -> Workspace:
        """A fresh copy of the task's template; `keep` names it so that `sweep_stale` leaves it alone."""
        owner = "kept" if keep else f"run-{owner_tag()}"
        scratch = Path(tempfile.mkdtemp(prefix=f"ctxbench-{owner}-{task.id[:40]}-", dir=parent or work_root()))
        root = scratch / "repo"
        template = prepare_template(task)
        _copy_tree(str(template), str(root))
        return cls(root, task, python, sandbox, output_cap, scratch, _TEMPLATE_STATE.get(template), template)

    def diff(self) -> str:
        """The agent's changes against the base commit, new files included.

        When every file still has the template's size, mtime and mode (as after a run that only
        read), the patch is empty without asking git; any write changes the mtime.
        """
        if self._base_state is not None and _tree_state(self.root) == self._base_state:
            return ""
        git(["add", "-A"], self.root)
        self._staged = True
        return git(["diff", "--cached", "--binary", "--no-color", "HEAD"], self.root).stdout

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
        ids = list(dict.fromkeys([*self.task.FAIL_TO_PASS, *self.task.PASS_TO_PASS]))
        assert self._scratch is not None
        junit = self._scratch / "junit.xml"
        junit.unlink(missing_ok=True)
        result = self.run_tests(self._evaluation_targets(), timeout_s, junit)
        if result.output.startswith("bwrap: execvp"):  # the jail could not start the command: not the agent's fault
            raise RuntimeError(f"the test command cannot start in the sandbox: {result.output.strip()[:300]}")
        tests = parse_junit(junit, ids)
        f2p = all(tests[t] == "passed" for t in self.task.FAIL_TO_PASS)
        p2p = all(tests[t] == "passed" for t in self.task.PASS_TO_PASS)
        return Evaluation(tests, f2p, p2p, applied, result.output[-4000:], result.seconds, result.exit_code,
                          result.timed_out)

    def _untouched(self) -> bool:
        """Whether the workspace, .git included, is still an exact copy of a template that holds no
        ignored files: then staging, cleaning and resetting files to the base would change nothing."""
        if self._template is None:
            return False
        snapshot = _template_snapshot(self._template)
        return snapshot is not None and _snapshot(str(self.root)) == snapshot

    def cleanup(self) -> None:
        if self._scratch is not None:
            shutil.rmtree(self._scratch, ignore_errors=True)


_BASE_EVALUATIONS: dict[tuple[Path, str, str, float, Sandbox], Evaluation] = {}


def base_evaluation(task: Task, python: str, timeout_s: float, sandbox: Sandbox,
                    ws: Workspace | None = None) -> Evaluation:
    """The evaluation of the task's base (its hidden tests applied), run once per template (so once
    per task and process for an experiment), interpreter, timeout and sandbox; later calls return
    it with `seconds` 0, since no test ran for them.

    A run whose patch is empty is judged on exactly the base: staging its workspace leaves out only
    the files git ignores, and evaluation deletes those first. Such a run passes its own workspace
    as `ws` (the first one is evaluated there); without `ws` a fresh workspace is made.
    """
    key = (prepare_template(task), task.id, python, timeout_s, sandbox)
    cached = _BASE_EVALUATIONS.get(key)
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
    _BASE_EVALUATIONS[key] = evaluation
    return evaluation
