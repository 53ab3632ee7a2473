"""SWE-bench instances treated as the SWE-bench harness treats them: the exact base tree, test_patch
applied over a reset of the files it touches, the test files as the default scope, per-instance test
environments, collection failures blamed on the taskset, predictions per repeat."""

import json
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.swebench.instances import environment_file
from ctxbench.harness.tasks.taskset import load_taskset
from ctxbench.harness.environments.workspace import Workspace

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1"}


def git(cwd, *args, stdin=None):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True, input=stdin,
                          env={**GIT_ENV, "HOME": str(cwd)}).stdout


def diff_of(repo, change):
    """The `git diff` that `change(repo)` makes, with the repository put back afterwards."""
    change(repo)
    git(repo, "add", "-A", "--force")
    patch = git(repo, "diff", "--cached", "HEAD")
    git(repo, "reset", "-q", "--hard", "HEAD")
    return patch


LIB = '''\
def greet(name):
    return "hello " + name


def shout(name):
    return greet(name)
'''

TESTS = '''\
from lib import greet


def test_greet():
    assert greet("a") == "hello a"
'''


def make_repo(root, files, ignored=()):
    """A git repository `owner__lib` whose one commit tracks `files`, `ignored` ones included (added
    with --force while .gitignore lists them); a later commit holds the fix."""
    repo = root / "repos" / "owner__lib"
    repo.mkdir(parents=True)
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    if ignored:
        git(repo, "add", "--force", *ignored)
    git(repo, "commit", "-qm", "base")
    return repo, git(repo, "rev-parse", "HEAD").strip()


def fix_patch(repo):
    return diff_of(repo, lambda r: (r / "lib.py").write_text(LIB.replace("return greet(name)",
                                                                       "return greet(name).upper()")))


def shout_test_patch(repo):
    return diff_of(repo, lambda r: (r / "test_lib.py").write_text(
        TESTS + "\n\ndef test_shout():\n    from lib import shout\n    assert shout('a') == 'HELLO A'\n"))


def write_instances(root, rows):
    path = root / "instances.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def instance(base, patch, test_patch, **extra):
    row = {"instance_id": "owner__lib-1", "repo": "owner/lib", "base_commit": base, "patch": patch,
           "test_patch": test_patch, "problem_statement": "shout() does not shout.",
           "FAIL_TO_PASS": ["test_lib.py::test_shout"], "PASS_TO_PASS": ["test_lib.py::test_greet"]}
    row.update(extra)
    return row


# -- 1. the exact base tree ---------------------------------------------------------------------

def test_tracked_but_ignored_files_are_in_the_base_and_their_edits_in_the_patch(tmp_path):
    files = {"lib.py": LIB, "test_lib.py": TESTS, ".gitignore": "version.py\nci/\n",
             "version.py": "VERSION = '1.0'\n", "ci/build.sh": "echo build\n",
             ".gitattributes": "export.txt export-ignore\n", "export.txt": "kept\n"}
    repo, base = make_repo(tmp_path, files, ignored=["version.py", "ci/build.sh"])
    path = write_instances(tmp_path, [instance(base, fix_patch(repo), shout_test_patch(repo))])
    task = load_taskset(path, tmp_path / "repos").tasks[0]
    ws = Workspace.create(task, sys.executable)
    try:
        tracked = set(git(ws.root, "ls-files").split())
        assert tracked == set(git(repo, "ls-tree", "-r", "--name-only", base).split())
        assert {"version.py", "ci/build.sh", "export.txt"} <= tracked
        (ws.root / "version.py").write_text("VERSION = '1.1'\n")
        (ws.root / "ci" / "build.sh").unlink()
        (ws.root / "made.log").write_text("an ignored new file\n")
        (ws.root / ".gitignore").write_text("version.py\nci/\n*.log\n")
        patch = ws.diff()
        assert "+VERSION = '1.1'" in patch
        assert "deleted file mode" in patch and "ci/build.sh" in patch
        assert "made.log" not in patch
        ws.evaluate(60)
        assert not (ws.root / "made.log").exists(), "evaluation sees what the patch holds, not ignored leftovers"
    finally:
        ws.cleanup()


def test_native_taskset_repository_keeps_files_its_gitignore_lists(tmp_path, smoke_dir):
    import shutil

    shutil.copytree(smoke_dir, tmp_path / "ts")
    calc = tmp_path / "ts" / "repos" / "calc"
    (calc / ".gitignore").write_text("calc/units.py\n")
    task = next(t for t in load_taskset(tmp_path / "ts").tasks if t.repo_name == "calc")
    ws = Workspace.create(task, sys.executable)
    try:
        units = ws.root / "calc" / "units.py"
        assert "calc/units.py" in git(ws.root, "ls-files").split()
        units.write_text(units.read_text() + "\n# edited\n")
        assert "+# edited" in ws.diff()
    finally:
        ws.cleanup()


