"""`ctxbench run`."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

import click

from ctxbench.harness.cli.base import Command, as_error
from ctxbench.harness.cli.options import experiment_options, shortcut_overrides
from ctxbench.harness.config import resolve_experiment_path
from ctxbench.harness.errors import CtxbenchError, ExperimentAborted, InputError, Interrupted
from ctxbench.harness.run.runner import RunContext


@click.command(cls=Command)
@click.argument("experiment", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--output", "output", type=click.Path(file_okay=False, path_type=Path),
              help="Results folder (default: output_dir from the config, or results/<name>-<time>).")
@click.option("--repeats", type=click.IntRange(1), help="Override `repeats`.")
@click.option("--workers", type=click.IntRange(1), help="Override `workers`.")
@experiment_options
@click.option("--resume", is_flag=True, help="Continue an interrupted experiment in --output: run only what is missing.")
@click.option("--until-decided", is_flag=True,
              help="Run in rounds and stop each strategy once it is decided against the reference (the "
                   "`sequential:` block of the config, or its defaults).")
@click.option("--no-report", is_flag=True, help="Do not write the report at the end.")
@click.option("--available", is_flag=True,
              help="Leave out the arms whose agent is not installed (said here and in the report) instead of refusing.")
def run(experiment: Path, output: Path | None, repeats: int | None, workers: int | None,
        overrides: tuple[str, ...], strategies: list[str] | None, resume: bool, until_decided: bool,
        no_report: bool, available: bool, **shortcuts: object) -> None:
    """Run EXPERIMENT (a YAML file, or a built-in name such as `quickstart`): every strategy x task x repeat."""
    from ctxbench.harness.cli.summary import print_summary  # no pandas: the report's libraries load only for it
    from ctxbench.harness.run.runner import load_experiment, prepare, run_experiment
    from ctxbench.harness.run.sequential import check_sequential, design_line, rounds_line, run_sequential
    from ctxbench.harness.config.sequential import SequentialConfig, read_sequential

    extra = shortcut_overrides(overrides, **shortcuts)
    if repeats is not None:
        extra.append(f"repeats={repeats}")
    if workers is not None:
        extra.append(f"workers={workers}")
    path = resolve_experiment_path(experiment)
    config = load_experiment(path, extra, strategies)
    if until_decided and config.sequential is None:
        config = config.model_copy(update={"sequential": SequentialConfig()})
    if config.sequential is not None:
        check_sequential(config, "--until-decided" if until_decided else "sequential")
    if resume and output is None and config.output_dir is None:
        raise InputError("--resume needs --output DIR (or output_dir in the config)")
    ctx = prepare(config, path.parent.resolve(), output, available=available)
    config = ctx.config
    for arm, install in ctx.left_out.items():
        click.echo(f"ctxbench: left out {arm}: its agent is not installed ({install})", err=True)
    if resume:
        check_resumable(ctx)
    rounds = "" if config.sequential is None else ", in rounds until decided"
    click.echo(f"ctxbench: {config.name}: {len(config.strategies)} strategies x {len(ctx.taskset.tasks)} tasks x "
               f"{'up to ' if rounds else ''}{config.planned_repeats} repeats{rounds} -> {ctx.output_dir}", err=True)
    if config.sequential is not None:
        click.echo(f"ctxbench: {design_line(config, len(ctx.taskset.tasks))}", err=True)
    if config.model.provider == "sim":
        click.echo("ctxbench: model `sim` is the built-in simulator, a stand-in for a model, not a model.", err=True)
    again = (resume_command(experiment, extra, strategies, ctx.output_dir) + (" --until-decided" if until_decided else "")
             + (" --available" if available else ""))
    try:
        results = (run_experiment(ctx, resume=resume) if config.sequential is None
                   else run_sequential(ctx, resume=resume))
    except (ExperimentAborted, KeyboardInterrupt, OSError) as exc:
        error = as_error(exc)
        if error is None:
            raise
        raise stopped(error, ctx.output_dir, again) from exc
    print_summary(results)
    record = read_sequential(ctx.output_dir) if config.sequential is not None else None
    if record is not None:
        click.echo(f"ctxbench: {rounds_line(record)}", err=True)
    if not no_report:
        from ctxbench.reports import write_report

        paths = write_report(ctx.output_dir)
        click.echo(f"report: {paths.markdown}", err=True)


def stopped(error: CtxbenchError, output_dir: Path, again: str) -> CtxbenchError:
    """`error` (of the same class, so the same exit code) in one line that says how many runs are
    recorded and the command that continues the experiment."""
    from ctxbench.harness.records.results import read_results

    recorded = len(read_results(output_dir / "runs.jsonl"))
    where = f"{recorded} runs are recorded in {output_dir}; continue with: {again}"
    message = " ".join(str(error).split())
    if isinstance(error, Interrupted):
        return type(error)(f"{message}: {where}")
    return type(error)(f"experiment stopped: {message}; {where}")


def check_resumable(ctx: RunContext) -> None:
    """Before resuming into a folder: every fixed variable, strategy and config key as it was.

    Raises:
        InputError: naming everything that differs, as `ctxbench compare` does.
    """
    from ctxbench.harness.records import Manifest
    from ctxbench.harness.run.runner import manifest_for
    from ctxbench.reports.fixed import what_differs

    try:
        recorded = Manifest.model_validate_json((ctx.output_dir / "manifest.json").read_bytes())
    except (OSError, ValueError):
        return  # no manifest, or not one: the runner says what is wrong with the folder
    differences = what_differs(recorded, manifest_for(ctx))
    if differences:
        raise InputError(f"{ctx.output_dir}: cannot resume, the fixed variables differ: {'; '.join(differences)} "
                         "(run the changed experiment into another --output)")


def executable() -> list[str]:
    """The words that start this ctxbench from any folder: the console script by its absolute path,
    or this interpreter with `-m ctxbench`."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.name.startswith("ctxbench") and script.is_file():
        return [os.path.abspath(script)]
    beside = Path(sys.executable).parent / "ctxbench"
    if beside.is_file():
        return [str(beside)]
    return [sys.executable, "-m", "ctxbench"]


def resume_command(experiment: Path, overrides: list[str], strategies: list[str] | None, output: Path) -> str:
    """The command that continues this experiment from any folder: absolute paths, the same overrides."""
    spec = str(experiment) if len(experiment.parts) == 1 and not experiment.exists() else str(experiment.resolve())
    words = [*executable(), "run", spec, *(w for item in overrides for w in ("--set", item))]
    if strategies:
        words += ["--strategies", ",".join(strategies)]
    return shlex.join([*words, "--output", str(output.resolve()), "--resume"])
