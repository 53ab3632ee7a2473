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
