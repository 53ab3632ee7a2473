"""`ctxbench strategies list` and `ctxbench strategies check`."""

from __future__ import annotations

import click
from pydantic import BaseModel

from ctxbench.harness.cli.base import Group
from ctxbench.harness.errors import CheckFailed, InputError
from ctxbench.harness.yamlfile import parse_yaml


@click.group(cls=Group)
def strategies() -> None:
    """Inspect the registered context strategies."""


@strategies.command("list")
def list_() -> None:
    """Every strategy (built-in and entry-point), with its parameters and defaults."""
    from ctxbench.strategies import available_strategies

    for name, cls in available_strategies().items():
        doc = (cls.__doc__ or "").strip().split("\n")[0]
        click.echo(f"{name}  ({cls.__module__})\n    {doc}")
        params: type[BaseModel] = getattr(cls, "Params")
        for field, info in params.model_fields.items():
            default = info.get_default(call_default_factory=True)
            desc = f"  {info.description}" if info.description else ""
            click.echo(f"    {field} = {default!r}{desc}")


@strategies.command("check")
@click.argument("name")
@click.option("--params", "params_yaml", default="{}", show_default=True,
              help="The strategy's parameters as a YAML mapping, e.g. '{keep_recent: 2}'.")
def check(name: str, params_yaml: str) -> None:
    """Run the strategy contract check on the registered strategy NAME (exit 1 when it breaks the contract)."""
    from ctxbench.strategies import get_strategy_class, validate_params
    from ctxbench.strategies.testing import StrategyContractError, check_strategy

    params = parse_yaml(params_yaml, "--params")
    if not isinstance(params, dict):
        raise InputError(f"--params: expected a mapping, got {params_yaml!r}")
    cls = get_strategy_class(name)
    validate_params(name, params)
    try:
        builds = check_strategy(cls, params)
    except StrategyContractError as exc:
        raise CheckFailed(f"{name}: FAILS the strategy contract: {exc}") from exc
    click.echo(f"{name} ({cls.__module__}): passes the strategy contract ({builds} builds checked)")