# -- 2. test_patch semantics and test scope -----------------------------------------------------

def test_test_patch_applies_over_the_agents_edit_of_the_same_test_file(tmp_path):
    repo, base = make_repo(tmp_path, {"lib.py": LIB, "test_lib.py": TESTS, "test_other.py": "def test_x():\n    pass\n"})
    path = write_instances(tmp_path, [instance(base, fix_patch(repo), shout_test_patch(repo))])
    task = load_taskset(path, tmp_path / "repos").tasks[0]
    assert task.test_files == ("test_lib.py",)
    ws = Workspace.create(task, sys.executable)
    try:
        assert ws.apply_patch(task.patch)
        with (ws.root / "test_lib.py").open("a") as fh:  # the agent's own regression test, same lines
            fh.write("\n\ndef test_shout_mine():\n    from lib import shout\n    assert shout('b') == 'HELLO B'\n")
        patch = ws.diff()
        assert "test_shout_mine" in patch
        evaluation = ws.evaluate(60)
        assert evaluation.test_patch_applied
        assert evaluation.resolved, evaluation.output_tail
        assert "test_shout_mine" not in (ws.root / "test_lib.py").read_text()
    finally:
        ws.cleanup()


def test_test_patch_creating_a_file_the_agent_also_created(tmp_path):
    repo, base = make_repo(tmp_path, {"lib.py": LIB, "test_lib.py": TESTS})
    new_tests = diff_of(repo, lambda r: (r / "tests_new").mkdir() or (r / "tests_new" / "test_shout.py").write_text(
        "from lib import shout\n\n\ndef test_shout():\n    assert shout('a') == 'HELLO A'\n"))
    row = instance(base, fix_patch(repo), new_tests, FAIL_TO_PASS=["tests_new/test_shout.py::test_shout"])
    task = load_taskset(write_instances(tmp_path, [row]), tmp_path / "repos").tasks[0]
    assert task.test_files == ("tests_new/test_shout.py",)
    ws = Workspace.create(task, sys.executable)
    try:
        assert ws.default_test_targets() == []  # neither the file nor its folder exists yet: whole suite
        assert ws.apply_patch(task.patch)
        (ws.root / "tests_new").mkdir()
        (ws.root / "tests_new" / "test_shout.py").write_text("def test_mine():\n    pass\n")
        ws.diff()
        assert ws.default_test_targets() == ["tests_new/test_shout.py"]
        evaluation = ws.evaluate(60)
        assert evaluation.test_patch_applied and evaluation.resolved, evaluation.output_tail
    finally:
        ws.cleanup()


def test_run_tests_and_evaluation_default_to_the_test_patch_files(tmp_path):
    slow = "def test_elsewhere():\n    raise SystemExit('the whole suite ran')\n"
    repo, base = make_repo(tmp_path, {"lib.py": LIB, "test_lib.py": TESTS, "other/test_elsewhere.py": slow,
                                      "data.json": "{}\n"})
    test_patch = shout_test_patch(repo) + diff_of(repo, lambda r: (r / "data.json").write_text('{"a": 1}\n'))
    explicit = instance(base, fix_patch(repo), test_patch, instance_id="owner__lib-2",
                        test_files=json.dumps(["test_lib.py"]))
    rows = [instance(base, fix_patch(repo), test_patch), explicit]
    tasks = load_taskset(write_instances(tmp_path, rows), tmp_path / "repos").tasks
    assert [t.test_files for t in tasks] == [("test_lib.py",), ("test_lib.py",)]  # data.json is no test file
    ws = Workspace.create(tasks[0], sys.executable)
    try:
        result = ws.run_tests(ws.default_test_targets(), 60)
        assert "1 passed" in result.output and "whole suite" not in result.output
        evaluation = ws.evaluate(60)
        assert evaluation.tests == {"test_lib.py::test_shout": "failed", "test_lib.py::test_greet": "passed"}
        assert "whole suite" not in evaluation.output_tail
    finally:
        ws.cleanup()


# -- 3. test environments -----------------------------------------------------------------------

