"""Agent and strategy as two factors: a table of the arms by agent (rows) and strategy (columns), for
experiments whose arms run more than one agent."""

from __future__ import annotations

import pandas as pd

from ctxbench.reports.compare import compare_strategies
from ctxbench.reports.document import Block, Heading, Paragraph, Table
from ctxbench.reports.loading import ResultsFolder

__all__ = ["agent_strategy_blocks", "arm_factors"]


def arm_factors(folder: ResultsFolder) -> dict[str, tuple[str, str]]:
    """Arm key -> (agent, strategy name), for the arms of the manifest that have runs."""
    keys = set(folder.runs["strategy"])
    return {s.key: (s.agent, s.name) for s in folder.manifest.strategies if s.key in keys}


def agent_strategy_blocks(folder: ResultsFolder) -> list[Block]:
    """The two-factor table: completion and mean tokens per (agent, strategy), and each strategy's
    token ratio against the first strategy of the same agent; nothing when one agent runs every arm."""
    factors = arm_factors(folder)
    agents = list(dict.fromkeys(agent for agent, _ in factors.values()))
    if len(agents) < 2:
        return []
    strategies = list(dict.fromkeys(name for _, name in factors.values()))
    runs = folder.runs[folder.runs["failure_reason"] != "harness_error"]
    cells: dict[tuple[str, str], tuple[float, float]] = {}
    for key, (agent, name) in factors.items():
        arm = runs[runs["strategy"] == key]
        if len(arm):
            cells[(agent, name)] = (float(arm["resolved"].mean()), float(arm["total_tokens"].mean()))
    rows = []
    for agent in agents:
        first = next((cells[(agent, s)] for s in strategies if (agent, s) in cells), None)
        row: dict[str, str] = {"agent": agent}
        for name in strategies:
            cell = cells.get((agent, name))
            if cell is None:
                row[name] = "—"
                continue
            ratio = f", ×{cell[1] / first[1]:.2f} tokens" if first and first[1] and cell is not first else ""
            row[name] = f"{cell[0]:.0%} · {cell[1]:,.0f} tokens{ratio}"
        rows.append(row)
    frame = pd.DataFrame(rows).set_index("agent")
    return [
        Heading("Agents and strategies"),
        Paragraph("The arms as two factors: each cell is the completion rate and the mean tokens per run of one "
                  "agent with one strategy, and the token ratio against the same agent's first strategy "
                  f"({strategies[0]}). Read across a row for a strategy's effect within one agent, down a column for "
                  "the agent's effect with the strategy held fixed. Descriptive means; the paired comparisons with "
                  "their intervals are below and in the comparison section."),
        Table(frame, id="agents"),
        *_within_agent(folder, factors, agents),
    ]


def _within_agent(folder: ResultsFolder, factors: dict[str, tuple[str, str]], agents: list[str]) -> list[Block]:
    """Each agent's strategies against its own first strategy, paired by (task, repeat) and Holm-corrected
    within the agent: the strategy's effect with the agent held fixed."""
    rows = []
    for agent in agents:
        arms = [key for key, (a, _) in factors.items() if a == agent]
        if len(arms) < 2:
            continue
        runs = folder.runs[folder.runs["strategy"].isin(arms)]
        for c in compare_strategies(runs, arms[0], arms):
            rows.append({"agent": agent, "strategy": factors[c.strategy][1], "against": factors[arms[0]][1],
                         "completion": f"{c.completion.difference * 100:+.1f} pts ({c.completion.verdict})",
                         "tokens": f"×{c.tokens.ratio:.2f} ({c.tokens.verdict})", "tasks": c.tasks})
    if not rows:
        return []
    return [Paragraph("Within each agent, each strategy against the agent's first strategy (pairs by task and "
                      "repeat, intervals and tests as in the comparison section, Holm across one agent's "
                      "strategies):"),
            Table(pd.DataFrame(rows), id="within-agent")]
