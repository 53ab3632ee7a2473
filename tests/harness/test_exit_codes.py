"""The exit-code table of docs/commands.md is the error tree's, and every command ends through one handler."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.cli.base import Command, Group
from ctxbench.harness.errors import CtxbenchError, exit_codes

ROOT = Path(__file__).resolve().parents[2]


def _documented() -> dict[int, str]:
    text = (ROOT / "docs" / "commands.md").read_text(encoding="utf-8")
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    return {int(code): meaning for code, meaning in re.findall(r"^\| (\d+) \| (.+) \|$", section, re.M)}


def test_the_documented_exit_codes_are_the_error_tree_s():
    assert _documented() == {code: "; ".join(meanings) for code, meanings in exit_codes().items()}
    assert set(exit_codes()) == {0, 1, 2, 3, 4, 130, 143}


def test_every_command_and_group_ends_through_the_one_handler():
    def walk(command):
        yield command
        for sub in getattr(command, "commands", {}).values():
            yield from walk(sub)

    commands = list(walk(cli))
    assert len(commands) >= 13
    for command in commands:
        assert isinstance(command, Group if hasattr(command, "commands") else Command), command.name


def test_every_error_class_a_user_can_meet_has_a_documented_code():
    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)

    import ctxbench.reports  # noqa: F401  (its errors join the tree on import)
    import ctxbench.strategies.testing  # noqa: F401

    documented = _documented()
    classes = list(subclasses(CtxbenchError))
    assert len(classes) >= 9
    assert all(cls.exit_code in documented for cls in classes)


def test_a_mistyped_command_or_option_is_one_line_with_did_you_mean():
    runner = CliRunner()
    command = runner.invoke(cli, ["runn"], prog_name="ctxbench")
    assert command.exit_code == 2 and command.output.splitlines() == [
        "error: no such command 'runn'; did you mean 'run'? (see `ctxbench --help`)"]
    option = runner.invoke(cli, ["run", "quickstart", "--limt", "2"], prog_name="ctxbench")
    assert option.exit_code == 2 and option.output.splitlines() == [
        "error: No such option '--limt'; did you mean --limit? (see `ctxbench run --help`)"]
    sub = runner.invoke(cli, ["tasks", "lst"], prog_name="ctxbench")
    assert sub.exit_code == 2 and sub.output.splitlines() == [
        "error: no such command 'lst'; did you mean 'list'? (see `ctxbench tasks --help`)"]


def test_h_is_help_for_the_group_and_every_command():
    runner = CliRunner()
    for argv in (["-h"], ["run", "-h"], ["tasks", "validate", "-h"], ["report", "-h"]):
        result = runner.invoke(cli, argv, prog_name="ctxbench")
        assert result.exit_code == 0 and result.output.startswith("Usage: ctxbench"), (argv, result.output)
        assert result.output == runner.invoke(cli, [*argv[:-1], "--help"], prog_name="ctxbench").output


def test_an_unknown_tokenizer_for_serve_sim_is_one_error_line(tmp_path):
    exp = tmp_path / "exp.yaml"
    exp.write_text("name: t\ntaskset: smoke\nmodel: {tokenizer: nope}\nstrategies: [{name: baseline}]\n")
    result = CliRunner().invoke(cli, ["serve-sim", "--config", str(exp), "--port", "0"])
    assert result.exit_code == 2, result.output
    (line,) = result.output.splitlines()
    assert line.startswith(f"error: {exp}: model.tokenizer: unknown tokenizer 'nope' (known: endpoint, calibrated, auto,")
