"""`ctxbench report`."""

from __future__ import annotations

from pathlib import Path

import click

from ctxbench.harness.cli.base import Command


@click.command(cls=Command)
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--reference", default=None,
              help="Strategy the others are compared with (paired on task and repeat); it must have runs. "
                   "[default: baseline, else the first arm running baseline, e.g. builtin/baseline]")
@click.option("--margin", type=click.FloatRange(min=0, max=100, min_open=True), default=5.0, show_default=True,
              help="Non-inferiority margin in points of completion rate.")
@click.option("--price-as", "price_as", metavar="MODEL", default=None,
              help="Re-price the runs under the pricing regimes as this model of the genai-prices database "
                   "(e.g. claude-sonnet-4-5). [default: the model the experiment was priced as]")
def report(run_dir: Path, reference: str | None, margin: float, price_as: str | None) -> None:
    """Write report.md, report.html, summary.csv, summary.json, comparisons.csv and plots/ into RUN_DIR (a
    results folder)."""
    from ctxbench.reports import write_report

    paths = write_report(run_dir, reference=reference, margin=margin / 100, price_as=price_as)
    for path in (paths.markdown, paths.html, paths.summary_csv, paths.summary_json, paths.comparisons_csv):
        if path is not None:
            click.echo(str(path))
    click.echo(f"{len(paths.plots)} plots in {paths.plots[0].parent}")
