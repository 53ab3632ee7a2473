"""The README and docs/ document every command, option, config key and failure reason the code has,
once: the README is short and no docs page repeats it."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import click
import pytest
from pydantic import BaseModel

from ctxbench.harness.cli import cli
from ctxbench.harness.config import ExperimentConfig
from ctxbench.harness.records.failures import FailureReason

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOC_PAGES = {p.name: p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))}
DOCS = "\n".join([README, *DOC_PAGES.values()])


def commands(group: click.Group, prefix: str = "ctxbench") -> list[tuple[str, click.Command]]:
    out = []
    for name, command in group.commands.items():
        path = f"{prefix} {name}"
        if isinstance(command, click.Group):
            out.extend(commands(command, path))
        else:
            out.append((path, command))
    return out


def config_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    keys = []
    for name, field in model.model_fields.items():
        keys.append(prefix + name)
        for arg in (field.annotation, *typing.get_args(field.annotation)):
            for inner in (arg, *typing.get_args(arg)):
                if isinstance(inner, type) and issubclass(inner, BaseModel):
                    keys.extend(config_keys(inner, f"{prefix}{name}."))
    return keys


def undocumented_options(text: str, path: str, command: click.Command) -> list[str]:
    """The command itself (as `path`) and each of its options, where `text` never names them."""
    missing = [] if f"`{path}" in text else [path]
    for param in command.params:
        if isinstance(param, click.Option) and not any(opt in text for opt in param.opts):
            missing.append(f"{path} {'/'.join(param.opts)}")
    return missing


def undocumented_keys(text: str) -> list[str]:
    def documented(key: str) -> bool:
        name = key.rsplit(".", 1)[-1]
        return f"{name}:" in text or f"| `{name}`" in text  # the example file, or a table of keys

    return [key for key in config_keys(ExperimentConfig) if not documented(key)]


def undocumented_reasons(text: str) -> list[str]:
    return [reason for reason in typing.get_args(FailureReason) if f"`{reason}`" not in text]


@pytest.mark.parametrize("path,command", commands(cli), ids=lambda v: v if isinstance(v, str) else "")
def test_every_command_and_option_is_documented(path, command):
    assert not undocumented_options(DOCS, path, command)


def test_every_config_key_is_documented():
    assert not undocumented_keys(DOCS)


def test_every_failure_reason_is_documented():
    assert not undocumented_reasons(DOCS)


def test_the_checks_find_what_is_missing():
    """Against a text that documents nothing, every check reports every item (so none passes vacuously)."""
    text = "# nothing here"
    for path, command in commands(cli):
        options = [p for p in command.params if isinstance(p, click.Option)]
        assert len(undocumented_options(text, path, command)) == 1 + len(options)
    assert undocumented_keys(text) == config_keys(ExperimentConfig)
    assert undocumented_reasons(text) == list(typing.get_args(FailureReason))
    without_nightly = DOCS.replace("`ctxbench nightly", "`ctxbench night")
    nightly = dict(commands(cli))["ctxbench nightly"]
    assert undocumented_options(without_nightly, "ctxbench nightly", nightly) == ["ctxbench nightly"]


def test_the_readme_is_short_and_links_every_docs_page():
    assert len(README.splitlines()) <= 200
    assert README.count("## Security model") <= 1
    for name in DOC_PAGES:
        assert f"(docs/{name})" in README, f"README does not link docs/{name}"


def _long_lines(text: str) -> set[str]:
    """Lines of prose or code long enough that a repeat is a copy, not a coincidence."""
    lines = (re.sub(r"\s+", " ", line).strip() for line in text.splitlines())
    return {line for line in lines if len(line) >= 60 and not line.startswith("|---")}


@pytest.mark.parametrize("page", sorted(DOC_PAGES))
def test_no_docs_page_repeats_the_readme(page):
    assert not _long_lines(README) & _long_lines(DOC_PAGES[page])


def test_the_readme_strategy_example_works():
    """The strategy in the README's tour registers, validates its params, builds a context, files each
    message under its component and passes `ctxbench strategies check`, as the README says it does."""
    from click.testing import CliRunner

    from ctxbench.harness.context import Budget
    from ctxbench.harness.history import History, Observation, ToolCall, Turn
    from ctxbench.harness.tokens import TokenCounter
    from ctxbench.strategies import create_strategy, registry

    code = re.search(r"```python\n(.*?)```", README, re.S).group(1)
    try:
        exec(compile(code, "README.md", "exec"), {})
        turns = tuple(Turn(i, f"turn {i}", (ToolCall(f"c{i}", "read_file", "{}"),),
                           (Observation(f"c{i}", "read_file", (), f"output {i}", False, "file_read", i),))
                      for i in range(6))
        history = History("system", "task", turns)
        counter = TokenCounter("cl100k_base")
        context = create_strategy("last_turns", {"keep": 2}).build(history, Budget(16000, 1000, 100, counter))
        check = CliRunner().invoke(cli, ["strategies", "check", "last_turns", "--params", "{keep: 2}"])
    finally:
        registry._REGISTRY.pop("last_turns", None)
    assert [m["content"] for m in context.messages] == ["system", "task", "turn 4", "output 4", "turn 5", "output 5"]
    assert [a.target for a in context.ledger.actions] == [f"turn:{i}" for i in range(4)]
    assert context.ledger.components["files"] == sum(counter.count_message(m) for m in context.messages if m["role"] == "tool")
    assert check.exit_code == 0, check.output
    assert "last_turns (builtins): passes the strategy contract" in check.output
