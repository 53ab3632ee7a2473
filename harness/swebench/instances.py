"""SWE-bench interoperability: instances from JSONL, predictions out."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from pydantic import ValidationError

from ctxbench.harness.environments import registry as environments
from ctxbench.harness.errors import InputError, validation_problems
from ctxbench.harness.paths import inside, name_problem
from ctxbench.harness.records import Manifest, Task, Taskset, TasksetEnvironment
from ctxbench.harness.records.taskset_records import SwebenchGrading
from ctxbench.harness.records.results import read_results
from ctxbench.harness.records.results_folder import read_manifest
from ctxbench.harness.unidiff import patch_paths
from ctxbench.harness.yamlfile import read_text, read_yaml

__all__ = ["load_swebench", "export_predictions", "test_directives", "environment_file", "DEFAULT_TEST_CMD",
           "swebench_image", "task_environment"]

_REQUIRED = ("instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement",
             "FAIL_TO_PASS", "PASS_TO_PASS")
DEFAULT_TEST_CMD = "python -m pytest -rA"
"""`test_cmd` of an instance that names none (SWE-bench's own default for pytest repositories)."""
NON_TEST_SUFFIXES = (".json", ".png", ".csv", ".txt", ".md", ".jpg", ".jpeg", ".gif", ".svg",
                     ".pkl", ".yml", ".yaml", ".toml", ".xml", ".cfg", ".ini")
"""Files a test patch touches that are data, not tests to run."""


def _id_list(value: Any, where: str) -> tuple[str, ...]:
    """SWE-bench files store test lists either as lists or as JSON-encoded strings."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError as exc:
            raise InputError(f"{where}: not a list of test ids") from exc
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: expected a list of test ids")
    return tuple(value)


def test_directives(test_patch: str) -> tuple[str, ...]:
    """The test files a test patch adds or changes (data files left out): what SWE-bench runs."""
    files = [new for _, new in patch_paths(test_patch) if new]
    return tuple(dict.fromkeys(f for f in files if not f.lower().endswith(NON_TEST_SUFFIXES)))


def _environment(value: Any, where: str) -> TasksetEnvironment:
    """An `environment` mapping read at `where` (a key path, or `<file>:` for a whole file), its backend
    an installed one."""
    if not isinstance(value, dict):
        raise InputError(f"{where.rstrip(':')}: expected an object with `python` and/or `requirements`")
    try:
        env = TasksetEnvironment.model_validate(value)
    except ValidationError as exc:
        raise InputError(f"{where.rstrip(':')}: {'; '.join(validation_problems(exc))}") from exc
    environments.check_backend(env, where)
    return env


def swebench_image(instance_id: str, namespace: str = "swebench") -> str:
    """The name SWE-bench publishes an instance's evaluation image under (`__` spelled `_1776_`)."""
    return f"{namespace}/sweb.eval.x86_64.{instance_id.lower()}:latest".replace("__", "_1776_")


def task_environment(own: TasksetEnvironment | None, default: TasksetEnvironment, where: str,
                     default_where: str) -> TasksetEnvironment:
    """The environment a native task runs in, its own (at `where`.environment) or else the taskset's (at
    `default_where`), checked against the installed environments (ctxbench.harness.environments.registry).

    Raises:
        InputError: an unknown backend (naming the installed ones), or keys that backend does not take.
    """
    environments.check_backend(default, default_where)
    env = own or default
    environments.check_setting(env, f"{where}.environment" if own is not None else default_where)
    return env


def _row_environment(row: dict[str, Any], taskset_env: TasksetEnvironment, where: str,
                     file_where: str) -> TasksetEnvironment:
    """The instance's environment: its own, else the file-wide one; for an environment that runs
    containers, the image is the instance's own `environment.image`, else its `image` field, else the
    file-wide image, else SWE-bench's published name for the instance."""
    own = _environment(row["environment"], f"{where}.environment") if row.get("environment") else None
    env = own or taskset_env
    if environments.get_environment(env.backend).containers and not (own is not None and own.image):
        image = row.get("image") or env.image or swebench_image(str(row["instance_id"]))
        env = env.model_copy(update={"image": str(image)})
    environments.check_setting(env, f"{where}.environment" if own is not None else file_where)
    return env


def _grading(row: dict[str, Any], env: TasksetEnvironment) -> SwebenchGrading | None:
    """swebench's grading of an instance that carries an eval script and a log parser, in a container."""
    containers = environments.get_environment(env.backend).containers
    if not containers or not row.get("eval_script") or not row.get("log_parser"):
        return None
    return SwebenchGrading(str(row["eval_script"]), str(row["log_parser"]), str(row.get("version") or ""),
                           str(row.get("eval_type") or "pass_and_fail"))


def environment_file(path: Path) -> Path:
    """The optional taskset-wide environment of a JSONL taskset: `<name>.environment.yaml` beside it."""
    return path.with_name(f"{path.stem}.environment.yaml")


def _taskset_environment(path: Path) -> TasksetEnvironment:
    file = environment_file(path)
    if not file.exists():
        return TasksetEnvironment()
    return _environment(read_yaml(file, "environment file") or {}, f"{file}:")


def load_swebench(path: Path, repos: Path | None) -> Taskset:
    """Tasks from SWE-bench-style instances; `repos` holds git repositories named `<owner>__<name>`.

    The schema (required and optional fields, defaults) is in docs/swebench.md.
    """
    repos = repos or path.parent / "repos"
    if not repos.is_dir():
        raise InputError(f"{path}: repositories folder {repos} not found (pass --repos / taskset.repos)")
    environment = _taskset_environment(path)
    tasks, seen = [], set()
    checked: set[tuple[Path, str]] = set()
    for n, line in enumerate(read_text(path, "JSONL file").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            row = json.loads(line)
        except ValueError as exc:
            raise InputError(f"{where}: not valid JSON: {exc}") from exc
        if not isinstance(row, dict):
            raise InputError(f"{where}: expected a JSON object (one SWE-bench instance per line)")
        missing = [k for k in _REQUIRED if k not in row]
        if missing:
            raise InputError(f"{where}: missing keys {', '.join(missing)}")
        iid = row["instance_id"]
        if iid in seen:
            raise InputError(f"{where}: duplicate instance_id {iid!r}")
        seen.add(iid)
        repo_dir = repos / str(row["repo"]).replace("/", "__")
        if not inside(repo_dir, repos) or repo_dir.resolve() == repos.resolve():
            raise InputError(f"{where}.repo: {row['repo']!r} resolves to {repo_dir.resolve()}, outside the "
                             f"repositories folder {repos}")
        if not (repo_dir / ".git").exists():
            raise InputError(f"{where}.repo: no git repository {repo_dir}")
        check = subprocess.run(["git", "cat-file", "-e", f"{row['base_commit']}^{{commit}}"], cwd=repo_dir,
                               capture_output=True)
        if check.returncode != 0:
            raise InputError(f"{where}.base_commit: {row['base_commit']} is not a commit of {repo_dir}")
        if (repo_dir, row["base_commit"]) not in checked:
            _check_tree(repo_dir, row["base_commit"], f"{where}.repo")
            checked.add((repo_dir, row["base_commit"]))
        fail_to_pass = _id_list(row["FAIL_TO_PASS"], f"{where}.FAIL_TO_PASS")
        if not fail_to_pass:
            raise InputError(f"{where}.FAIL_TO_PASS: empty (a task needs at least one test that the fix makes pass)")
        cmd = row.get("test_cmd") or DEFAULT_TEST_CMD
        test_patch = row["test_patch"] or None
        test_files = (_id_list(row["test_files"], f"{where}.test_files") if row.get("test_files")
                      else test_directives(test_patch or ""))
        env = _row_environment(row, environment, where, f"{environment_file(path)}:")
        tasks.append(Task(
            id=iid, repo_dir=repo_dir.resolve(), problem_statement=row["problem_statement"].strip(),
            test_cmd=tuple(shlex.split(cmd)) if isinstance(cmd, str) else tuple(cmd),
            FAIL_TO_PASS=fail_to_pass, PASS_TO_PASS=_id_list(row["PASS_TO_PASS"], f"{where}.PASS_TO_PASS"),
            patch=row["patch"], test_patch=test_patch, test_files=test_files, tags=tuple(row.get("tags", ())),
            base_commit=row["base_commit"], repo_name=row["repo"], runs_in=env, swebench=_grading(row, env),
            environment=_environment(row["environment"], f"{where}.environment") if row.get("environment") else None,
        ))
    if not tasks:
        raise InputError(f"{path}: no instances")
    return Taskset(path.stem, path.resolve(), tuple(tasks), environment)


def _check_tree(repo: Path, commit: str, where: str) -> None:
    """Refuse a commit whose tree a workspace cannot be made of: an object that is missing or
    corrupt, a file name that is not UTF-8 (`name_problem`), or a symlink leading outside the
    repository (the workspace is that tree, links kept as links). Reads every blob of the tree once.

    Raises:
        InputError: naming the object, file or link.
    """
    at = f"in {repo} at {commit[:12]}"
    listing = subprocess.run(["git", "ls-tree", "-r", "-z", commit], cwd=repo, capture_output=True)
    if listing.returncode != 0:
        raise InputError(f"{where}: cannot read the tree {at}: {_git_error(listing.stderr)}")
    blobs: list[tuple[bytes, bytes, bool]] = []  # (sha, name, is a link)
    for entry in filter(None, listing.stdout.split(b"\0")):
        meta, _, name = entry.partition(b"\t")
        mode, kind, sha = meta.split()
        problem = name_problem(name)
        if problem:
            raise InputError(f"{where}: {at}: {problem}")
        if kind == b"blob":
            blobs.append((sha, name, mode == b"120000"))
    links = _read_blobs(repo, blobs, f"{where}: a file {at} cannot be read")
    for link, target in links:
        resolved = os.path.normpath(os.path.join("/repo", os.path.dirname(link), target))
        if os.path.isabs(target) or not (resolved + "/").startswith("/repo/"):
            raise InputError(f"{where}: symlink {link} -> {target} {at} leads outside the repository; a task "
                             "repository may only link inside itself")


def _read_blobs(repo: Path, blobs: list[tuple[bytes, bytes, bool]], where: str) -> list[tuple[str, str]]:
    """Read every blob through one `git cat-file --batch` (which inflates each in full, so a corrupt
    object fails); returns (name, target) of the symlinks.

    Raises:
        InputError: `where`, the file and git's words, when an object is missing or damaged.
    """
    links: list[tuple[str, str]] = []
    if not blobs:
        return links
    read = subprocess.Popen(["git", "cat-file", "--batch"], cwd=repo, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert read.stdin is not None and read.stdout is not None and read.stderr is not None
    feeder = threading.Thread(target=_feed, args=(read.stdin, [sha for sha, _, _ in blobs]), daemon=True)
    feeder.start()
    failed: tuple[bytes, bytes] | None = None
    with read:
        for sha, name, link in blobs:
            header = read.stdout.readline().split()
            if len(header) != 3:  # "<sha> missing", or nothing when git stopped at a damaged object
                failed = (name, b" ".join(header))
                break
            size = int(header[2])
            if link:
                links.append((name.decode(), read.stdout.read(size + 1)[:size].decode(errors="replace")))
            else:
                _skip(read.stdout, size + 1)
        read.stdout.read()
        stderr = read.stderr.read()
    feeder.join()
    if failed is None and read.returncode != 0:
        failed = (blobs[-1][1], b"")
    if failed is not None:
        why = " ".join((stderr or failed[1]).decode(errors="replace").split())[:300]
        raise InputError(f"{where} ({failed[0].decode()}): {why}; the repository is damaged")
    return links


def _feed(stdin: IO[bytes], shas: list[bytes]) -> None:
    try:
        for sha in shas:
            stdin.write(sha + b"\n")
        stdin.close()
    except OSError:  # git stopped at a damaged object
        pass


def _skip(stream: IO[bytes], size: int) -> bytes:
    while size > 0:
        chunk = stream.read(min(size, 1 << 20))
        if not chunk:
            break
        size -= len(chunk)
    return b""


def _git_error(stderr: bytes) -> str:
    return " ".join(stderr.decode(errors="replace").split())[:300]


def export_predictions(run_dir: Path, repeat: int | None = None) -> list[Path]:
    """Write `predictions/<strategy>.r<repeat>.jsonl` (instance_id, model_name_or_path, model_patch),
    one file per strategy and repeat: every repeat, or only `repeat`."""
    model = read_manifest(run_dir).model_name
    groups: dict[tuple[str, int], list[dict[str, str]]] = {}
    for r in read_results(run_dir / "runs.jsonl"):
        if repeat is None or r.repeat == repeat:
            groups.setdefault((r.strategy, r.repeat), []).append(
                {"instance_id": r.task_id, "model_name_or_path": f"{model}+{r.strategy}", "model_patch": r.patch})
    if not groups:
        raise InputError(f"{run_dir}: no runs" + ("" if repeat is None else f" with repeat {repeat}"))
    out_dir = run_dir / "predictions"
    out_dir.mkdir(exist_ok=True)
    paths = []
    for (strategy, k), rows in sorted(groups.items()):
        path = out_dir / f"{strategy.replace('/', '_')}.r{k}.jsonl"
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
        paths.append(path)
    return paths
