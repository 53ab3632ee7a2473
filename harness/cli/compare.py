"""`ctxbench compare`."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ctxbench.harness.errors import InputError


@click.command()
@click.argument("dir_a", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("dir_b", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--force", is_flag=True,
              help="Compare even when the fixed variables (model, taskset, prompt, tools, version, limits) differ.")
@click.option("--reference", default="baseline", show_default=True,
              help="Strategy each folder's other strategies are also compared with.")
def compare(dir_a: Path, dir_b: Path, force: bool, reference: str) -> None:
    """Print, as Markdown, results folder DIR_B compared with DIR_A (paired on task and repeat).

    Exits 2 when the fixed variables differ, unless --force.
    """
    from ctxbench.reports import comparison_report

    try:
        text = comparison_report(dir_a, dir_b, force=force, reference=reference)
    except InputError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    click.echo(text, nl=False)
