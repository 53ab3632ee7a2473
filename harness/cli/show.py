"""`ctxbench show`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ctxbench.harness.redact import remember_key_variable, scrub

from ctxbench.harness.cli.base import Command


@click.command(cls=Command)
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("run_id", required=False)
@click.option("--full", is_flag=True, help="Print messages and tool outputs whole instead of their first characters.")
def show(run_dir: Path, run_id: str | None, full: bool) -> None:
    """Print run RUN_ID (strategy/task/repeat) of RUN_DIR turn by turn; without RUN_ID, list the runs.
    RUN_DIR may be a gateway's transcripts folder: RUN_ID is then a conversation (strategy/name)."""
    from ctxbench.reports import runs_df
    from ctxbench.reports.runview import gateway_conversations, read_view, run_text

    _remember_key_variable(run_dir)
    conversations = gateway_conversations(run_dir)
    if run_id is None and conversations is not None:
        for key, file in conversations.items():
            view = read_view(file, None)
            click.echo(f"{key}  task {view.header.task_id or '?'}  {len(view.turns)} turns")
        click.echo(f"{len(conversations)} gateway conversations; `ctxbench show {run_dir} CONVERSATION` prints one "
                   "turn by turn.")
        return
    if run_id is None:
        runs = runs_df(run_dir)
        for r in runs.itertuples():
            outcome = "resolved" if r.resolved else str(r.failure_reason)
            click.echo(f"{r.run_id}  {outcome}  {r.turns} turns  {r.total_tokens:,} tokens")
        click.echo(f"{len(runs)} runs; `ctxbench show {run_dir} RUN_ID` prints one turn by turn.")
        return
    click.echo(scrub(run_text(run_dir, run_id, full)), nl=False)


def _remember_key_variable(run_dir: Path) -> None:
    """Scrub the key the experiment named, too: a folder written by an older ctxbench may hold it."""
    try:
        remember_key_variable(json.loads((run_dir / "manifest.json").read_text())["config"]["model"]["api_key_env"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
