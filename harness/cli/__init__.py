"""The `ctxbench` command: a click group; each subcommand parses and calls a library function."""

from __future__ import annotations

import sys

import click

from harness.errors import InputError
from harness.version import __version__

__all__ = ["main", "cli"]


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(exc.exit_code)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="ctxbench")
def cli() -> None:
    """Controlled experiments on the context strategies of coding agents."""


def _register() -> None:
    from harness.cli import run, strategies_cmd, tasks_cmd

    cli.add_command(run.run)
    cli.add_command(tasks_cmd.tasks)
    cli.add_command(strategies_cmd.strategies)
    for module, name in (("harness.cli.serve_sim", "serve_sim"), ("harness.cli.report", "report"),
                         ("harness.cli.compare", "compare"), ("harness.cli.nightly", "nightly"),
                         ("harness.cli.export", "export_predictions")):
        try:
            mod = __import__(module, fromlist=[name])
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        cli.add_command(getattr(mod, name))


_register()


def main() -> None:
    cli(prog_name="ctxbench")
