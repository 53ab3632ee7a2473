"""A SWE-bench-style taskset from real libraries on PyPI, checked end to end.

Downloads the source distributions of two pure-Python libraries (toolz, more-itertools) at run time,
makes each a git repository `<owner>__<name>` with history (the upstream files; a commit injecting
three bugs, which is every instance's `base_commit`; one fix commit per bug on its own branch, with a
regression test), and writes `instances.jsonl` (FAIL_TO_PASS / PASS_TO_PASS computed by running the
test files before and after each fix, JSON-encoded as SWE-bench stores them) and
`instances.environment.yaml` pinning the test environment. One repository's `.gitignore` lists the
tracked file that holds one of the bugs (`more_itertools/recipes.py`), the case where an edit used to
vanish from the agent's patch. Then:

1. `ctxbench tasks validate` on the taskset (with the environment declared);
2. `ctxbench run`: the simulator (a stand-in for a model, not a real one), baseline strategy,
   1 repeat, bubblewrap jail;
3. `ctxbench export-predictions`;
4. every resolved run's exported patch applied to a fresh clone at `base_commit`, the files the test
   patch touches reset and the test patch applied, and the test files run with the pinned
   environment in a venv made here (not ctxbench's): every FAIL_TO_PASS and PASS_TO_PASS must pass.

Nothing of the libraries is kept in this repository. Prints one line per step and, last:

    instances=<n> valid=<v> runs=<r> resolved=<k> patches_checked=<c> patches_passing=<p>

Usage: python benchmarks/swebench_real.py [--dir /work/swe_check]   (the folder is emptied first)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import yaml

PINNED = ["pytest==8.3.5"]
"""The test environment, declared in instances.environment.yaml and used again for the final check."""

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "maintainer", "GIT_AUTHOR_EMAIL": "maintainer@example.org",
           "GIT_COMMITTER_NAME": "maintainer", "GIT_COMMITTER_EMAIL": "maintainer@example.org",
           "GIT_CONFIG_NOSYSTEM": "1"}


@dataclass(frozen=True)
class Bug:
    file: str
    fixed: str
    """The upstream text, which the bug commit replaces with `broken`."""
    broken: str
    test_file: str
    test: str
    """A regression test appended to `test_file` by the fix commit (the instance's test_patch)."""
    statement: str


@dataclass(frozen=True)
class Library:
    repo: str
    """owner/name"""
    dist: str
    version: str
    gitignore: str
    tracked_ignored: tuple[str, ...]
    bugs: tuple[Bug, ...]


LIBRARIES = (
    Library("pytoolz/toolz", "toolz", "0.12.1", "*.egg-info/\nbuild/\n__pycache__/\n", ("toolz.egg-info",), (
        Bug("toolz/itertoolz.py", "yield prev[:len(seq) % n]", "yield prev[:len(seq) % n - 1]",
            "toolz/tests/test_itertoolz.py",
            "\n\ndef test_partition_all_short_last_chunk_of_a_list():\n"
            "    assert list(partition_all(3, [1, 2, 3, 4, 5])) == [(1, 2, 3), (4, 5)]\n"
            "    assert list(partition_all(4, list('abcdef'))) == [tuple('abcd'), tuple('ef')]\n",
            "partition_all loses items of the last chunk for lists\n\n"
            "    >>> from toolz import partition_all\n"
            "    >>> list(partition_all(3, [1, 2, 3, 4, 5]))\n"
            "    [(1, 2, 3), (4,)]\n\n"
            "The last chunk should be (4, 5). With an iterator instead of a list the result is right:\n"
            "list(partition_all(3, iter([1, 2, 3, 4, 5]))) gives [(1, 2, 3), (4, 5)]."),
        Bug("toolz/dicttoolz.py", "    rv = factory()\n    for k, v in d.items():\n        if predicate(v):",
            "    rv = dict()\n    for k, v in d.items():\n        if predicate(v):",
            "toolz/tests/test_dicttoolz.py",
            "\n\ndef test_valfilter_returns_the_factory_type():\n"
            "    from collections import OrderedDict\n"
            "    out = valfilter(lambda v: v > 1, {1: 1, 2: 2, 3: 3}, factory=OrderedDict)\n"
            "    assert type(out) is OrderedDict and out == OrderedDict([(2, 2), (3, 3)])\n",
            "valfilter ignores its factory argument\n\n"
            "    >>> from collections import OrderedDict\n"
            "    >>> from toolz import valfilter\n"
            "    >>> type(valfilter(lambda v: v > 1, {1: 1, 2: 2}, factory=OrderedDict))\n"
            "    <class 'dict'>\n\n"
            "keyfilter and itemfilter return the factory's type; valfilter always returns a plain dict."),
    )),
    Library("more-itertools/more-itertools", "more-itertools", "10.2.0",
            "*.egg-info/\nbuild/\n__pycache__/\nmore_itertools/recipes.py\n", ("more_itertools/recipes.py",), (
        Bug("more_itertools/recipes.py", "    return sum(map(pred, iterable))", "    return sum(map(bool, iterable))",
            "tests/test_recipes.py",
            "\n\ndef test_quantify_uses_the_predicate():\n"
            "    assert mi.quantify([1, 2, 3, 4], lambda x: x > 2) == 2\n",
            "quantify ignores pred\n\n"
            "    >>> import more_itertools as mi\n"
            "    >>> mi.quantify([1, 2, 3, 4], lambda x: x > 2)\n"
            "    4\n\n"
            "Expected 2: the docs say quantify returns how many times the predicate is true, but it\n"
            "counts the truthy items whatever predicate is passed."),
    )),
)


def sh(args: list[str], cwd: Path | None = None, stdin: str | None = None, check: bool = True,
       env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run(args, cwd=cwd, input=stdin, capture_output=True, text=True, env=env or GIT_ENV)
    if check and proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(args)}\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return proc


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    return sh(["git", *args], repo, stdin).stdout


def outcomes(python: str, clone: Path, files: list[str]) -> dict[str, str]:
    """Outcome of every test in `files`, read from pytest's -rA summary (as SWE-bench reads its logs)."""
    proc = sh([python, "-m", "pytest", "-rA", "-p", "no:cacheprovider", *files], clone, check=False,
              env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    found = {}
    for line in proc.stdout.splitlines():
        match = re.match(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S.*?)(?: - .*)?$", line)
        if match and "::" in match.group(2):
            found[match.group(2)] = match.group(1).lower()
    return found


def make_env(folder: Path) -> str:
    sh([sys.executable, "-m", "venv", str(folder)])
    python = str(folder / "bin" / "python")
    sh([python, "-m", "pip", "install", "-q", *PINNED])
    return python


def build_repository(lib: Library, work: Path, check_python: str) -> list[dict]:
    """The library's git repository with the bug and fix commits; its instances."""
    downloads = work / "downloads"
    sh([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", str(downloads),
        f"{lib.dist}=={lib.version}"])
    archive = next(downloads.glob(f"{lib.dist.replace('-', '[-_]')}-{lib.version}.tar.gz"))
    repo = work / "repos" / lib.repo.replace("/", "__")
    with tarfile.open(archive) as tar:
        top = tar.getnames()[0].split("/")[0]
        tar.extractall(work / "unpacked", filter="data")
    shutil.move(work / "unpacked" / top, repo)
    (repo / ".gitignore").write_text(lib.gitignore)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "add", "--force", *lib.tracked_ignored)
    git(repo, "commit", "-qm", f"{lib.dist} {lib.version} as released")
    for bug in lib.bugs:
        text = (repo / bug.file).read_text()
        assert text.count(bug.fixed) == 1, (bug.file, bug.fixed)
        (repo / bug.file).write_text(text.replace(bug.fixed, bug.broken))
    git(repo, "commit", "-qam", "refactor")
    base = git(repo, "rev-parse", "HEAD").strip()
    rows = []
    for n, bug in enumerate(lib.bugs, 1):
        git(repo, "checkout", "-q", "-b", f"fix-{n}", base)
        (repo / bug.file).write_text((repo / bug.file).read_text().replace(bug.broken, bug.fixed))
        with (repo / bug.test_file).open("a") as fh:
            fh.write(bug.test)
        git(repo, "commit", "-qam", f"fix: {bug.statement.splitlines()[0]}")
        patch = git(repo, "diff", base, "HEAD", "--", bug.file)
        test_patch = git(repo, "diff", base, "HEAD", "--", bug.test_file)
        git(repo, "checkout", "-q", "main")
        scratch = work / "scratch"
        shutil.rmtree(scratch, ignore_errors=True)
        git(repo, "worktree", "add", "-q", "--detach", str(scratch), base)
        git(scratch, "apply", stdin=test_patch)
        before = outcomes(check_python, scratch, [bug.test_file])
        git(scratch, "apply", stdin=patch)
        after = outcomes(check_python, scratch, [bug.test_file])
        git(repo, "worktree", "remove", "--force", str(scratch))
        fail_to_pass = sorted(t for t, o in after.items() if o == "passed" and before.get(t) in ("failed", "error"))
        pass_to_pass = sorted(t for t, o in after.items() if o == "passed" and before.get(t) == "passed")
        assert fail_to_pass, f"{lib.repo} bug {n}: no test fails before the fix"
        rows.append({"instance_id": f"{lib.repo.replace('/', '__')}-{n}", "repo": lib.repo, "base_commit": base,
                     "patch": patch, "test_patch": test_patch, "problem_statement": bug.statement,
                     "FAIL_TO_PASS": json.dumps(fail_to_pass), "PASS_TO_PASS": json.dumps(pass_to_pass),
                     "version": lib.version})
    return rows


def ctxbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", "from ctxbench.harness.cli import main; main()", *args],
                          capture_output=True, text=True)


