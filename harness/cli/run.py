"""`ctxbench run`."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from ctxbench.harness.cli.options import experiment_options, shortcut_overrides
from ctxbench.harness.config import resolve_experiment_path
from ctxbench.harness.errors import InputError


@click.command()
@click.argument("experiment", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--output", "output", type=click.Path(file_okay=False, path_type=Path),
              help="Results folder (default: output_dir from the config, or results/<name>-<time>).")
@click.option("--repeats", type=click.IntRange(1), help="Override `repeats`.")
@click.option("--workers", type=click.IntRange(1), help="Override `workers`.")
@experiment_options
@click.option("--resume", is_flag=True, help="Continue an interrupted experiment in --output: run only what is missing.")
@click.option("--no-report", is_flag=True, help="Do not write the report at the end.")
def run(experiment: Path, output: Path | None, repeats: int | None, workers: int | None,
        overrides: tuple[str, ...], strategies: list[str] | None, resume: bool, no_report: bool,
        **shortcuts: object) -> None:
    """Run EXPERIMENT (a YAML file, or a built-in name such as `quickstart`): every strategy x task x repeat."""
    from ctxbench.harness.cli.summary import print_summary
    from ctxbench.harness.runner import ExperimentAborted, load_experiment, prepare, run_experiment

    extra = shortcut_overrides(overrides, **shortcuts)
    if repeats is not None:
        extra.append(f"repeats={repeats}")
    if workers is not None:
        extra.append(f"workers={workers}")
    path = resolve_experiment_path(experiment)
    config = load_experiment(path, extra, strategies)
    if resume and output is None and config.output_dir is None:
        raise InputError("--resume needs --output DIR (or output_dir in the config)")
    ctx = prepare(config, path.parent.resolve(), output)
    click.echo(f"ctxbench: {config.name}: {len(config.strategies)} strategies x {len(ctx.taskset.tasks)} tasks x "
               f"{config.repeats} repeats -> {ctx.output_dir}", err=True)
    if config.model.provider == "sim":
        click.echo("ctxbench: model `sim` is the built-in simulator, a stand-in for a model, not a model.", err=True)
    again = resume_command(experiment, extra, strategies, ctx.output_dir)
    try:
        results = run_experiment(ctx, resume=resume)
    except ExperimentAborted as exc:
        from ctxbench.harness.results import read_results

        recorded = len(read_results(ctx.output_dir / "runs.jsonl"))
        click.echo(f"error: experiment stopped: {exc}; {recorded} runs are recorded in {ctx.output_dir}; "
                   f"continue with: {again}", err=True)
        sys.exit(3)
    except KeyboardInterrupt:
        from ctxbench.harness.results import read_results

        recorded = len(read_results(ctx.output_dir / "runs.jsonl"))
        click.echo(f"\ninterrupted: {recorded} runs are recorded in {ctx.output_dir}; continue with\n  {again}",
                   err=True)
        sys.exit(130)
    print_summary(results)
    if not no_report:
        from ctxbench.reports import write_report

        paths = write_report(ctx.output_dir)
        click.echo(f"report: {paths.markdown}", err=True)


def resume_command(experiment: Path, overrides: list[str], strategies: list[str] | None, output: Path) -> str:
    """The command that continues this experiment from any folder: absolute paths, the same overrides."""
    spec = str(experiment) if len(experiment.parts) == 1 and not experiment.exists() else str(experiment.resolve())
    words = ["ctxbench", "run", spec, *(w for item in overrides for w in ("--set", item))]
    if strategies:
        words += ["--strategies", ",".join(strategies)]
    return shlex.join([*words, "--output", str(output.resolve()), "--resume"])
