"""`ctxbench compare`."""

from __future__ import annotations

from pathlib import Path

import click

from ctxbench.harness.cli.base import Command
from ctxbench.harness.errors import InputError


@click.command(cls=Command)
@click.argument("dir_a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("dir_b", required=False, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--strategies", nargs=2, metavar="REFERENCE CANDIDATE", default=None,
              help="Compare two strategies (arms) of DIR_A instead of two folders.")
@click.option("--force", is_flag=True,
              help="Compare even when the fixed variables (model, taskset, prompt, tools, version, limits) differ.")
@click.option("--reference", default=None,
              help="Strategy each folder's other strategies are also compared with (default: baseline, or the "
                   "first arm running it).")
@click.option("--margin", type=click.FloatRange(min=0, max=100, min_open=True), default=5.0, show_default=True,
              help="Non-inferiority margin in points of completion rate.")
def compare(dir_a: Path, dir_b: Path | None, strategies: tuple[str, str] | None, force: bool, reference: str | None,
            margin: float) -> None:
    """Print, as Markdown, results folder DIR_B compared with DIR_A (paired on task and repeat), or,
    with --strategies A B, strategy B of DIR_A compared with strategy A.

    Exits 2 when the fixed variables differ, unless --force.
    """
    from ctxbench.reports.compare_report import comparison_report, strategies_report

    if strategies is not None and dir_b is None:
        text = strategies_report(dir_a, *strategies, margin=margin / 100)
    elif dir_b is not None and strategies is None:
        text = comparison_report(dir_a, dir_b, force=force, reference=reference, margin=margin / 100)
    else:
        raise InputError("give either two folders (DIR_A DIR_B) or one folder and --strategies REFERENCE CANDIDATE")
    click.echo(text, nl=False)