def check_prediction(row: dict, patch: str, work: Path, python: str) -> tuple[bool, str]:
    """SWE-bench's evaluation of one prediction, in a fresh clone at base_commit."""
    clone = work / "fresh" / row["instance_id"]
    sh(["git", "clone", "-q", str(work / "repos" / row["repo"].replace("/", "__")), str(clone)])
    git(clone, "checkout", "-q", row["base_commit"])
    applied = sh(["git", "apply", "-"], clone, stdin=patch, check=False)
    if applied.returncode != 0:
        return False, f"model_patch does not apply: {applied.stderr.strip()}"
    test_files = sorted(set(re.findall(r"^diff --git a/.* b/(.*)$", row["test_patch"], re.M)))
    git(clone, "checkout", row["base_commit"], "--", *test_files)
    git(clone, "apply", "-", stdin=row["test_patch"])
    found = outcomes(python, clone, test_files)
    wanted = json.loads(row["FAIL_TO_PASS"]) + json.loads(row["PASS_TO_PASS"])
    bad = [f"{t} ({found.get(t, 'missing')})" for t in wanted if found.get(t) != "passed"]
    return not bad, f"{len(wanted) - len(bad)}/{len(wanted)} FAIL_TO_PASS+PASS_TO_PASS passed" + (
        f"; not passing: {', '.join(bad[:5])}" if bad else "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/work/swe_check"))
    args = parser.parse_args()
    work = args.dir.resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    python = make_env(work / "check-env")
    print(f"check environment: {python} ({', '.join(PINNED)})")

    rows = [row for lib in LIBRARIES for row in build_repository(lib, work, python)]
    instances = work / "taskset" / "instances.jsonl"
    instances.parent.mkdir()
    instances.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (instances.parent / "instances.environment.yaml").write_text(yaml.safe_dump({"requirements": PINNED}))
    for r in rows:
        print(f"instance {r['instance_id']}: FAIL_TO_PASS {len(json.loads(r['FAIL_TO_PASS']))}, "
              f"PASS_TO_PASS {len(json.loads(r['PASS_TO_PASS']))}")

    validated = ctxbench("tasks", "validate", str(instances), "--repos", str(work / "repos"))
    print(validated.stdout.rstrip())
    valid = sum(line.startswith("ok ") for line in validated.stdout.splitlines())

    experiment = work / "experiment.yaml"
    experiment.write_text(yaml.safe_dump({
        "name": "swebench-real", "taskset": {"path": str(instances), "repos": str(work / "repos")},
        "strategies": [{"name": "baseline"}], "repeats": 1, "workers": 2, "sandbox": "bwrap"}))
    out = work / "results"
    ran = ctxbench("run", str(experiment), "--output", str(out), "--no-report")
    if ran.returncode != 0:
        raise SystemExit(f"ctxbench run failed:\n{ran.stdout}\n{ran.stderr}")
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    for run in runs:
        print(f"run {run['task_id']}: resolved={run['resolved']} failure_reason={run['failure_reason']} "
              f"turns={run['turns']} (simulated model)")

    exported = ctxbench("export-predictions", str(out))
    if exported.returncode != 0:
        raise SystemExit(f"export-predictions failed:\n{exported.stdout}\n{exported.stderr}")
    predictions = {}
    for path in exported.stdout.split():
        for line in Path(path).read_text().splitlines():
            p = json.loads(line)
            predictions[p["instance_id"]] = p["model_patch"]
    by_id = {r["instance_id"]: r for r in rows}
    checked = passing = 0
    for run in runs:
        if not run["resolved"]:
            continue
        checked += 1
        ok, detail = check_prediction(by_id[run["task_id"]], predictions[run["task_id"]], work, python)
        passing += ok
        print(f"fresh clone {run['task_id']}: {'PASS' if ok else 'FAIL'} ({detail})")
    print(f"instances={len(rows)} valid={valid} runs={len(runs)} resolved={sum(r['resolved'] for r in runs)} "
          f"patches_checked={checked} patches_passing={passing}")


if __name__ == "__main__":
    main()
