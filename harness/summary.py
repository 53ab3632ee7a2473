"""The table `ctxbench run` prints at the end (figures from ctxbench.reports.summarize, the report's own)."""

from __future__ import annotations

import click

from ctxbench.harness.results import RunResult


def print_summary(results: list[RunResult]) -> None:
    from ctxbench.reports.loading import runs_frame
    from ctxbench.reports.summary import summarize

    click.echo(f"{'strategy':<18} {'runs':>5} {'completion':>10} {'mean tokens':>12}  failure reasons")
    for s in summarize(runs_frame(results)) if results else []:
        text = ", ".join(f"{k} {v}" for k, v in sorted(s.failures.items(), key=lambda kv: -kv[1]) if v) or "-"
        click.echo(f"{s.strategy:<18} {s.runs:>5} {s.completion_rate:>10.0%} {s.tokens_mean:>12,.0f}  {text}")
