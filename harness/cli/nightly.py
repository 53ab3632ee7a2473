"""`ctxbench nightly`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ctxbench.harness.cli.options import experiment_options, shortcut_overrides


@click.command()
@click.argument("experiment", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--history", "history", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder of nightly runs; this run goes into HISTORY/<UTC date-time>/.")
@click.option("--token-ratio", type=click.FloatRange(min=1.0), default=1.2, show_default=True,
              help="A rise in mean tokens counts as a regression when its 95% interval lies above this ratio.")
@experiment_options
def nightly(experiment: Path, history: Path, token_ratio: float, overrides: tuple[str, ...],
            strategies: list[str] | None, **shortcuts: object) -> None:
    """Run EXPERIMENT into the history, compare with the previous comparable run, write the trend.

    Exits 1 when a strategy regressed (completion fell, McNemar p < 0.05; or tokens rose beyond
    --token-ratio), 0 otherwise, 2 on bad input, 3 when a fatal provider error stopped the run.
    """
    from ctxbench.harness.runner import ExperimentAborted
    from ctxbench.reports import run_nightly

    try:
        outcome = run_nightly(experiment, history, token_ratio, shortcut_overrides(overrides, **shortcuts), strategies)
    except ExperimentAborted as exc:
        click.echo(f"error: experiment stopped: {exc}", err=True)
        sys.exit(3)
    check = outcome.check
    click.echo(f"run: {outcome.run_dir}\ntrend: {outcome.trend_md}")
    if check.previous is None:
        click.echo("no earlier comparable run: nothing to compare")
    elif check.regressed:
        click.echo(f"REGRESSION against {check.previous.name}: {', '.join(check.regressed)}")
    else:
        click.echo(f"no regression against {check.previous.name}")
    sys.exit(outcome.exit_code)
