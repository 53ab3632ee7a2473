"""The table `ctxbench run` prints at the end."""

from __future__ import annotations

from collections import Counter, defaultdict

import click

from harness.results import RunResult


def print_summary(results: list[RunResult]) -> None:
    by: dict[str, list[RunResult]] = defaultdict(list)
    for r in results:
        by[r.strategy].append(r)
    click.echo(f"{'strategy':<18} {'runs':>5} {'completion':>10} {'mean tokens':>12}  failure reasons")
    for name, runs in by.items():
        rate = sum(r.resolved for r in runs) / len(runs)
        tokens = sum(r.total_tokens for r in runs) / len(runs)
        reasons = Counter(r.failure_reason for r in runs if r.failure_reason)
        text = ", ".join(f"{k} {v}" for k, v in reasons.most_common()) or "-"
        click.echo(f"{name:<18} {len(runs):>5} {rate:>10.0%} {tokens:>12,.0f}  {text}")
