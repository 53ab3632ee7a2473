"""CI: an external agent's experiment ran for real.

    python .ci/check_agent_runs.py RESULTS_DIR ARMS TASKS

Every run is recorded (ARMS x TASKS lines), none failed for the harness's, the taskset's or the agent's
sake, at least one resolved, every run has a transcript whose turns carry the strategy's ledger, and
`observation_masking`, which masked observations, spent fewer tokens than `baseline`.
"""

import json
import sys
from pathlib import Path

from ctxbench.reports import runs_df, turns_df


def failed_or_unrecorded(runs, turns) -> list[str]:
    """Runs that failed for the harness's, the taskset's or the agent's sake, or whose transcript has no
    turn carrying the strategy's ledger."""
    failed = runs[runs["failure_reason"].isin(["harness_error", "taskset_error", "agent_error"])]
    problems = [f"{r.run_id}: {r.failure_reason}: {str(r.error)[-300:]}" for r in failed.itertuples()]
    for run_id in runs["run_id"]:
        mine = turns[turns["run_id"] == run_id]
        if mine.empty or not ((mine["context_tokens"] > 0) & (mine["tokens_system"] > 0)).all():
            problems.append(f"{run_id}: no transcript turns with the strategy's ledger")
    return problems


def cli(main) -> None:
    """Run `main(RESULTS_DIR, N, TASKS)` on the command line's arguments; each problem a line, exit 1 if any."""
    found = main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
    for problem in found:
        print(f"{sys.argv[1]}: {problem}", file=sys.stderr)
    sys.exit(1 if found else 0)


def main(folder: Path, arms: int, tasks: int) -> list[str]:
    runs = runs_df(folder)
    turns = turns_df(folder)
    problems = []
    if len(runs) != arms * tasks or runs["strategy"].nunique() != arms:
        problems.append(f"{len(runs)} runs of {runs['strategy'].nunique()} arms, expected {arms} x {tasks}")
    problems += failed_or_unrecorded(runs, turns)
    if not runs["resolved"].any():
        problems.append("no run resolved")
    masked = turns[(turns["strategy"] == "observation_masking") & (turns["actions_masked"] > 0)]
    if masked.empty:
        problems.append("observation_masking masked nothing")
    tokens = runs.groupby("strategy")["total_tokens"].mean()
    if not tokens.get("observation_masking", 0) < tokens.get("baseline", 0):
        problems.append(f"observation_masking spent no fewer tokens than baseline: {tokens.to_dict()}")
    return problems


if __name__ == "__main__":
    cli(main)
