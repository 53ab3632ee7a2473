"""The table `ctxbench run` prints at the end: per strategy, the figures the report's summary gives
(ctxbench.reports.summarize) for runs, completion, mean tokens and failure reasons, counted here from
the results themselves, so that printing it costs no import of the report's libraries."""

from __future__ import annotations

from dataclasses import dataclass, field

import click

from ctxbench.harness.records import FAILURE_REASONS, RunResult


@dataclass
class TableRow:
    """One strategy's line: harness_error runs are left out of `runs`, completion and tokens."""

    strategy: str
    runs: int = 0
    resolved: int = 0
    tokens: int = 0
    harness_errors: int = 0
    called: int = 0
    """Runs in which the model made at least one tool call."""
    failures: dict[str, int] = field(default_factory=dict)

    @property
    def completion_rate(self) -> float:
        return self.resolved / self.runs

    @property
    def tokens_mean(self) -> float:
        return self.tokens / self.runs


def table_rows(results: list[RunResult]) -> list[TableRow]:
    """One row per strategy, in the order of their first run."""
    rows: dict[str, TableRow] = {}
    for r in results:
        row = rows.setdefault(r.strategy, TableRow(r.strategy))
        if r.failure_reason in FAILURE_REASONS:
            row.failures[r.failure_reason] = row.failures.get(r.failure_reason, 0) + 1
        if r.failure_reason == "harness_error":
            row.harness_errors += 1
            continue
        row.runs += 1
        row.called += bool(r.tool_calls)
        row.resolved += r.resolved
        row.tokens += r.total_tokens
    return list(rows.values())


def print_summary(results: list[RunResult]) -> None:
    """One line per strategy: runs recorded, completion and mean tokens (harness_error runs left out of
    both and shown among the failure reasons)."""
    rows = table_rows(results)
    for row in rows:  # ties in the order of FAILURE_REASONS, as the report lists them
        row.failures = {r: row.failures[r] for r in FAILURE_REASONS if r in row.failures}
    width = max([18, *(len(s.strategy) for s in rows)])
    click.echo(f"{'strategy':<{width}} {'runs':>5} {'completion':>10} {'mean tokens':>12}  failure reasons")
    for s in rows:
        text = ", ".join(f"{k} {v}" for k, v in sorted(s.failures.items(), key=lambda kv: -kv[1]) if v) or "-"
        rate = "–" if s.runs == 0 else f"{s.completion_rate:.0%}"
        tokens = "–" if s.runs == 0 else f"{s.tokens_mean:,.0f}"
        click.echo(f"{s.strategy:<{width}} {s.runs + s.harness_errors:>5} {rate:>10} {tokens:>12}  {text}")
    for s in rows:
        if s.runs and not s.called:
            click.echo(f"NOTICE: no run of {s.strategy} called a tool: nothing was measured (is the model's "
                       "tool_calls setting right for it? a model that writes its calls as text needs "
                       "model.tool_calls: text)", err=True)
