"""`ctxbench strategies list`."""

from __future__ import annotations

import click


@click.group()
def strategies() -> None:
    """Inspect the registered context strategies."""


@strategies.command("list")
def list_() -> None:
    """Every strategy (built-in and entry-point), with its parameters and defaults."""
    from ctxbench.strategies import available_strategies

    for name, cls in available_strategies().items():
        doc = (cls.__doc__ or "").strip().split("\n")[0]
        click.echo(f"{name}  ({cls.__module__})\n    {doc}")
        for field, info in cls.Params.model_fields.items():
            default = info.default if info.default_factory is None else info.default_factory()
            desc = f"  {info.description}" if info.description else ""
            click.echo(f"    {field} = {default!r}{desc}")