def marker_wheel(folder: Path, value: str) -> Path:
    """A pure-Python wheel `ctxmarker` whose VALUE is `value` (installs with no network)."""
    path = folder / "ctxmarker-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as whl:
        whl.writestr("ctxmarker/__init__.py", f"VALUE = {value!r}\n")
        whl.writestr("ctxmarker-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: ctxmarker\nVersion: 1.0\n")
        whl.writestr("ctxmarker-1.0.dist-info/WHEEL",
                     "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        whl.writestr("ctxmarker-1.0.dist-info/RECORD", "")
    return path


def test_jsonl_environments_per_taskset_and_per_instance(tmp_path, monkeypatch):
    import pytest as pytest_module

    monkeypatch.setenv("CTXBENCH_CACHE", str(tmp_path / "cache"))
    needs_marker = TESTS + "\n\ndef test_shout():\n    import ctxmarker\n    from lib import shout\n" \
                           "    assert shout(ctxmarker.VALUE) == 'HELLO ' + ctxmarker.VALUE.upper()\n"
    no_marker = TESTS + "\n\ndef test_shout():\n    import importlib.util\n    from lib import shout\n" \
                        "    assert importlib.util.find_spec('ctxmarker') is None\n    assert shout('a') == 'HELLO A'\n"
    repo, base = make_repo(tmp_path, {"lib.py": LIB, "test_lib.py": TESTS})
    fix = fix_patch(repo)
    rows = [instance(base, fix, diff_of(repo, lambda r: (r / "test_lib.py").write_text(needs_marker))),
            instance(base, fix, diff_of(repo, lambda r: (r / "test_lib.py").write_text(no_marker)),
                     instance_id="owner__lib-2", environment={"python": sys.executable})]
    path = write_instances(tmp_path, rows)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    requirements = [f"pytest=={pytest_module.__version__}", str(marker_wheel(wheels, "x"))]
    environment_file(path).write_text(yaml.safe_dump({"requirements": requirements}))

    runner = CliRunner()
    args = ["tasks", "validate", str(path), "--repos", str(tmp_path / "repos"), "--sandbox", "none"]
    first = runner.invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert "2/2 tasks valid" in first.output
    assert first.output.count("building test environment") == 1
    again = runner.invoke(cli, args)
    assert again.exit_code == 0 and "building test environment" not in again.output, again.output

    environment_file(path).unlink()  # without the declared environment, the first instance is invalid
    bare = runner.invoke(cli, args)
    assert bare.exit_code == 1
    assert "FAIL owner__lib-1" in bare.output and "ModuleNotFoundError: No module named 'ctxmarker'" in bare.output


def test_bad_environment_is_one_clear_error(tmp_path):
    repo, base = make_repo(tmp_path, {"lib.py": LIB, "test_lib.py": TESTS})
    path = write_instances(tmp_path, [instance(base, "", "", environment={"pyhton": "/usr/bin/python3"})])
    result = CliRunner().invoke(cli, ["tasks", "list", str(path)])
    assert result.exit_code == 2
    assert "instances.jsonl:1.environment" in result.output and "pyhton" in result.output


# -- 4. collection failures -----------------------------------------------------------------------

BROKEN_CONFTEST = "raise RuntimeError('this conftest needs pytest<9')\n"


def test_validate_shows_why_tests_could_not_be_collected(tmp_path):
    repo, base = make_repo(tmp_path, {"lib.py": LIB, "test_lib.py": TESTS, "conftest.py": BROKEN_CONFTEST})
    path = write_instances(tmp_path, [instance(base, fix_patch(repo), shout_test_patch(repo))])
    result = CliRunner().invoke(cli, ["tasks", "validate", str(path), "--sandbox", "none"])
    assert result.exit_code == 1
    assert "the tests could not be collected" in result.output
    assert "RuntimeError: this conftest needs pytest<9" in result.output
    assert "last " in result.output and "lines of the test output" in result.output


def test_a_run_whose_tests_cannot_be_collected_is_a_taskset_error(tmp_path):
    repo, base = make_repo(tmp_path, {"lib.py": LIB, "test_lib.py": TESTS, "conftest.py": BROKEN_CONFTEST})
    path = write_instances(tmp_path, [instance(base, fix_patch(repo), shout_test_patch(repo))])
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({"name": "swe", "taskset": {"path": str(path)}, "strategies": [{"name": "baseline"}],
                                   "repeats": 1, "workers": 1, "sandbox": "none"}))
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"])
    assert result.exit_code == 0, result.output
    run = json.loads((out / "runs.jsonl").read_text())
    assert run["failure_reason"] == "taskset_error"
    assert "RuntimeError: this conftest needs pytest<9" in run["error"]


