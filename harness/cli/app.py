"""The `ctxbench` click group; each subcommand parses and calls a library function."""

from __future__ import annotations

import click

from ctxbench.harness.cli import (compare, export, export_inspect, gateway, nightly, plan, report, run, serve_sim, show,
                                  strategies_cmd, tasks_cmd)
from ctxbench.harness.cli.base import Group
from ctxbench.harness.version import __version__

__all__ = ["cli"]


@click.group(cls=Group)
@click.version_option(__version__, prog_name="ctxbench")
def cli() -> None:
    """Controlled experiments on the context strategies of coding agents."""


for _command in (run.run, tasks_cmd.tasks, strategies_cmd.strategies, serve_sim.serve_sim, report.report,
                 compare.compare, nightly.nightly, plan.plan, export.export_predictions, show.show, gateway.gateway):
    cli.add_command(_command)
cli.add_command(export_inspect.export_inspect)
