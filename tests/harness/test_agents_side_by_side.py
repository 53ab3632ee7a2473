"""Many agents in one experiment: arms that borrow their agent from another experiment file
(`agent: {from: NAME}`), agents that are not installed refused together or left out with `--available`."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import yaml
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.config import load_config
from ctxbench.harness.errors import InputError

AGENTS = Path(__file__).resolve().parents[1] / "agents"


def write(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def probe_experiment(folder: Path, name: str = "probe") -> Path:
    """An experiment file whose one arm runs the probe agent, a script beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(AGENTS / "probe_agent.py", folder)
    return write(folder / f"{name}.yaml", {
        "name": name, "taskset": "smoke", "strategies": [{"name": "baseline"}],
        "agent": {"name": "probe", "command": [sys.executable, "probe_agent.py", "3"], "env": {"P": "1"}}})


def side_by_side(tmp_path: Path, *arms: dict) -> Path:
    return write(tmp_path / "exp" / "many.yaml", {
        "name": "many", "taskset": {"path": "smoke", "limit": 1}, "repeats": 1, "workers": 1, "sandbox": "none",
        "strategies": [{"name": "baseline", "label": "builtin"}, *arms]})


def test_an_arm_borrows_the_agent_of_another_experiment_file_its_files_still_found(tmp_path):
    probe_experiment(tmp_path / "elsewhere")
    exp = side_by_side(tmp_path, {"name": "baseline", "label": "probe", "agent": {"from": "../elsewhere/probe.yaml"}})
    config = load_config(exp)
    agent = config.agent_of(config.strategies[1])
    assert agent.name == "probe" and agent.env == {"P": "1"}
    assert agent.command == [sys.executable, str((tmp_path / "elsewhere" / "probe_agent.py").resolve()), "3"]


def test_an_arm_borrows_a_built_in_experiment_s_agent_even_from_its_arms():
    for name, program in (("claude-code", "claude"), ("mini-swe-agent", "~/.venvs/mini-swe-agent/bin/mini")):
        config = load_config(resolve_builtin("agents"))
        arm = next(s for s in config.strategies if s.label == name)
        agent = config.agent_of(arm)
        assert agent.command is not None and agent.command[0] == program and agent.install


def resolve_builtin(name: str) -> Path:
    from ctxbench.harness.config import resolve_experiment_path
    return resolve_experiment_path(name)


def test_an_agent_that_cannot_be_borrowed_is_one_line_each(tmp_path):
    write(tmp_path / "exp" / "two.yaml", {"name": "two", "taskset": "smoke", "strategies": [
        {"name": "baseline", "agent": {"command": ["a"]}}, {"name": "baseline", "label": "b", "agent": {"command": ["b"]}}]})
    exp = side_by_side(tmp_path, {"name": "baseline", "label": "q", "agent": {"from": "quickstart"}},
                       {"name": "baseline", "label": "n", "agent": {"from": "nosuch"}},
                       {"name": "baseline", "label": "t", "agent": {"from": "two.yaml"}},
                       {"name": "baseline", "label": "x", "agent": {"from": "quickstart", "env": {}}})
    try:
        load_config(exp)
    except InputError as exc:
        problems = exc.problems
    else:
        raise AssertionError("borrowing what is not there was accepted")
    assert len(problems) == 4, problems
    assert "strategies.1.agent.from" in problems[0] and "found none" in problems[0]
    assert "nosuch: no such experiment file" in problems[1]
    assert "found a, b" in problems[2] and "no other key" in problems[3]


def missing_arm(label: str) -> dict:
    return {"name": "baseline", "label": label,
            "agent": {"command": [f"no-such-agent-{label}"], "install": f"pip install {label}-agent==1.0"}}


def test_agents_not_installed_are_refused_together_with_their_install_lines(tmp_path):
    probe_experiment(tmp_path / "exp")
    exp = side_by_side(tmp_path, missing_arm("one"), missing_arm("two"),
                       {"name": "baseline", "label": "probe", "agent": {"from": "probe.yaml"}})
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"])
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 3 and "Traceback" not in result.output, result.output
    assert "pip install one-agent==1.0" in lines[0] and "pip install two-agent==1.0" in lines[1]
    assert "--available" in lines[2]
    assert not out.exists()


def test_available_leaves_out_the_arms_whose_agent_is_not_installed_and_says_so(tmp_path):
    probe_experiment(tmp_path / "exp")
    exp = side_by_side(tmp_path, missing_arm("one"), {"name": "baseline", "label": "probe", "agent": {"from": "probe.yaml"}})
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--available"])
    assert result.exit_code == 0, result.output
    assert "left out one: its agent is not installed (pip install one-agent==1.0)" in result.output
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert sorted(r["strategy"] for r in runs) == ["builtin", "probe"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["left_out"] == {"one": "pip install one-agent==1.0"}
    assert [s["label"] or s["name"] for s in manifest["strategies"]] == ["builtin", "probe"]
    report = (out / "report.md").read_text()
    assert "Left out with `--available`" in report and "`one` (pip install one-agent==1.0)" in report


def test_available_with_no_agent_installed_is_refused(tmp_path):
    exp = write(tmp_path / "exp" / "none.yaml", {"name": "none", "taskset": "smoke", "strategies": [missing_arm("one")]})
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--available"])
    assert result.exit_code == 2 and "no arm's agent is installed (one)" in result.output, result.output
    assert not out.exists()


def test_an_agent_s_actions_are_its_tool_calls_or_what_its_text_does():
    from ctxbench.harness.agents.route import reply_actions
    from ctxbench.harness.protocols import Completion
    from ctxbench.harness.records import ToolCall

    aider = ("calc/stats.py\n```python\n<<<<<<< SEARCH\n    return 1\n=======\n    return 2\n>>>>>>> REPLACE\n```\n\n"
             "calc/units.py\n```python\n<<<<<<< SEARCH\nA = 1\n=======\nA = 2\n>>>>>>> REPLACE\n```\n")
    assert reply_actions(Completion(aider)) == ["edit", "edit"]  # Aider: no tool calls, yet two edits
    assert reply_actions(Completion("THOUGHT: look.\n\n```mswea_bash_command\nls\n```")) == ["bash"]
    assert reply_actions(Completion("", (ToolCall("c1", "Bash", '{"command": "ls"}'),))) == ["Bash"]
    assert reply_actions(Completion("All done.")) == []
