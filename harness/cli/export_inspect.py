"""`ctxbench export-inspect`."""

from __future__ import annotations

from pathlib import Path

import click

from ctxbench.harness.cli.base import Command


@click.command("export-inspect", cls=Command)
@click.argument("run_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--output", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to write the logs into. [default: RUN_DIR/inspect]")
def export_inspect(run_dir: Path, output: Path | None) -> None:
    """Write RUN_DIR as Inspect AI eval logs, one per arm (<strategy>.eval; needs the inspect extra)."""
    from ctxbench.reports.inspect_export import export_inspect as export

    for path in export(run_dir, output):
        click.echo(str(path))
