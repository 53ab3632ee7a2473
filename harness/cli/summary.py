"""The table `ctxbench run` prints at the end (figures from ctxbench.reports.summarize, the report's own)."""

from __future__ import annotations

import click

from ctxbench.harness.records import RunResult
from ctxbench.reports.loading import runs_frame
from ctxbench.reports.summary import summarize


def print_summary(results: list[RunResult]) -> None:
    """One line per strategy: runs recorded, completion and mean tokens (harness_error runs left out of
    both and shown among the failure reasons)."""
    summaries = summarize(runs_frame(results)) if results else []
    width = max([18, *(len(s.strategy) for s in summaries)])
    click.echo(f"{'strategy':<{width}} {'runs':>5} {'completion':>10} {'mean tokens':>12}  failure reasons")
    for s in summaries:
        text = ", ".join(f"{k} {v}" for k, v in sorted(s.failures.items(), key=lambda kv: -kv[1]) if v) or "-"
        rate = "–" if s.runs == 0 else f"{s.completion_rate:.0%}"
        tokens = "–" if s.runs == 0 else f"{s.tokens_mean:,.0f}"
        click.echo(f"{s.strategy:<{width}} {s.runs + s.harness_errors:>5} {rate:>10} {tokens:>12}  {text}")
