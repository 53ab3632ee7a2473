"""CI: `ctxbench run agents` ran every agent for real, side by side.

    python .ci/check_agents_side_by_side.py RESULTS_DIR AGENTS TASKS

AGENTS arms (ctxbench's loop among them) each recorded TASKS runs, none failed for the harness's, the
taskset's or the agent's sake, each agent resolved at least one task, every run has transcript turns
carrying the strategy's ledger, none was left out, and the report's first table compares each agent
with the builtin loop.
"""

import json
from pathlib import Path

from check_agent_runs import cli, failed_or_unrecorded  # beside this script
from ctxbench.reports import runs_df, turns_df


def main(folder: Path, agents: int, tasks: int) -> list[str]:
    runs, turns = runs_df(folder), turns_df(folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    problems = [f"left out: {arm} ({install})" for arm, install in manifest.get("left_out", {}).items()]
    counts = runs["strategy"].value_counts()
    if len(counts) != agents or (counts != tasks).any():
        problems.append(f"runs per arm {counts.to_dict()}, expected {agents} arms x {tasks}")
    problems += failed_or_unrecorded(runs, turns)
    resolved = runs.groupby("strategy")["resolved"].any()
    problems += [f"{arm}: resolved no task" for arm, ok in resolved.items() if not ok]
    report = (folder / "report.md").read_text()
    first_table = next(block for block in report.split("\n\n") if block.startswith("| "))
    problems += [f"the report's first table has no row for {arm}" for arm in counts.index
                 if arm != "builtin" and f"\n| {arm} |" not in "\n" + first_table]
    return problems


if __name__ == "__main__":
    cli(main)
