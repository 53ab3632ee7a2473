"""`ctxbench export-predictions`."""

from __future__ import annotations

from pathlib import Path

import click

from ctxbench.harness.cli.base import Command


@click.command("export-predictions", cls=Command)
@click.argument("run_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--repeat", type=click.IntRange(min=0), default=None,
              help="Export only this repeat's patches (default: every repeat).")
def export_predictions(run_dir: Path, repeat: int | None) -> None:
    """Write RUN_DIR's agent patches as SWE-bench predictions: predictions/<strategy>.r<repeat>.jsonl."""
    from ctxbench.harness.swebench.instances import export_predictions as export

    for path in export(run_dir, repeat):
        click.echo(str(path))
