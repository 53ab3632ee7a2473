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
                overrides: list[str] | None = None, strategies: list[str] | None = None,
                until_decided: bool = False):
    """Run an experiment into `<history>/<UTC date-time>/`, write its report, then `nightly_check`.

    With `until_decided` (or a `sequential:` block in the experiment) and an earlier run of the
    experiment in the history, the run goes in rounds: after each, every strategy's confidence sequence
    against itself in that run is updated, and a strategy stops once it is decided (non-inferior within
    `sequential.margin`, better, or worse), so looking after every round keeps the error rate.

    Returns:
        The NightlyOutcome of ctxbench.reports.nightly.

    Raises:
        InputError: invalid experiment file, the run folder already exists, or a `sequential:` block
            with `goal` or `reference` (a nightly compares each strategy with itself).
        ExperimentAborted: a fatal provider error stopped the experiment.
    """
    from ctxbench.harness.config import resolve_experiment_path
    from ctxbench.harness.run.runner import load_experiment, prepare, run_experiment
    from ctxbench.harness.run.sequential import PreviousRun, check_nightly_sequential, run_sequential
    from ctxbench.harness.config.sequential import SequentialConfig
    from ctxbench.reports import nightly_check, write_report
    from ctxbench.reports.nightly import latest_run

    experiment, history_dir = resolve_experiment_path(experiment), Path(history_dir)
    config = load_experiment(experiment, overrides, strategies)
    if until_decided and config.sequential is None:
        config = config.model_copy(update={"sequential": SequentialConfig()})
    previous = None
    if config.sequential is not None:
        check_nightly_sequential(config)
        latest = latest_run(history_dir, config.name)
        if latest is not None and {r.strategy for r in latest[1]} & {s.key for s in config.strategies}:
            previous = PreviousRun(latest[0].name, latest[1])
    run_dir = nightly_run_dir(history_dir)
    ctx = prepare(config, experiment.resolve().parent, run_dir)
    history_dir.mkdir(parents=True, exist_ok=True)
    if previous is None:
        run_experiment(ctx)
    else:
        click.echo(f"ctxbench nightly: in rounds against {previous.name}, each strategy until decided", err=True)
        run_sequential(ctx, previous=previous)
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
@click.option("--until-decided", is_flag=True,
              help="Run in rounds against the previous run and stop each strategy once it is decided "
                   "(the `sequential:` block's alpha, margin and max_repeats, or their defaults).")
@experiment_options
def nightly(experiment: Path, history: Path, token_ratio: float, repeats: int | None, workers: int | None,
            until_decided: bool, overrides: tuple[str, ...], strategies: list[str] | None,
            **shortcuts: object) -> None:
    """Run EXPERIMENT into the history, compare with the previous run of the experiment, write the trend.

    Exit codes: 0 no regression (or nothing to compare), 1 a strategy regressed (completion verdict
    `worse`, or tokens rose beyond --token-ratio), 2 bad input (nothing written), 3 a fatal provider
    error or a dead worker stopped the run, 4 can't tell (no strategy regressed, but one's completion was
    lower on some task, or its tokens above --token-ratio, by an amount these runs cannot tell from noise).
    """
    extra = shortcut_overrides(overrides, **shortcuts)
    if repeats is not None:
        extra.append(f"repeats={repeats}")
    if workers is not None:
        extra.append(f"workers={workers}")
    outcome = run_nightly(experiment, history, token_ratio, extra, strategies, until_decided)
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
