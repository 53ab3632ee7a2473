"""The README documents every command, option, config key and failure reason the code has."""

from __future__ import annotations

import typing
from pathlib import Path

import click
import pytest
from pydantic import BaseModel

from ctxbench.harness.cli import cli
from ctxbench.harness.config import ExperimentConfig
from ctxbench.harness.failures import FailureReason

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()


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


@pytest.mark.parametrize("path,command", commands(cli), ids=lambda v: v if isinstance(v, str) else "")
def test_every_command_and_option_is_in_the_readme(path, command):
    assert f"`{path}" in README, path
    for param in command.params:
        if isinstance(param, click.Option):
            assert any(opt in README for opt in param.opts), f"{path}: {param.opts}"


def test_every_config_key_is_in_the_readme():
    def documented(key: str) -> bool:
        name = key.rsplit(".", 1)[-1]
        return f"{name}:" in README or f"| `{name}`" in README  # the example file, or a table of keys

    missing = [key for key in config_keys(ExperimentConfig) if not documented(key)]
    assert not missing


def test_every_failure_reason_is_in_the_readme():
    missing = [reason for reason in typing.get_args(FailureReason) if f"`{reason}`" not in README]
    assert not missing
