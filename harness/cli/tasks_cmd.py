"""`ctxbench tasks list|validate`."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import click

from ctxbench.harness.cli.base import Group
from ctxbench.harness.errors import CheckFailed
from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path


_OUTPUT_LINES = 25
"""Lines of test output `tasks validate` shows under an invalid task."""


def _load(taskset: str, repos: Path | None):
    return load_taskset(resolve_taskset_path(taskset), repos)


@click.group(cls=Group)
def tasks() -> None:
    """Inspect and validate tasksets."""


@tasks.command("list")
@click.argument("taskset")
@click.option("--repos", type=click.Path(file_okay=False, path_type=Path),
              help="For a .jsonl taskset: folder of git repositories <owner>__<name>.")
def list_(taskset: str, repos: Path | None) -> None:
    """Print the tasks of TASKSET (a path or built-in name) with their tags, and counts per tag."""
    ts = _load(taskset, repos)
    click.echo(f"{ts.name}: {len(ts.tasks)} tasks ({ts.path})")
    width = max(len(t.id) for t in ts.tasks)
    for t in ts.tasks:
        hidden = " [hidden tests]" if t.test_patch else ""
        click.echo(f"  {t.id:<{width}}  {t.repo_name:<12} {', '.join(t.tags)}{hidden}")
    counts = Counter(tag for t in ts.tasks for tag in t.tags)
    click.echo("tags: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))


@tasks.command()
@click.argument("taskset")
@click.option("--repos", type=click.Path(file_okay=False, path_type=Path))
@click.option("--timeout", default=120.0, show_default=True, help="Seconds per test run.")
@click.option("--sandbox", type=click.Choice(["bwrap", "none"]), default="bwrap", show_default=True,
              help="Run the tests in the bubblewrap jail (falls back to none, loudly, where it does not work).")
def validate(taskset: str, repos: Path | None, timeout: float, sandbox: str) -> None:
    """Check every task: FAIL_TO_PASS fail without the gold patch; all pass with it."""
    from ctxbench.harness.sandbox import choose_sandbox, fallback_warning
    from ctxbench.harness.tasks.validate import validate_taskset

    ts = _load(taskset, repos)
    box = choose_sandbox(sandbox, hide=(*ts.folders(), repos))
    warning = fallback_warning(sandbox, box)
    if warning:
        click.echo(f"ctxbench: WARNING: {warning}", err=True)

    def show(v) -> None:
        mark = "ok  " if v.ok else "FAIL"
        click.echo(f"{mark} {v.task_id:<40} {v.seconds:>6.2f}s  {'; '.join(v.problems)}")
        if not v.ok and v.output.strip():
            tail = v.output.rstrip().splitlines()[-_OUTPUT_LINES:]
            click.echo(f"     last {len(tail)} lines of the test output:")
            click.echo("\n".join(f"     | {line}" for line in tail))

    results = validate_taskset(ts, timeout, box, progress=show)
    bad = [v.task_id for v in results if not v.ok]
    click.echo(f"{len(results) - len(bad)}/{len(results)} tasks valid")
    if bad:
        raise CheckFailed(f"invalid: {', '.join(bad)}")
