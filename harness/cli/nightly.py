"""`ctxbench nightly`: run an experiment into a history folder, then check it against the run before.

Running the experiment lives here, above the reports, so that reports only read results.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import click

from ctxbench.harness.cli.base import Command
from ctxbench.harness.cli.options import experiment_options, shortcut_overrides
from ctxbench.harness.errors import CantTell, Regressed

__all__ = ["nightly", "run_nightly", "nightly_run_dir"]


def nightly_run_dir(history_dir: Path, now: datetime | None = None) -> Path:
    """`<history>/<UTC date-time>` for a new nightly run, e.g. 2025-01-31T020000Z."""
    now = now or datetime.now(timezone.utc)
    return Path(history_dir) / now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H%M%SZ")


def run_nightly(experiment: str | Path, history_dir: str | Path, token_ratio: float = 1.2,
                overrides: list[str] | None = None, strategies: list[str] | None = None):
    """Run an experiment into `<history>/<UTC date-time>/`, write its report, then `nightly_check`.

    Returns:
        The NightlyOutcome of ctxbench.reports.nightly.

    Raises:
        InputError: invalid experiment file, or the run folder already exists.
        ExperimentAborted: a fatal provider error stopped the experiment.
    """
    from ctxbench.harness.config import resolve_experiment_path
    from ctxbench.harness.runner import load_experiment, prepare, run_experiment
    from ctxbench.reports import nightly_check, write_report

    experiment, history_dir = resolve_experiment_path(experiment), Path(history_dir)
    config = load_experiment(experiment, overrides, strategies)
    run_dir = nightly_run_dir(history_dir)
    ctx = prepare(config, experiment.resolve().parent, run_dir)
    history_dir.mkdir(parents=True, exist_ok=True)
    run_experiment(ctx)
    write_report(run_dir)
    return nightly_check(history_dir, run_dir, token_ratio)


@click.command(cls=Command)
@click.argument("experiment", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--history", "history", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder of nightly runs; this run goes into HISTORY/<UTC date-time>/.")
@click.option("--token-ratio", type=click.FloatRange(min=1.0), default=1.2, show_default=True,
              help="A rise in mean tokens counts as a regression when its 95% interval lies above this ratio.")
@click.option("--repeats", type=click.IntRange(1), help="Override `repeats`.")
@click.option("--workers", type=click.IntRange(1), help="Override `workers`.")
@experiment_options
def nightly(experiment: Path, history: Path, token_ratio: float, repeats: int | None, workers: int | None,
            overrides: tuple[str, ...], strategies: list[str] | None, **shortcuts: object) -> None:
    """Run EXPERIMENT into the history, compare with the previous run of the experiment, write the trend.

    Exit codes: 0 no regression (or nothing to compare), 1 a strategy regressed (completion verdict
    `worse`, or tokens rose beyond --token-ratio), 2 bad input (nothing written), 3 a fatal provider
    error or a dead worker stopped the run, 4 can't tell (no strategy regressed, but one fell on some
    task by an amount these runs cannot tell from noise).
    """
    extra = shortcut_overrides(overrides, **shortcuts)
    if repeats is not None:
        extra.append(f"repeats={repeats}")
    if workers is not None:
        extra.append(f"workers={workers}")
    outcome = run_nightly(experiment, history, token_ratio, extra, strategies)
    check = outcome.check
    click.echo(f"run: {outcome.run_dir}\ntrend: {outcome.trend_md}")
    if check.previous is None:
        click.echo("no earlier run of this experiment: nothing to compare")
    else:
        if not check.controlled:
            click.echo(f"NOT CONTROLLED: the previous run {check.previous.name} differs in:")
            for line in check.differences:
                click.echo(f"  - {line}")
        for line in check.messages():
            click.echo(line)
        conclusion = check.conclusion()
        if check.regressed:
            raise Regressed(conclusion)
        if check.cant_tell:
            raise CantTell(conclusion)
        click.echo(conclusion)
