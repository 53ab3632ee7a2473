"""Bad input: one clear error naming the file and the key, exit code 2, nothing written."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ctxbench.harness.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SMOKE = ROOT / "tasksets" / "smoke"
GOOD = {"name": "t", "taskset": str(SMOKE), "strategies": [{"name": "baseline"}], "repeats": 1, "workers": 1,
        "sandbox": "none"}


def run_cli(tmp_path: Path, text: str) -> tuple[object, Path]:
    exp = tmp_path / "exp.yaml"
    exp.write_text(text)
    out = tmp_path / "out"
    return CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"]), out


def assert_clear_error(result, out: Path, *names: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.output.count("error:") == 1 and "Traceback" not in result.output, result.output
    for name in names:
        assert name in result.output, (name, result.output)
    assert not out.exists(), "something was written"


def bad_taskset(tmp_path: Path) -> Path:
    folder = tmp_path / "ts"
    shutil.copytree(SMOKE, folder)
    return folder


@pytest.mark.parametrize("text, names", [
    ("name: [unclosed\n", ["exp.yaml", "not valid YAML"]),
    ("- just\n- a list\n", ["exp.yaml", "mapping"]),
    (yaml.safe_dump({**GOOD, "repeets": 3}), ["exp.yaml", "repeets", "unknown key"]),
    (yaml.safe_dump({**GOOD, "limits": {"max_turnz": 3}}), ["exp.yaml", "limits.max_turnz", "unknown key"]),
    (yaml.safe_dump({**GOOD, "repeats": "many"}), ["exp.yaml", "repeats", "'many'"]),
    (yaml.safe_dump({**GOOD, "limits": {"test_timeout_s": -1}}), ["exp.yaml", "limits.test_timeout_s"]),
    (yaml.safe_dump({**GOOD, "sandbox": "docker"}), ["exp.yaml", "sandbox", "'docker'"]),
    (yaml.safe_dump({**GOOD, "model": {"provider": "sim", "api_key": "sk-x"}}), ["exp.yaml", "model.api_key", "unknown key"]),
    (yaml.safe_dump({**GOOD, "strategies": [{"name": "no-such-strategy"}]}), ["exp.yaml", "strategies.0", "no-such-strategy"]),
    (yaml.safe_dump({**GOOD, "taskset": "no-such-taskset"}), ["no-such-taskset", "not found"]),
])
def test_bad_experiment_files(tmp_path, text, names):
    result, out = run_cli(tmp_path, text)
    assert_clear_error(result, out, *names)


def test_missing_experiment_file(tmp_path):
    result = CliRunner().invoke(cli, ["run", str(tmp_path / "nope.yaml"), "--output", str(tmp_path / "out")])
    assert result.exit_code == 2 and "nope.yaml" in result.output and not (tmp_path / "out").exists()


def test_duplicate_task_ids(tmp_path):
    folder = bad_taskset(tmp_path)
    data = yaml.safe_load((folder / "taskset.yaml").read_text())
    data["tasks"][1]["id"] = data["tasks"][0]["id"]
    (folder / "taskset.yaml").write_text(yaml.safe_dump(data))
    result, out = run_cli(tmp_path, yaml.safe_dump({**GOOD, "taskset": str(folder)}))
    assert_clear_error(result, out, str(folder / "taskset.yaml"), "tasks.1", "duplicate task id", data["tasks"][0]["id"])


def test_taskset_with_wrong_types_and_unknown_keys(tmp_path):
    folder = bad_taskset(tmp_path)
    data = yaml.safe_load((folder / "taskset.yaml").read_text())
    data["tasks"][0]["FAIL_TO_PASS"] = "not-a-list"
    data["tasks"][2]["timeout"] = 3
    (folder / "taskset.yaml").write_text(yaml.safe_dump(data))
    result, out = run_cli(tmp_path, yaml.safe_dump({**GOOD, "taskset": str(folder)}))
    assert_clear_error(result, out, str(folder / "taskset.yaml"), "tasks.0.FAIL_TO_PASS", "tasks.2.timeout")


def _break_gold_patch(folder: Path) -> str:
    task = yaml.safe_load((folder / "taskset.yaml").read_text())["tasks"][0]
    diff = folder / task["patch"]
    lines = diff.read_text().splitlines(keepends=True)
    i = next(n for n, line in enumerate(lines) if line.startswith("-") and not line.startswith("---"))
    lines[i] = "-    this line is not in the file\n"
    diff.write_text("".join(lines))
    return task["id"]


def test_gold_patch_that_does_not_apply_stops_run_before_anything_is_written(tmp_path):
    folder = bad_taskset(tmp_path)
    task_id = _break_gold_patch(folder)
    result, out = run_cli(tmp_path, yaml.safe_dump({**GOOD, "taskset": str(folder)}))
    assert_clear_error(result, out, str(folder / "taskset.yaml"), task_id, "`patch`", "does not apply")


def test_gold_patch_that_does_not_apply_fails_tasks_validate(tmp_path):
    folder = bad_taskset(tmp_path)
    task_id = _break_gold_patch(folder)
    data = yaml.safe_load((folder / "taskset.yaml").read_text())
    data["tasks"] = data["tasks"][:1]
    (folder / "taskset.yaml").write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(cli, ["tasks", "validate", str(folder), "--timeout", "30"])
    assert result.exit_code != 0
    assert f"FAIL {task_id}" in result.output and "gold patch does not apply" in result.output


# -- the broad check: every bad input is one clear line, exit 2 (3 for an endpoint), nothing written ---

ONE_TASK = {**GOOD, "taskset": {"path": str(SMOKE), "ids": ["calc-median-even-length"]}}
FIRST_TASK = "calc-median-even-length"


def _exp(tmp_path: Path, data: dict | str | bytes) -> Path:
    path = tmp_path / "exp.yaml"
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))
    return path


def _taskset(tmp_path: Path, edit=None) -> Path:
    """A copy of smoke; `edit(folder, data)` changes it, and the changed data is written back."""
    folder = bad_taskset(tmp_path)
    data = yaml.safe_load((folder / "taskset.yaml").read_text())
    if edit is not None:
        edit(folder, data)
    if data:  # an edit that wrote taskset.yaml itself clears the data
        (folder / "taskset.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


def _run(tmp_path: Path, data, *extra: str) -> list[str]:
    return ["run", str(_exp(tmp_path, data)), "--output", str(tmp_path / "out"), "--no-report", *extra]


def _with_taskset(tmp_path: Path, edit) -> list[str]:
    return _run(tmp_path, {**GOOD, "taskset": str(_taskset(tmp_path, edit))})


def _first(data: dict) -> dict:
    return data["tasks"][0]


def _repo(folder: Path) -> Path:
    return folder / "repos" / "calc"


def _swebench(tmp_path: Path, row_edit=None, repos: bool = True) -> list[str]:
    import json
    import subprocess

    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t",
           "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    repo = tmp_path / "repos" / "acme__calc"
    shutil.copytree(SMOKE / "repos" / "calc", repo)
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, env=env)
    base = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True,
                          env=env).stdout.strip()
    row = {"instance_id": "acme__calc-1", "repo": "acme/calc", "base_commit": base, "patch": "", "test_patch": "",
           "problem_statement": "x", "FAIL_TO_PASS": ["tests/test_stats.py::test_median_even_length"],
           "PASS_TO_PASS": []}
    edited = row_edit(row) if row_edit else row
    text = (edited if isinstance(edited, str) else json.dumps(edited)) + "\n"
    if not repos:
        shutil.rmtree(tmp_path / "repos")
    (tmp_path / "instances.jsonl").write_text(text)
    return _run(tmp_path, {**GOOD, "taskset": {"path": str(tmp_path / "instances.jsonl"),
                                               "repos": str(tmp_path / "repos")}})


def _recorded(tmp_path: Path, source: Path, edit=None) -> Path:
    """A copy of a finished one-run results folder at tmp_path/out; `edit(out)` breaks it."""
    out = tmp_path / "out"
    shutil.copytree(source, out)
    if edit is not None:
        edit(out)
    return out


def _resume(tmp_path: Path, source: Path, edit=None, *extra: str) -> list[str]:
    _recorded(tmp_path, source, edit)
    return _run(tmp_path, ONE_TASK, "--resume", *extra)


def _unreachable() -> str:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def _set_text(path: Path, text: str) -> None:
    path.write_text(text)


def _bad_patch_line(folder: Path, data: dict) -> None:
    _break_gold_patch_in(folder, _first(data)["patch"])


def _break_gold_patch_in(folder: Path, rel: str) -> None:
    diff = folder / rel
    lines = diff.read_text().splitlines(keepends=True)
    i = next(n for n, line in enumerate(lines) if line.startswith("-") and not line.startswith("---"))
    lines[i] = "-    this line is not in the file\n"
    diff.write_text("".join(lines))


def _corrupt_middle(out: Path) -> None:
    line = (out / "runs.jsonl").read_text()
    (out / "runs.jsonl").write_text('{"version": 1, "run_id": "baseline/x\n' + line)


def _link(target: str, name: str = "env.txt"):
    def edit(folder: Path, data: dict) -> None:
        import os

        os.symlink(target, _repo(folder) / name)
    return edit


def _loop(folder: Path, data: dict) -> None:
    import os

    os.symlink("b", _repo(folder) / "a")
    os.symlink("a", _repo(folder) / "b")


# Each case: (builder(tmp_path, recorded_folder) -> argv, words the one error line names, exit code)
CASES = {
    # experiment files
    "yaml-syntax": (lambda t, r: _run(t, "name: [unclosed\n"), ["exp.yaml", "not valid YAML", "line 2"], 2),
    "yaml-list": (lambda t, r: _run(t, "- a\n- b\n"), ["exp.yaml", "mapping"], 2),
    "yaml-duplicate-key": (lambda t, r: _run(t, yaml.safe_dump(GOOD) + "repeats: 5\n"),
                           ["exp.yaml", "duplicate key 'repeats'"], 2),
    "yaml-duplicate-nested-key": (lambda t, r: _run(t, yaml.safe_dump(GOOD) + "limits:\n  max_turns: 3\n  max_turns: 4\n"),
                                  ["exp.yaml", "duplicate key 'max_turns'"], 2),
    "experiment-not-utf8": (lambda t, r: _run(t, yaml.safe_dump({**GOOD, "name": "caf"}).encode().replace(b"caf", b"caf\xe9")),
                            ["exp.yaml", "not UTF-8", "line 1"], 2),
    "unknown-key": (lambda t, r: _run(t, {**GOOD, "repeets": 3}), ["exp.yaml", "repeets"], 2),
    "wrong-type": (lambda t, r: _run(t, {**GOOD, "repeats": "many"}), ["exp.yaml", "repeats", "many"], 2),
    "out-of-bounds": (lambda t, r: _run(t, {**GOOD, "limits": {"test_timeout_s": -1}}), ["limits.test_timeout_s"], 2),
    "bad-choice": (lambda t, r: _run(t, {**GOOD, "sandbox": "docker"}), ["sandbox", "docker"], 2),
    "unknown-provider": (lambda t, r: _run(t, {**GOOD, "model": {"provider": "vertex"}}), ["model.provider", "vertex"], 2),
    "api-key-in-file": (lambda t, r: _run(t, {**GOOD, "model": {"api_key": "sk-x"}}), ["model.api_key"], 2),
    "unknown-strategy": (lambda t, r: _run(t, {**GOOD, "strategies": [{"name": "no-such"}]}), ["strategies.0", "no-such"], 2),
    "unknown-strategy-param": (lambda t, r: _run(t, {**GOOD, "strategies": [{"name": "trimmer", "params": {"nope": 1}}]}),
                               ["strategies.0", "nope"], 2),
    "system-prompt-file-missing": (lambda t, r: _run(t, {**GOOD, "system_prompt_file": str(t / "prompt.txt")}),
                                   ["prompt.txt", "no such system_prompt_file"], 2),
    "system-prompt-file-folder": (lambda t, r: _run(t, {**GOOD, "system_prompt_file": str(t)}),
                                  [str(t) if False else "is a folder", "system_prompt_file"], 2),
    "system-prompt-file-not-utf8": (lambda t, r: (t / "p.txt").write_bytes(b"\xff\xfe") and _run(t, {**GOOD, "system_prompt_file": str(t / "p.txt")}),
                                    ["p.txt", "not UTF-8"], 2),
    "both-system-prompts": (lambda t, r: _run(t, {**GOOD, "system_prompt": "x", "system_prompt_file": "y"}),
                            ["system_prompt_file"], 2),
    "unknown-tokenizer": (lambda t, r: _run(t, {**GOOD, "model": {"tokenizer": "no_such_base"}}),
                          ["model.tokenizer", "no_such_base"], 2),
    "window-leaves-no-room": (lambda t, r: _run(t, {**GOOD, "model": {"context_window": 600, "max_output_tokens": 500}}),
                              ["model.context_window", "no room"], 2),
    "missing-experiment": (lambda t, r: ["run", str(t / "nope.yaml"), "--output", str(t / "out")], ["nope.yaml"], 2),
    # --set
    "set-without-equals": (lambda t, r: _run(t, GOOD, "--set", "repeats"), ["--set", "repeats", "KEY.PATH=VALUE"], 2),
    "set-bad-yaml": (lambda t, r: _run(t, GOOD, "--set", "repeats=[1"), ["--set", "repeats"], 2),
    "set-unknown-key": (lambda t, r: _run(t, GOOD, "--set", "limits.max_turnz=3"), ["limits.max_turnz"], 2),
    "set-out-of-bounds": (lambda t, r: _run(t, GOOD, "--set", "repeats=0"), ["repeats"], 2),
    "set-through-a-scalar": (lambda t, r: _run(t, GOOD, "--set", "name.x=1"), ["name"], 2),
    # tasksets
    "taskset-not-found": (lambda t, r: _run(t, {**GOOD, "taskset": "no-such-taskset"}), ["no-such-taskset", "not found"], 2),
    "taskset-without-yaml": (lambda t, r: (t / "empty").mkdir() or _run(t, {**GOOD, "taskset": str(t / "empty")}),
                             ["empty", "no taskset.yaml"], 2),
    "taskset-yaml-syntax": (lambda t, r: _run(t, {**GOOD, "taskset": str(_taskset(t, lambda f, d: (_set_text(f / "taskset.yaml", "tasks: [\n"), d.clear())))}),
                            ["taskset.yaml", "not valid YAML"], 2),
    "taskset-duplicate-key": (lambda t, r: _run(t, {**GOOD, "taskset": str(_taskset(t, lambda f, d: (_set_text(f / "taskset.yaml", (f / "taskset.yaml").read_text() + "name: again\n"), d.clear())))}),
                              ["taskset.yaml", "duplicate key 'name'"], 2),
    "taskset-not-utf8": (lambda t, r: _run(t, {**GOOD, "taskset": str(_taskset(t, lambda f, d: ((f / "taskset.yaml").write_bytes(b"name: caf\xe9\n"), d.clear())))}),
                         ["taskset.yaml", "not UTF-8"], 2),
    "taskset-a-list": (lambda t, r: _run(t, {**GOOD, "taskset": str(_taskset(t, lambda f, d: (_set_text(f / "taskset.yaml", "- a\n"), d.clear())))}),
                       ["taskset.yaml", "expected a mapping"], 2),
    "task-missing-key": (lambda t, r: _with_taskset(t, lambda f, d: _first(d).pop("FAIL_TO_PASS")),
                         ["taskset.yaml", "tasks.0.FAIL_TO_PASS", "missing"], 2),
    "task-unknown-key": (lambda t, r: _with_taskset(t, lambda f, d: _first(d).update(timeout=3)), ["tasks.0.timeout", "unknown key"], 2),
    "duplicate-task-id": (lambda t, r: _with_taskset(t, lambda f, d: d["tasks"][1].update(id=FIRST_TASK)),
                          ["tasks.1", "duplicate task id"], 2),
    "gold-patch-missing": (lambda t, r: _with_taskset(t, lambda f, d: _first(d).update(patch="patches/none.diff")),
                           ["tasks.0", "patch", "no file patches/none.diff"], 2),
    "gold-patch-not-utf8": (lambda t, r: _with_taskset(t, lambda f, d: (f / _first(d)["patch"]).write_bytes(b"\xff\n")),
                            [".diff", "not UTF-8"], 2),
    "gold-patch-does-not-apply": (lambda t, r: _with_taskset(t, _bad_patch_line), [FIRST_TASK, "does not apply"], 2),
    "unknown-task-id": (lambda t, r: _run(t, {**GOOD, "taskset": {"path": str(SMOKE), "ids": ["calc-nope"]}}), ["calc-nope"], 2),
    "test-cmd-not-found": (lambda t, r: _with_taskset(t, lambda f, d: _first(d).update(test_cmd="no-such-runner")),
                           [FIRST_TASK, "no-such-runner", "cannot start"], 2),
    "interpreter-missing": (lambda t, r: _with_taskset(t, lambda f, d: d.update(environment={"python": "/opt/none/python"})),
                            ["/opt/none/python", "does not exist"], 2),
    # repositories
    "repo-folder-missing": (lambda t, r: _with_taskset(t, lambda f, d: _first(d).update(repo="nope")), ["tasks.0", "repos/nope"], 2),
    "repo-up-and-out": (lambda t, r: _with_taskset(t, lambda f, d: _first(d).update(repo="../..")), ["tasks.0", "outside"], 2),
    "link-to-environ": (lambda t, r: _with_taskset(t, _link("/proc/self/environ")), ["env.txt -> /proc/self/environ", "outside"], 2),
    "link-into-home": (lambda t, r: _with_taskset(t, _link(str(Path.home() / ".ssh"), "keys")), ["keys -> ", "outside"], 2),
    "link-to-usr": (lambda t, r: _with_taskset(t, _link("/usr", "usr")), ["usr -> /usr", "outside"], 2),
    "link-loop": (lambda t, r: _with_taskset(t, _loop), ["loop"], 2),
    "swebench-repo-outside": (lambda t, r: _swebench(t, lambda row: {**row, "repo": ".."}), ["instances.jsonl:1.repo", "outside"], 2),
    "swebench-bad-commit": (lambda t, r: _swebench(t, lambda row: {**row, "base_commit": "f" * 40}), ["instances.jsonl:1.base_commit"], 2),
    "swebench-no-repos": (lambda t, r: _swebench(t, repos=False), ["instances.jsonl", "repositories folder"], 2),
    "swebench-not-json": (lambda t, r: _swebench(t, lambda row: "{not json"), ["instances.jsonl:1", "not valid JSON"], 2),
    "swebench-not-an-object": (lambda t, r: _swebench(t, lambda row: "[1, 2]"), ["instances.jsonl:1", "JSON object"], 2),
    # output folders
    "output-under-a-file": (lambda t, r: (t / "file").write_text("x") and ["run", str(_exp(t, GOOD)), "--output", str(t / "file" / "out")],
                            ["--output", "which is a file"], 2),
    "output-dir-is-a-file": (lambda t, r: (t / "out").write_text("x") and _run(t, {**GOOD, "output_dir": str(t / "out")})[:2],
                             ["output_dir", "is a file"], 2),
    "output-dir-under-a-file": (lambda t, r: (t / "f").write_text("x") and _run(t, {**GOOD, "output_dir": str(t / "f" / "o")})[:2],
                                ["output_dir", "which is a file"], 2),
    "output-holds-results": (lambda t, r: _recorded(t, r) and _run(t, ONE_TASK), ["already holds results", "--resume"], 2),
    # resume
    "resume-without-output": (lambda t, r: ["run", str(_exp(t, GOOD)), "--resume"], ["--resume needs --output"], 2),
    "resume-manifest-missing": (lambda t, r: _resume(t, r, lambda o: (o / "manifest.json").unlink()), ["no manifest.json"], 2),
    "resume-manifest-corrupt": (lambda t, r: _resume(t, r, lambda o: (o / "manifest.json").write_text("{oops")),
                                ["manifest.json", "cannot resume", "Invalid JSON"], 2),
    "resume-manifest-not-ours": (lambda t, r: _resume(t, r, lambda o: (o / "manifest.json").write_text("[]")),
                                 ["manifest.json", "not a ctxbench manifest"], 2),
    "resume-corrupt-middle-line": (lambda t, r: _resume(t, r, _corrupt_middle), ["runs.jsonl:1", "not a run record"], 2),
    "resume-fixed-variables-differ": (lambda t, r: _resume(t, r, None, "--set", "limits.max_turns=5"),
                                      ["cannot resume", "limits"], 2),
    # provider settings (exit 3: the endpoint, before anything is written)
    "key-variable-unset": (lambda t, r: _run(t, {**GOOD, "model": {"provider": "openai", "base_url": _unreachable(),
                                                                  "api_key_env": "CTXBENCH_UNSET_KEY_VAR"}}),
                           ["model.api_key_env", "CTXBENCH_UNSET_KEY_VAR", "not set"], 3),
    "base-url-unreachable": (lambda t, r: _run(t, {**GOOD, "model": {"provider": "openai", "base_url": _unreachable()}}),
                             ["model.base_url", "/v1/models", "Connection refused"], 3),
    "base-url-not-a-url": (lambda t, r: _run(t, {**GOOD, "model": {"provider": "openai", "base_url": "nowhere"}}),
                           ["model.base_url", "nowhere"], 3),
}


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    """Every path under root with its size and mtime (folders: existence only; taking and dropping
    the results folder's lock touches the folder's mtime and nothing else)."""
    out = {}
    for p in sorted(root.rglob("*")):
        st = p.lstat()
        out[str(p.relative_to(root))] = (0, 0) if p.is_dir() and not p.is_symlink() else (st.st_size, st.st_mtime_ns)
    return out


@pytest.fixture(scope="module")
def recorded(tmp_path_factory) -> Path:
    """A finished one-task, one-run results folder (copied by the resume cases)."""
    folder = tmp_path_factory.mktemp("recorded")
    exp = _exp(folder, ONE_TASK)
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(folder / "out"), "--no-report"])
    assert result.exit_code == 0, result.output
    return folder / "out"


@pytest.mark.parametrize("case", CASES)
def test_every_bad_input_is_one_clear_line_and_nothing_is_written(case, tmp_path, recorded, monkeypatch):
    build, names, code = CASES[case]
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("CTXBENCH_WORKDIR", str(work))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("CTXBENCH_UNSET_KEY_VAR", raising=False)
    monkeypatch.chdir(tmp_path)
    argv = build(tmp_path, recorded)
    before = _snapshot(tmp_path)
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code == code, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in result.output, result.output
    for name in names:
        assert name in errors[0], (name, errors[0])
    assert _snapshot(tmp_path) == before, "something was written"


def test_the_broad_check_covers_at_least_35_cases():
    assert len(CASES) >= 35
