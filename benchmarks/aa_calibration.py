"""A/A calibration of the paired comparison: how often does it call a strategy different from itself?

Runs one strategy on a built-in taskset with many repeats (each repeat its own seed) into a pool
folder, once; then, for each trial, splits every task's repeats at random into two arms of R
repeats, renumbers them 0..R-1 so that they pair on (task, repeat), and compares arm B with arm A
exactly as the report does (`compare_strategies`). Both arms are the same strategy, shifted seeds:
any `better` / `worse` verdict is a false positive. The secondary (task, repeat) McNemar test,
which treats repeats as independent, is counted beside it for contrast.

Figures come from the simulated model (a stand-in for a model, not a model). Prints, last line:

    trials=<n> tasks=<t> repeats_per_arm=<r> primary_false_positive=<x> (<k>/<n>) mcnemar_false_positive=<y> ...

Usage: python benchmarks/aa_calibration.py [--pool DIR] [--taskset context-pressure] [--strategy baseline]
                                           [--pool-repeats 6] [--repeats 3] [--trials 200] [--workers 2]
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from ctxbench.harness.config import load_config
from ctxbench.harness.run.runner import prepare, run_experiment
from ctxbench.reports.compare import compare_strategies
from ctxbench.reports.loading import load_results


def build_pool(pool: Path, taskset: str, strategy: str, repeats: int, workers: int) -> None:
    """Run `strategy` on `taskset` with `repeats` seeds per task into `pool` (skipped when it exists)."""
    if (pool / "runs.jsonl").exists():
        return
    pool.parent.mkdir(parents=True, exist_ok=True)
    config_file = pool.parent / f"{pool.name}.yaml"
    config_file.write_text(yaml.safe_dump({"name": "aa-pool", "model": {"provider": "sim"}, "taskset": taskset,
                                           "strategies": [{"name": strategy}], "repeats": repeats, "seed": 0,
                                           "workers": workers}))
    run_experiment(prepare(load_config(config_file, []), config_file.parent, pool))


def split_arms(runs: pd.DataFrame, repeats: int, rng: np.random.Generator) -> pd.DataFrame:
    """Two arms, `A` and `B`, of `repeats` distinct pool repeats per task, renumbered 0..repeats-1."""
    arms = []
    for _, task in runs.groupby("task_id"):
        picked = task.iloc[rng.permutation(len(task))[: 2 * repeats]].copy()
        picked["strategy"] = ["A"] * repeats + ["B"] * repeats
        picked["repeat"] = list(range(repeats)) * 2
        arms.append(picked)
    return pd.concat(arms, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", type=Path, default=Path("results/aa-pool"))
    parser.add_argument("--taskset", default="context-pressure")
    parser.add_argument("--strategy", default="baseline")
    parser.add_argument("--pool-repeats", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3, help="Repeats per arm (at most half the pool's).")
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    build_pool(args.pool, args.taskset, args.strategy, args.pool_repeats, args.workers)
    folder = load_results(args.pool)
    runs = folder.runs[folder.runs["failure_reason"] != "harness_error"]
    fewest = int(runs.groupby("task_id").size().min())
    if 2 * args.repeats > fewest:
        raise SystemExit(f"the pool has {fewest} repeats of some task: --repeats must be at most {fewest // 2}")
    rng = np.random.default_rng(12345)
    verdicts, mcnemar, non_inferior, estimable = [], 0, 0, 0
    for trial in range(args.trials):
        (c,) = compare_strategies(split_arms(runs, args.repeats, rng), "A", ["A", "B"], seed=trial)
        verdicts.append(c.completion.verdict)
        mcnemar += c.mcnemar_p < 0.05
        non_inferior += c.completion.verdict == "non-inferior"
        estimable += not math.isnan(c.completion.ci[0])
    positives = sum(v in ("better", "worse") for v in verdicts)
    tasks = runs["task_id"].nunique()
    print(f"pool: {args.pool} — {len(runs)} runs of `{args.strategy}` on {args.taskset} ({tasks} tasks × "
          f"{fewest}+ seeds), completion {runs['resolved'].mean():.1%}; simulated model (a stand-in for a model)")
    print("verdicts: " + ", ".join(f"{v} {verdicts.count(v)}" for v in ("better", "worse", "non-inferior",
                                                                        "inconclusive")))
    print(f"trials={args.trials} tasks={tasks} repeats_per_arm={args.repeats} "
          f"primary_false_positive={positives / args.trials:.3f} ({positives}/{args.trials}) "
          f"mcnemar_false_positive={mcnemar / args.trials:.3f} ({mcnemar}/{args.trials}) "
          f"non_inferior={non_inferior / args.trials:.3f} estimable={estimable / args.trials:.3f}")


if __name__ == "__main__":
    main()
