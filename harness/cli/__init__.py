"""The `ctxbench` command: a click group; each subcommand parses and calls a library function."""

from __future__ import annotations

import sys

import click

from ctxbench.harness.errors import InputError
from ctxbench.harness.version import __version__

__all__ = ["main", "cli"]


class _Group(click.Group):
    def invoke(self, ctx: click.Context):
        try:
            return super().invoke(ctx)
        except InputError as exc:
            for problem in exc.problems:
                click.echo(f"error: {problem}", err=True)
            sys.exit(exc.exit_code)


@click.group(cls=_Group)
@click.version_option(__version__, prog_name="ctxbench")
def cli() -> None:
    """Controlled experiments on the context strategies of coding agents."""


def _register() -> None:
    from ctxbench.harness.cli import compare, export, nightly, plan, report, run, serve_sim, show, strategies_cmd, tasks_cmd

    for command in (run.run, tasks_cmd.tasks, strategies_cmd.strategies, serve_sim.serve_sim, report.report,
                    compare.compare, nightly.nightly, plan.plan, export.export_predictions, show.show):
        cli.add_command(command)


_register()


def main() -> None:
    cli(prog_name="ctxbench")
