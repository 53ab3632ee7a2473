"""External agents as arms: their runs recorded, the limits held at the gateway, bad input refused."""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from pydantic import BaseModel, ConfigDict

from ctxbench.harness.agents import relay
from ctxbench.harness.cli import cli
from ctxbench.harness.context import Budget, Context
from ctxbench.harness.records import History
from ctxbench.strategies.baseline import Baseline
from ctxbench.strategies import registry
from ctxbench.strategies.registry import StrategyServices, register_strategy
from ctxbench.harness.records import TranscriptEnd, TranscriptTurn
from ctxbench.harness.records.transcript import read_transcript

AGENTS = Path(__file__).resolve().parents[1] / "agents"


def experiment(tmp_path: Path, **fields) -> Path:
    shutil.copy(AGENTS / "probe_agent.py", tmp_path)
    data = {"name": "probe", "taskset": {"path": "smoke", "limit": 1}, "repeats": 1, "workers": 1, "sandbox": "none",
            "strategies": [{"name": "baseline"}],
            "agent": {"command": [sys.executable, "probe_agent.py", "10"]}, **fields}
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def run(tmp_path: Path, exp: Path, *args: str):
    out = tmp_path / "out"
    return CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report", *args]), out


def records(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]


def test_max_turns_is_held_at_the_gateway_and_every_call_is_a_transcript_turn(tmp_path):
    result, out = run(tmp_path, experiment(tmp_path, limits={"max_turns": 3}))
    assert result.exit_code == 0, result.output
    [r] = records(out)
    assert r["failure_reason"] == "max_turns" and r["turns"] == 3 and r["prompt_tokens"] > 0
    transcript = list(read_transcript(next((out / "transcripts").rglob("*.jsonl.gz"))))
    turns = [t for t in transcript if isinstance(t, TranscriptTurn)]
    end = next(t for t in transcript if isinstance(t, TranscriptEnd))
    assert [t.turn for t in turns] == [0, 1, 2] and end.stop == "max_turns"
    assert [len(t.observations) for t in turns] == [1, 1, 1]  # the last results, from the request refused
    assert turns[0].gap_s is None and all(t.gap_s is not None and t.gap_s > 0 for t in turns[1:])  # as the loop's
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["strategies"][0]["agent"] == "probe_agent" and len(manifest["fixed"]["agent"]) == 64


