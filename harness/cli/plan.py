"""`ctxbench plan`."""

from __future__ import annotations

from pathlib import Path

import click

from ctxbench.harness.cli.base import Command


@click.command(cls=Command)
@click.argument("pilot_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--difference", type=click.FloatRange(min=0, max=100, min_open=True, max_open=True), default=5.0,
              show_default=True, help="Difference in completion rate to detect, in points.")
@click.option("--reference", default="baseline", show_default=True, help="Strategy the others are paired with.")
@click.option("--power", type=click.FloatRange(min=0.5, max=1, max_open=True), default=0.8, show_default=True,
              help="Wanted power.")
@click.option("--alpha", type=click.FloatRange(min=0, max=0.5, min_open=True), default=0.05, show_default=True,
              help="Two-sided significance level.")
def plan(pilot_dir: Path, difference: float, reference: str, power: float, alpha: float) -> None:
    """From the results folder PILOT_DIR, say how many tasks or repeats would detect --difference points."""
    from ctxbench.reports.loading import load_results
    from ctxbench.reports.planning import plan_text

    click.echo(plan_text(load_results(pilot_dir), difference / 100, reference, alpha, power), nl=False)
