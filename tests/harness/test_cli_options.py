"""The command line: shortcuts equal their `--set`, every config error at once, resume hints that work anywhere."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.cli.options import SHORTCUTS, shortcut_overrides
from ctxbench.harness.config import load_config

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "experiments" / "quickstart.yaml"


def ctxbench(*args: str) -> list[str]:
    return [sys.executable, "-c", "from ctxbench.harness.cli import main; main()", *args]


def test_every_shortcut_gives_the_config_of_its_set():
    shortcuts = {"limit": 2, "tasks": ["calc-median-even-length", "calc-fahrenheit-to-celsius"],
                 "tags": ["single-file"], "model": "Qwen/Qwen2.5-Coder-7B-Instruct", "provider": "openai",
                 "base_url": "http://127.0.0.1:9/v1", "api_key_env": "MY_KEY"}
    assert set(shortcuts) == set(SHORTCUTS)
    by_set = ["taskset.limit=2", "taskset.ids=[calc-median-even-length, calc-fahrenheit-to-celsius]",
              "taskset.include_tags=[single-file]", "model.name=Qwen/Qwen2.5-Coder-7B-Instruct",
              "model.provider=openai", "model.base_url=http://127.0.0.1:9/v1", "model.api_key_env=MY_KEY"]
    via_shortcuts = load_config(QUICKSTART, shortcut_overrides((), **shortcuts))
    assert via_shortcuts == load_config(QUICKSTART, by_set)
    assert via_shortcuts.taskset.limit == 2 and via_shortcuts.model.name == "Qwen/Qwen2.5-Coder-7B-Instruct"
    assert via_shortcuts != load_config(QUICKSTART)


def test_strategies_keeps_the_named_arms_in_file_order():
    config = load_config(QUICKSTART, ["repeats=1"], ["trimmer", "baseline"])
    assert [s.key for s in config.strategies] == ["baseline", "trimmer"]
    assert config.strategies[1].params == {"limit": 1200}


def test_an_unknown_strategy_arm_says_did_you_mean_and_writes_nothing(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(QUICKSTART), "--strategies", "baseline,trimer,nope",
                                      "--output", str(out)])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 2
    assert "'trimer' is not an arm of the experiment; did you mean 'trimmer'?" in lines[0]
    assert "'nope' is not an arm" in lines[1] and "did you mean" not in lines[1]
    assert not out.exists()


def test_an_unknown_task_id_says_did_you_mean(tmp_path):
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(QUICKSTART), "--tasks", "calc-median-even-lenght",
                                      "--output", str(out)])
    assert result.exit_code == 2
    assert "no task with id 'calc-median-even-lenght'; did you mean 'calc-median-even-length'?" in result.output
    assert not out.exists()


def test_three_mistakes_give_three_lines_in_one_attempt(tmp_path):
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({
        "name": "three", "taskset": "smoke", "repeats": 1,
        "limts": {"max_turns": 5},                                        # unknown key
        "model": {"temprature": 0.2},                                     # unknown nested key
        "strategies": [{"name": "baseline"}, {"name": "trimmer", "params": {"limt": 500}}],  # unknown param
    }))
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 3 and all(line.startswith(f"error: {exp}: ") for line in lines), result.output
    assert any("limts: unknown key; did you mean 'limits'?" in line for line in lines)
    assert any("model.temprature: unknown key; did you mean 'temperature'?" in line for line in lines)
    assert any("strategies.1.params.limt: unknown parameter of strategy 'trimmer'; did you mean 'limit'?" in line
               for line in lines)
    assert not out.exists()


@pytest.mark.parametrize("data, expected", [
    ({"repeats": "many"}, "repeats: expected a whole number (got 'many')"),
    ({"taskset": 5}, "taskset: expected a mapping (got 5)"),
    ({"model": {"provider": "vertex"}}, "model.provider: expected 'sim', 'openai' or 'anthropic' (got 'vertex')"),
    ({"strategies": [{"name": "baseline"}, {"name": "baseline"}]}, "strategies: baseline appear twice"),
])
def test_errors_are_in_plain_words(tmp_path, data, expected):
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({"name": "t", "taskset": "smoke", "strategies": [{"name": "baseline"}], **data}))
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(tmp_path / "out")])
    assert result.exit_code == 2 and expected in result.output, result.output
    assert "TasksetSpec" not in result.output and "Input should" not in result.output


def test_the_resume_hint_works_from_any_folder(tmp_path):
    """Interrupted in one folder with relative paths and overrides, the printed command resumes from another."""
    here, elsewhere = tmp_path / "here", tmp_path / "elsewhere"
    here.mkdir(), elsewhere.mkdir()
    (here / "exp.yaml").write_text(yaml.safe_dump({
        "name": "hint", "taskset": str(ROOT / "tasksets" / "smoke"), "strategies": [{"name": "baseline"}],
        "repeats": 4, "workers": 2, "sandbox": "none"}))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "CTXBENCH_WORKDIR": str(tmp_path / "work")}
    proc = subprocess.Popen(ctxbench("run", "exp.yaml", "--output", "out", "--no-report", "--limit", "1",
                                     "--set", "limits.max_turns=25"), cwd=here, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    runs = here / "out" / "runs.jsonl"
    while proc.poll() is None and not (runs.exists() and runs.read_text()):
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGINT)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    (line,) = stderr.strip().splitlines()[-1:]
    assert line.startswith("error: interrupted: ") and "Traceback" not in stderr
    hint = shlex.split(line.split("; continue with: ")[1])
    executable = Path(sys.executable).parent / "ctxbench"  # the console script of this environment, by its full path
    assert hint[:2] == [str(executable), "run"] and hint[-1] == "--resume"
    assert hint[2] == str(here / "exp.yaml") and hint[hint.index("--output") + 1] == str(here / "out")
    assert "limits.max_turns=25" in hint and "taskset.limit=1" in hint

    path_without_it = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if Path(p) != executable.parent)
    resumed = subprocess.run(hint, cwd=elsewhere, env={**env, "PATH": path_without_it}, capture_output=True, text=True,
                             timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert len(runs.read_text().splitlines()) == 4 and not (elsewhere / "out").exists()
    assert json.loads((here / "out" / "manifest.json").read_text())["config"]["limits"]["max_turns"] == 25


def test_set_mistakes_are_named_by_their_set_and_reported_with_the_file_s(tmp_path):
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({"name": "t", "taskset": "smoke", "strategies": [{"name": "baseline"}],
                                   "limts": {}}))
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(tmp_path / "out"), "--set", "repeats=x",
                                      "--set", "model.temprature=1", "--set", "foo"])
    assert result.exit_code == 2
    assert sorted(result.output.splitlines()) == sorted([
        "error: --set 'foo': expected KEY.PATH=VALUE",
        "error: --set repeats: expected a whole number (got 'x')",
        "error: --set model.temprature: unknown key; did you mean 'temperature'?",
        f"error: {exp}: limts: unknown key; did you mean 'limits'?",
    ])
    assert not (tmp_path / "out").exists()


def test_strategies_is_applied_before_set():
    config = load_config(QUICKSTART, ["strategies.0.params.limit=800"], ["trimmer"])
    assert [s.key for s in config.strategies] == ["trimmer"] and config.strategies[0].params == {"limit": 800}


def test_nightly_takes_the_shortcuts_and_writes_nothing_on_a_mistake(tmp_path):
    history = tmp_path / "history"
    bad = CliRunner().invoke(cli, ["nightly", str(QUICKSTART), "--history", str(history), "--strategies", "basline"])
    assert bad.exit_code == 2 and "did you mean 'baseline'?" in bad.output and not history.exists()

    result = CliRunner().invoke(cli, ["nightly", str(QUICKSTART), "--history", str(history), "--limit", "1",
                                      "--strategies", "baseline", "--set", "repeats=1", "--set", "sandbox=none"])
    assert result.exit_code == 0, result.output
    (run_dir,) = [p for p in history.iterdir() if p.is_dir() and p.name != "plots"]
    assert len((run_dir / "runs.jsonl").read_text().splitlines()) == 1
    assert json.loads((run_dir / "manifest.json").read_text())["config"]["taskset"]["limit"] == 1


def test_limit_works_on_a_taskset_given_by_name(tmp_path):
    """`taskset: NAME` (here set by --set) takes taskset.limit like the long form does."""
    config = load_config(QUICKSTART, ["taskset=context-pressure", *shortcut_overrides((), limit=2)])
    assert config.taskset.path == "context-pressure" and config.taskset.limit == 2
    result = CliRunner().invoke(cli, ["run", "quickstart", "--set", "taskset=smoke", "--limit", "1", "--strategies",
                                      "baseline", "--set", "repeats=1", "--set", "sandbox=none", "--no-report",
                                      "--output", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert len((tmp_path / "out" / "runs.jsonl").read_text().splitlines()) == 1


def test_resume_with_changed_settings_names_every_difference(tmp_path):
    out = tmp_path / "out"
    args = ["run", "quickstart", "--limit", "1", "--strategies", "baseline,trimmer", "--set", "repeats=1",
            "--set", "sandbox=none", "--no-report", "--output", str(out)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    recorded = (out / "runs.jsonl").read_bytes()
    changed = CliRunner().invoke(cli, [*args, "--resume", "--set", "model.temperature=0.5", "--set",
                                       "strategies.1.params.limit=900"])
    assert changed.exit_code == 2, changed.output
    (line,) = changed.output.splitlines()
    assert line.startswith(f"error: {out}: cannot resume, the fixed variables differ: ")
    assert "model: model.temperature: 0.0 -> 0.5" in line and "strategy trimmer: params.limit: 1200 -> 900" in line
    assert (out / "runs.jsonl").read_bytes() == recorded


def test_no_page_tells_to_install_ctxbench_from_pypi():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    assert [p.name for p in pages if "pip install 'ctxbench[" in p.read_text(encoding="utf-8")] == []
    assert "pip install -e '.[openai]'" in (ROOT / "README.md").read_text(encoding="utf-8")