def test_arms_may_differ_in_the_agent_and_the_manifest_says_the_agent_is_varied(tmp_path):
    exp = experiment(tmp_path, strategies=[{"name": "baseline"}, {"name": "baseline", "agent": "builtin"}],
                     limits={"max_turns": 2})
    result, out = run(tmp_path, exp)
    assert result.exit_code == 0, result.output
    assert sorted(r["strategy"] for r in records(out)) == ["baseline", "builtin/baseline"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert re.fullmatch(r"varied by the arms: builtin, probe_agent \([0-9a-f]{12}\)", manifest["fixed"]["agent"])
    assert [s["agent"] for s in manifest["strategies"]] == ["probe_agent", "builtin"]


def test_a_request_over_the_window_is_refused_as_openai_refuses_it(tmp_path):
    exp = experiment(tmp_path, model={"context_window": 1300, "max_output_tokens": 256})
    result, out = run(tmp_path, exp)
    assert result.exit_code == 0, result.output
    [r] = records(out)
    assert r["failure_reason"] == "context_overflow"
    assert r["error"].startswith("the server refused the request as over the model's context window: ")


def test_a_run_the_strategy_ends_over_the_window_keeps_its_last_turns_observations(tmp_path):
    exp = experiment(tmp_path, strategies=[{"name": "budget_planner"}],
                     model={"context_window": 1500, "max_output_tokens": 256})
    result, out = run(tmp_path, exp)
    assert result.exit_code == 0, result.output
    [r] = records(out)
    assert r["failure_reason"] == "context_overflow" and r["turns"] == 3
    assert r["error"].startswith("the strategy refused: its context does not fit its budget: ")
    turns = [t for t in read_transcript(next((out / "transcripts").rglob("*.jsonl.gz"))) if isinstance(t, TranscriptTurn)]
    assert [len(t.observations) for t in turns] == [1, 1, 1]  # the last, from the request the strategy could not fit


def test_an_agent_that_fails_is_an_agent_error_with_its_output_kept(tmp_path):
    exp = experiment(tmp_path, agent={"command": [sys.executable, "-c", "import sys; sys.exit('agent gave up')"]})
    result, out = run(tmp_path, exp)
    assert result.exit_code == 0, result.output
    [r] = records(out)
    assert r["failure_reason"] == "agent_error" and "agent gave up" in r["error"] and "exit code 1" in r["error"]


class RaisesOnThirdBuild:
    """A strategy with a bug: its third build raises (registered by the test below, for its own time only)."""

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

    def __init__(self, params: Params, services: StrategyServices | None = None) -> None:
        self.builds = 0

    def build(self, history: History, budget: Budget) -> Context:
        self.builds += 1
        if self.builds == 3:
            raise KeyError("a strategy bug on the third build")
        return Baseline(Baseline.Params()).build(history, budget)


def test_a_ctxbench_bug_while_answering_an_external_agent_is_a_harness_error_with_its_traceback(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # gone again after the test
    register_strategy("test_raises_on_third_build")(RaisesOnThirdBuild)
    result, out = run(tmp_path, experiment(tmp_path, strategies=[{"name": "test_raises_on_third_build"}]))
    assert result.exit_code == 0, result.output
    [r] = records(out)
    assert r["failure_reason"] == "harness_error" and r["turns"] == 2, r
    assert "Traceback" in r["error"] and "a strategy bug on the third build" in r["error"]
    assert "in build" in r["error"]  # the strategy's own frame, not only where the run noticed it
    transcript = list(read_transcript(next((out / "transcripts").rglob("*.jsonl.gz"))))
    end = next(t for t in transcript if isinstance(t, TranscriptEnd))
    assert end.stop == "harness_error" and "KeyError" in end.detail
    assert len([t for t in transcript if isinstance(t, TranscriptTurn)]) == 2


def assert_refused(result, out: Path, *words: str) -> None:
    assert result.exit_code == 2, result.output
    assert result.output.count("error:") == 1 and "Traceback" not in result.output, result.output
    assert all(w in result.output for w in words), result.output
    assert not out.exists()


def test_an_agent_program_that_does_not_exist_is_refused(tmp_path):
    result, out = run(tmp_path, experiment(tmp_path, agent={"command": ["./no-such-agent", "x"]}))
    assert_refused(result, out, "agent.command", "no-such-agent", "does not exist")


def test_an_agent_program_that_is_not_executable_is_refused(tmp_path):
    (tmp_path / "agent.sh").write_text("echo hi\n")
    result, out = run(tmp_path, experiment(tmp_path, agent={"command": ["./agent.sh"]}))
    assert_refused(result, out, "agent.command", "agent.sh", "not an executable file")


def test_an_agent_not_on_path_is_refused(tmp_path):
    result, out = run(tmp_path, experiment(tmp_path, agent={"command": ["no-such-agent-on-path"]}))
    assert_refused(result, out, "no-such-agent-on-path", "not a program on PATH")


def test_an_agent_that_is_not_installed_is_refused_with_how_to_install_it(tmp_path):
    install = "npm install -g @example/agent@1.0.0"
    result, out = run(tmp_path, experiment(tmp_path, agent={"command": ["no-such-agent-on-path", "-p"],
                                                            "install": install}))
    assert_refused(result, out, "'no-such-agent-on-path' is not a program on PATH", f"install it: {install}")


@pytest.mark.parametrize("name", ["claude-code", "codex", "mini-swe-agent"])
def test_the_built_in_agent_experiments_say_how_to_install_their_agent(tmp_path, monkeypatch, name):
    monkeypatch.setenv("PATH", _path_without(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # no ~/.venvs/mini-swe-agent there
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", name, "--limit", "1", "--output", str(out)])
    missing, install = {"claude-code": ("'claude' is not a program on PATH", "install it: npm install -g @"),
                        "codex": ("'codex' is not a program on PATH", "install it: npm install -g @"),
                        "mini-swe-agent": (".venvs/mini-swe-agent/bin/mini does not exist",
                                           "install it: python3 -m venv ~/.venvs/mini-swe-agent")}[name]
    hint = "error: --available leaves out the arms whose agent is not installed"
    assert result.exit_code == 2 and "Traceback" not in result.output and not out.exists(), result.output
    [line, *more] = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert missing in line and install in line, result.output
    assert more == ([hint] if name == "mini-swe-agent" else []), result.output  # its builtin arms would run


def _path_without(tmp_path: Path) -> str:
    """A PATH that has git but no agent: a folder holding a link to git alone."""
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "git").symlink_to(shutil.which("git"))
    return str(folder)


def test_placeholders_are_filled_in_one_pass_so_a_statement_holding_one_reaches_the_agent_as_written(tmp_path):
    statement = tmp_path / "statement.md"
    statement.write_text("Print {model} and {base_url} literally.")
    values = {"statement": statement.read_text(), "statement_file": str(statement), "model": "sim-coder",
              "workspace": str(tmp_path)}
    (tmp_path / "placeholders.json").write_text(json.dumps({"values": values, "env": ["SAID"]}))
    show = "import json, os, sys; print(json.dumps([sys.argv[1:], os.environ['SAID']]))"
    done = subprocess.run([sys.executable, "-I", "-c", inspect.getsource(relay), str(tmp_path / "no.sock"),
                           str(statement), str(tmp_path / "stop"), str(tmp_path / "placeholders.json"), "--",
                           sys.executable, "-c", show, "{statement}", "{model}", "${model}", "{base_url}"],
                          env={**os.environ, "SAID": "{statement}|{model}"}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    (argv, said) = json.loads(done.stdout)
    assert argv[:3] == ["Print {model} and {base_url} literally.", "sim-coder", "${model}"]
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", argv[3])
    assert said == "Print {model} and {base_url} literally.|sim-coder"


def test_home_files_are_written_in_the_agent_s_home_with_their_placeholders_filled(tmp_path):
    statement, home = tmp_path / "statement.md", tmp_path / "home"
    statement.write_text("Fix it.")
    values = {"statement": "Fix it.", "statement_file": str(statement), "model": "sim-coder",
              "workspace": str(tmp_path)}
    files = {".tool/settings.json": '{"model": "{model}", "url": "{base_url}", "shell": "${HOME}"}'}
    (tmp_path / "placeholders.json").write_text(json.dumps({"values": values, "env": [], "home_files": files}))
    show = "import os, sys; print(open(os.path.expanduser('~/.tool/settings.json')).read())"
    done = subprocess.run([sys.executable, "-I", "-c", inspect.getsource(relay), str(tmp_path / "no.sock"),
                           str(statement), str(tmp_path / "stop"), str(tmp_path / "placeholders.json"), "--",
                           sys.executable, "-c", show], env={**os.environ, "HOME": str(home)},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    settings = json.loads(done.stdout)
    assert settings["model"] == "sim-coder" and settings["shell"] == "${HOME}"
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", settings["url"])


@pytest.mark.parametrize("name", ["../escape.json", "/etc/x.json", "a/../../b"])
def test_a_home_file_outside_the_home_folder_is_refused(tmp_path, name):
    result, out = run(tmp_path, experiment(tmp_path, agent={"command": ["true"], "home_files": {name: "x"}}))
    assert_refused(result, out, "home_files", "inside the agent's home folder")


def test_an_agent_reads_its_home_files_in_a_run(tmp_path):
    reader = "import os, sys; sys.exit(0 if open(os.path.expanduser('~/.agent/conf')).read() == 'model=' + os.environ['CTXBENCH_MODEL'] else 3)"
    result, out = run(tmp_path, experiment(tmp_path, agent={"command": [sys.executable, "-c", reader],
                                                            "home_files": {".agent/conf": "model={model}"}}))
    assert result.exit_code == 0, result.output
    [r] = records(out)
    assert r["failure_reason"] != "agent_error", r


@pytest.mark.parametrize("agent", [{"command": ["true", "{nosuch}"]}, {"command": ["true"], "env": {"X": "a{nosuch}"}}])
def test_an_unknown_placeholder_is_refused_naming_the_known_ones(tmp_path, agent):
    result, out = run(tmp_path, experiment(tmp_path, agent=agent))
    assert_refused(result, out, "unknown placeholder {nosuch}", "{statement}, {statement_file}, {model}", "{workdir}")


def test_an_agent_key_with_an_unknown_field_is_refused(tmp_path):
    result, out = run(tmp_path, experiment(tmp_path, agent={"command": ["true"], "comand": ["x"]}))
    assert_refused(result, out, "agent.comand", "unknown key")


def test_a_failing_version_command_is_refused(tmp_path):
    result, out = run(tmp_path, experiment(tmp_path, agent={"command": ["true"], "version_command": ["false"]}))
    assert_refused(result, out, "version_command", "exit 1")


def test_a_failing_version_command_is_refused_when_the_arms_vary_the_agent_too(tmp_path):
    exp = experiment(tmp_path, agent={"command": ["true"], "version_command": ["false"]},
                     strategies=[{"name": "baseline"}, {"name": "baseline", "agent": "builtin"}])
    result, out = run(tmp_path, exp)
    assert_refused(result, out, "version_command", "exit 1")


def test_an_interpreter_s_script_that_does_not_exist_is_refused(tmp_path):
    result, out = run(tmp_path, experiment(tmp_path, agent={"command": ["python3", "my_agent.py", "--model", "{model}"]}))
    assert_refused(result, out, "agent.command", "the script 'my_agent.py' does not exist")


def test_a_python_on_path_is_the_interpreter_itself_not_a_launcher_in_front_of_it(tmp_path, monkeypatch):
    """A launcher such as pyenv's shim is a shell script that finds its Python under the home folder,
    which the agent's jail does not have: the command runs the interpreter it launches."""
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python3").write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    (shims / "python3").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shims}{os.pathsep}{os.environ['PATH']}")
    from ctxbench.harness.agents.setup import resolve_agents
    from ctxbench.harness.config import load_config
    exp = experiment(tmp_path, agent={"command": ["python3", "probe_agent.py", "10"],
                                      "version_command": ["python3", "--version"]})
    agent, = resolve_agents(load_config(exp), tmp_path).values()
    assert agent.command is not None and agent.version_command is not None
    assert agent.command[0] == agent.version_command[0] == sys.executable
    assert agent.command[1] == str(tmp_path / "probe_agent.py")


def test_a_masking_arm_masks_the_external_agents_observations(tmp_path):
    exp = experiment(tmp_path, strategies=[{"name": "observation_masking", "params": {"keep_recent": 2}}],
                     limits={"max_turns": 6})
    result, out = run(tmp_path, exp)
    assert result.exit_code == 0, result.output
    turns = [t for t in read_transcript(next((out / "transcripts").rglob("*.jsonl.gz"))) if isinstance(t, TranscriptTurn)]
    masked = [a for t in turns for a in t.ledger.actions if a.kind == "masked"]
    observed = {o.call_id for t in turns for o in t.observations}
    assert masked and {a.target for a in masked} <= observed
    assert all(a.kind != "masked" for t in turns[:3] for a in t.ledger.actions)  # nothing to mask before turn 3


def test_the_token_budget_is_held_at_the_gateway(tmp_path):
    result, out = run(tmp_path, experiment(tmp_path, limits={"max_tokens_per_run": 1000}))
    assert result.exit_code == 0, result.output
    [r] = records(out)
    assert r["failure_reason"] == "token_budget" and r["total_tokens"] >= 1000 and 1 < r["turns"] < 10


def test_a_stand_in_agent_with_the_openai_sdk_and_one_bash_tool_runs_under_the_experiment(tmp_path):
    """tests/agents/bash_agent.py (the `openai` SDK, one `bash` tool) through each run's gateway, against
    the simulator's bash dialect: every run recorded, fixes land, and the masking arm masks its outputs."""
    shutil.copy(AGENTS / "bash_agent.py", tmp_path)
    exp = experiment(tmp_path, taskset={"path": "smoke", "limit": 2}, workers=2, sandbox="bwrap",
                     strategies=[{"name": "baseline"}, {"name": "observation_masking", "params": {"keep_recent": 2}}],
                     agent={"command": [sys.executable, "bash_agent.py", "--model", "{model}"]})
    result, out = run(tmp_path, exp)
    assert result.exit_code == 0, result.output
    runs = records(out)
    assert len(runs) == 4 and all(r["failure_reason"] not in ("harness_error", "agent_error") for r in runs)
    assert sum(r["resolved"] for r in runs) >= 2 and all(r["tool_calls"].get("bash", 0) >= 3 for r in runs)
    for path in (out / "transcripts" / "observation_masking").rglob("*.jsonl.gz"):
        turns = [t for t in read_transcript(path) if isinstance(t, TranscriptTurn)]
        bash_calls = {c.id for t in turns for c in t.tool_calls if c.name == "bash"}
        masked = {a.target for t in turns for a in t.ledger.actions if a.kind == "masked"}
        assert masked and masked <= bash_calls


def test_the_agents_python_is_the_test_interpreter_with_its_virtual_environment(tmp_path):
    """`python` on the agent's PATH is the task's test interpreter with its packages: a virtual
    environment's python reached through a link in another folder starts as the base Python instead
    (pytest missing where the base has none, as with a venv of Debian's Python)."""
    import subprocess

    from ctxbench.harness.agents.external import _python_folder

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "only_in_this_venv.py").write_text("WHERE = 'venv'\n")
    folder = tmp_path / "agent"
    folder.mkdir()
    bin_dir = _python_folder(folder, str(venv / "bin" / "python"))
    for name in ("python", "python3"):
        done = subprocess.run([str(bin_dir / name), "-c", "import only_in_this_venv, sys; print(sys.prefix)"],
                              capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.strip() == str(venv), done.stderr


def test_the_jail_keeps_an_npm_installation_whole(tmp_path, monkeypatch):
    """Claude Code and Codex from npm: the program on PATH links into a package whose native binary lives
    in another package of the same node_modules (Codex's script spawns it), so the tree is kept whole."""
    from ctxbench.harness.agents.external import kept_folders

    home = tmp_path / "home"
    modules = home / ".npm-global" / "lib" / "node_modules"
    script = modules / "@openai" / "codex" / "bin" / "codex.js"
    script.parent.mkdir(parents=True)
    script.write_text("#!/usr/bin/env node\n")
    script.chmod(0o755)
    (modules / "@openai" / "codex-linux-x64" / "vendor").mkdir(parents=True)
    bin_dir = home / ".npm-global" / "bin"
    bin_dir.mkdir()
    (bin_dir / "codex").symlink_to(script)
    monkeypatch.setenv("HOME", str(home))
    kept = kept_folders([str(bin_dir / "codex"), "exec", "-"], sys.executable)
    assert str(modules) in kept and str(home) not in kept


def test_the_jail_keeps_the_python_an_agent_s_script_runs_on_even_in_the_home_folder(tmp_path, monkeypatch):
    """An agent installed in a virtual environment made from a Python under the home folder (pyenv's):
    its script's `#!` interpreter links there, which the jail hides unless it is bound back."""
    from ctxbench.harness.agents.external import kept_folders

    home = tmp_path / "home"
    base = home / ".pyenv" / "versions" / "3.11.7"
    (base / "bin").mkdir(parents=True)
    (base / "bin" / "python3.11").symlink_to(sys.executable)
    venv = tmp_path / "venvs" / "agent"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python3").symlink_to(base / "bin" / "python3.11")
    script = venv / "bin" / "agent"
    script.write_text(f"#!{venv / 'bin' / 'python3'}\nprint('hi')\n")
    script.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    kept = kept_folders([str(script), "--yolo"], sys.executable)
    assert str(venv) in kept and str(base) in kept and str(home) not in kept
    via_env = tmp_path / "tool"
    via_env.write_text("#!/usr/bin/env python3\n")
    on_path = Path(shutil.which("python3") or "/usr/bin/python3")
    assert any(on_path.is_relative_to(k) for k in kept_folders([str(via_env)], sys.executable))  # PATH's python3