def test_an_agent_that_breaks_collection_is_still_the_agents_failure(tmp_path):
    from ctxbench.harness.records.failures import classify_failure
    from ctxbench.harness.sandbox import Sandbox
    from ctxbench.harness.tasks.validate import base_collection_failure

    repo, base = make_repo(tmp_path, {"lib.py": LIB, "test_lib.py": TESTS})
    path = write_instances(tmp_path, [instance(base, fix_patch(repo), shout_test_patch(repo))])
    task = load_taskset(path).tasks[0]
    ws = Workspace.create(task, sys.executable)
    try:
        (ws.root / "lib.py").write_text("def greet(:\n")
        evaluation = ws.evaluate(60)
        assert evaluation.not_collected
        assert base_collection_failure(task, sys.executable, 60, Sandbox()) is None
        assert classify_failure("finished", ws.diff(), evaluation.resolved, evaluation.fail_to_pass_ok) == "tests_failed"
    finally:
        ws.cleanup()


# -- 6. inputs and outputs ------------------------------------------------------------------------

@pytest.mark.parametrize("empty", [[], "[]"])
def test_empty_fail_to_pass_is_an_error(tmp_path, empty):
    repo, base = make_repo(tmp_path, {"lib.py": LIB, "test_lib.py": TESTS})
    path = write_instances(tmp_path, [instance(base, fix_patch(repo), "", FAIL_TO_PASS=empty)])
    result = CliRunner().invoke(cli, ["tasks", "list", str(path)])
    assert result.exit_code == 2
    assert "instances.jsonl:1.FAIL_TO_PASS: empty" in result.output


def test_empty_fail_to_pass_is_an_error_in_a_native_taskset(tmp_path, smoke_dir):
    import shutil

    shutil.copytree(smoke_dir, tmp_path / "ts")
    spec = yaml.safe_load((tmp_path / "ts" / "taskset.yaml").read_text())
    spec["tasks"][0]["FAIL_TO_PASS"] = []
    (tmp_path / "ts" / "taskset.yaml").write_text(yaml.safe_dump(spec))
    result = CliRunner().invoke(cli, ["tasks", "list", str(tmp_path / "ts")])
    assert result.exit_code == 2
    assert "FAIL_TO_PASS" in result.output


def test_predictions_per_strategy_and_repeat_and_kept_workspaces_in_records(tmp_path, monkeypatch):
    monkeypatch.setenv("CTXBENCH_WORKDIR", str(tmp_path / "work"))
    repo, base = make_repo(tmp_path, {"lib.py": LIB, "test_lib.py": TESTS})
    path = write_instances(tmp_path, [instance(base, fix_patch(repo), shout_test_patch(repo))])
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({"name": "swe", "taskset": {"path": str(path)}, "repeats": 2, "workers": 1,
                                   "strategies": [{"name": "baseline"}, {"name": "trimmer"}], "sandbox": "none",
                                   "keep_workspaces": True}))
    out = tmp_path / "out"
    runner = CliRunner()
    assert runner.invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"]).exit_code == 0
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert len({r["workspace"] for r in runs}) == 4
    for r in runs:
        kept = Path(r["workspace"])
        assert kept.is_dir() and (kept / ".git").is_dir() and r["task_id"] in kept.parent.name

    exported = runner.invoke(cli, ["export-predictions", str(out)])
    assert exported.exit_code == 0, exported.output
    names = sorted(p.name for p in (out / "predictions").iterdir())
    assert names == ["baseline.r0.jsonl", "baseline.r1.jsonl", "trimmer.r0.jsonl", "trimmer.r1.jsonl"]
    for r in runs:
        rows = [json.loads(line) for line in
                (out / "predictions" / f"{r['strategy']}.r{r['repeat']}.jsonl").read_text().splitlines()]
        assert rows == [{"instance_id": "owner__lib-1", "model_name_or_path": f"sim-coder+{r['strategy']}",
                         "model_patch": r["patch"]}]
    (out / "predictions" / "baseline.r0.jsonl").write_text("untouched\n")
    only = runner.invoke(cli, ["export-predictions", str(out), "--repeat", "1"])
    assert only.exit_code == 0 and only.output.split() == [str(out / "predictions" / "baseline.r1.jsonl"),
                                                          str(out / "predictions" / "trimmer.r1.jsonl")]
    assert (out / "predictions" / "baseline.r0.jsonl").read_text() == "untouched\n"
    missing = runner.invoke(cli, ["export-predictions", str(out), "--repeat", "2"])
    assert missing.exit_code == 2 and "no runs with repeat 2" in missing.output
