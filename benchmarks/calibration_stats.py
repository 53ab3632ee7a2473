"""Calibration of the verdicts on simulated experiments with a known truth, from ctxbench's own code.

Each simulated experiment draws task base rates from a Beta fitted to context-pressure's per-task
rates, a task × strategy effect (a shift spread over what each task has to gain or lose), a latent
shared between the arms of one (task, repeat) (the shared seed), and lognormal tokens with task and
task × strategy effects (a multiplier of mean 1 times the arm's ratio, so that the ratio of total
tokens over the task population, what the token verdict estimates, is that ratio); then compares the arms with `compare_strategies` exactly as the report does,
and the per-arm intervals with `summarize`. Prints one row per check and one column per design
(tasks × repeats), in Markdown:

| check (nominal) | 5 tasks × 3 | 24 × 3 | 100 × 1 | 300 × 5 |

Each simulation draws three experiments of one design: 5 null candidates (A/A in completion and tokens),
5 candidates truly 5 pts worse (at the non-inferiority margin), and one candidate truly 10 pts better and
×0.8 in tokens beside 4 null ones. The checks:

- token-ratio interval coverage: the ×0.8 candidate's 95 % interval of the ratio of totals (as if
  compared alone: Holm's m = 1) holds 0.8;
- false cheaper/dearer, one candidate: the first null candidate compared alone is called cheaper or dearer;
- any false cheaper/dearer, 5 null strategies with Holm: any of the five is;
- any false non-inferior, 5 strategies at the margin: any of the five is called non-inferior, equivalent
  or better;
- power at 10 pts, one of 5 candidates: the 10-pt candidate is called better, against the mean power
  the "Design and power" section states for 10 pts (`PlanRow.power_at`, from each experiment's own
  data, at α/5 and the size the task-level test reaches there);
- per-arm completion interval coverage of the task-population rate (the baseline arm).

Every cell prints its Monte-Carlo error (one standard error of the share over the simulations). Cells
with "(… too few tasks)" count the experiments whose verdict was "too few tasks": the design can decide
nothing, and says so. Usage:

    python benchmarks/calibration_stats.py [--sims 200] [--seed 1] [--designs 5x3,24x3,100x1,300x5]
                                           [--workers 2]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing

import numpy as np
import pandas as pd

from ctxbench.reports.compare import compare_strategies
from ctxbench.reports.metrics import with_holm
from ctxbench.reports.planning import plan_rows
from ctxbench.reports.summary import summarize

BETA = (0.7, 0.9)
"""Per-task base rates: a Beta close to context-pressure's spread of per-task completion rates."""
SHARED = 0.5
"""Chance that both arms of a (task, repeat) draw the same latent uniform (the shared seed)."""
TOKEN_TASK, TOKEN_TASK_X_STRATEGY, TOKEN_NOISE = 0.8, 0.15, 0.3


def _shifted(base: np.ndarray, points: float) -> np.ndarray:
    """Per-task rates whose mean over the task population is the base's plus `points`, without clipping:
    a rise spread over what is left to gain, a fall over what there is to lose (a task × strategy effect
    that stays within [0, 1])."""
    mean = BETA[0] / sum(BETA)
    return base + points * (1 - base) / (1 - mean) if points >= 0 else base + points * base / mean


def simulate(rng: np.random.Generator, tasks: int, repeats: int, shifts: list[float],
             token_ratios: list[float]) -> pd.DataFrame:
    """One experiment: `baseline` plus one arm per (shift in points of completion, token ratio)."""
    base = rng.beta(*BETA, tasks)
    latent = rng.random((tasks, repeats))
    log_tokens = 9 + rng.normal(0, TOKEN_TASK, tasks)
    arms = [("baseline", 0.0, 1.0)] + [(f"s{i}", d, r) for i, (d, r) in enumerate(zip(shifts, token_ratios))]
    parts = []
    for name, points, ratio in arms:
        u = np.where(rng.random((tasks, repeats)) < SHARED, latent, rng.random((tasks, repeats)))
        resolved = u < _shifted(base, points)[:, None]
        # the task x strategy multiplier has mean 1: the ratio of totals over the task population is `ratio`
        effect = 0.0 if name == "baseline" else (math.log(ratio) - TOKEN_TASK_X_STRATEGY ** 2 / 2
                                                 + rng.normal(0, TOKEN_TASK_X_STRATEGY, (tasks, 1)))
        tokens = np.exp(log_tokens[:, None] + effect + rng.normal(0, TOKEN_NOISE, (tasks, repeats)))
        parts.append(pd.DataFrame({"strategy": name, "task_id": np.repeat([f"t{t:03d}" for t in range(tasks)], repeats),
                                   "repeat": np.tile(np.arange(repeats), tasks), "resolved": resolved.ravel(),
                                   "total_tokens": tokens.ravel()}))
    frame = pd.concat(parts, ignore_index=True)
    frame["seed"] = frame["repeat"]
    frame["failure_reason"] = np.where(frame["resolved"], None, "tests_failed")
    frame["turns"], frame["wall_s"] = 1, 1.0
    return frame


class Cell:
    """A share over simulated experiments, with its Monte-Carlo error, and the undecided apart."""

    def __init__(self) -> None:
        self.hits, self.n, self.too_few = 0, 0, 0

    def add(self, hit: bool, too_few: bool = False) -> None:
        self.n += 1
        self.too_few += too_few
        self.hits += hit

    def __str__(self) -> str:
        if not self.n:
            return "–"
        if self.too_few == self.n:
            return "too few tasks (100 %)"
        p = self.hits / self.n
        text = f"{p:.1%} ± {math.sqrt(max(p * (1 - p), 1 / self.n) / self.n):.1%}"
        return text + (f" ({self.too_few / self.n:.0%} too few tasks)" if self.too_few else "")


Outcome = dict[str, tuple[bool, bool]]
"""Per check: (hit, too few tasks) of one simulated experiment."""


def one_experiment(tasks: int, repeats: int, seed: np.random.SeedSequence) -> tuple[Outcome, float]:
    """Three simulated experiments (5 null candidates; 5 at the margin; one truly 10 pts better and ×0.8 in
    tokens beside 4 null ones) and what each check reads from them, with the power the plan states."""
    rng = np.random.default_rng(seed)
    out: Outcome = {}
    null5 = compare_strategies(simulate(rng, tasks, repeats, [0.0] * 5, [1.0] * 5), "baseline")
    verdicts = [x.tokens.verdict for x in null5]
    out["false5"] = (any(v in ("cheaper", "dearer") for v in verdicts), "too few tasks" in verdicts)
    alone = with_holm(null5[0].tokens, null5[0].tokens.p_value, 1)  # one candidate: Holm's m = 1
    out["false1"] = (alone.verdict in ("cheaper", "dearer"), alone.verdict == "too few tasks")
    margin5 = compare_strategies(simulate(rng, tasks, repeats, [-0.05] * 5, [1.0] * 5), "baseline")
    out["ni5"] = (any(x.completion.verdict in ("non-inferior", "equivalent", "better") for x in margin5), False)
    frame = simulate(rng, tasks, repeats, [0.10] + [0.0] * 4, [0.8] + [1.0] * 4)
    one_true = compare_strategies(frame, "baseline")
    out["power"] = (one_true[0].completion.verdict == "better", False)
    low, high = with_holm(one_true[0].tokens, one_true[0].tokens.p_value, 1).ci
    out["coverage"] = (not math.isnan(low) and low <= 0.8 <= high, math.isnan(low))
    summary = summarize(frame, ["baseline"])[0]
    out["arm"] = (summary.ci_low <= BETA[0] / sum(BETA) <= summary.ci_high, False)
    stated = float(np.nan_to_num(plan_rows(frame, "baseline", 0.10)[0].power_at(0.10)))
    return out, stated


def _one(args: tuple[int, int, np.random.SeedSequence]) -> tuple[Outcome, float]:
    return one_experiment(*args)


def run_design(tasks: int, repeats: int, sims: int, seed: np.random.SeedSequence, workers: int) -> dict[str, str]:
    """The checks' cells for one design over `sims` simulated experiments, `workers` processes."""
    cells = {k: Cell() for k, _ in CHECKS}
    stated: list[float] = []
    jobs = [(tasks, repeats, s) for s in seed.spawn(sims)]
    if workers > 1:
        with multiprocessing.Pool(workers) as pool:
            results = pool.map(_one, jobs, chunksize=max(1, sims // (8 * workers)))
    else:
        results = [_one(job) for job in jobs]
    for outcome, power in results:
        for key, (hit, too_few) in outcome.items():
            cells[key].add(hit, too_few)
        stated.append(power)
    out = {k: str(v) for k, v in cells.items()}
    spread = float(np.std(stated, ddof=1)) / math.sqrt(sims) if sims > 1 else math.nan
    out["power"] += f" vs {np.mean(stated):.1%} ± {spread:.1%} stated"
    return out


CHECKS = [("coverage", "token-ratio interval coverage (95 %)"),
          ("false1", "false cheaper/dearer, one candidate (≤ 5 %)"),
          ("false5", "any false cheaper/dearer, 5 null strategies with Holm (≤ 5 %)"),
          ("ni5", "any false non-inferior, 5 strategies at the margin (≤ 5 %)"),
          ("power", "power at 10 pts, one of 5 candidates, with Holm vs stated"),
          ("arm", "per-arm completion [95 % CI] coverage of the task-population rate")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=200, help="simulated experiments per design (default 200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--designs", default="5x3,24x3,100x1,300x5")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    args = parser.parse_args()
    designs = [tuple(int(x) for x in d.split("x")) for d in args.designs.split(",")]
    seeds = np.random.SeedSequence(args.seed).spawn(len(designs))
    results = {d: run_design(d[0], d[1], args.sims, s, args.workers) for d, s in zip(designs, seeds)}
    print(f"{args.sims} simulated experiments per design (± one Monte-Carlo standard error)\n")
    print("| check (nominal) | " + " | ".join(f"{t} tasks × {r}" for t, r in designs) + " |")
    print("|---|" + "---|" * len(designs))
    for key, label in CHECKS:
        print(f"| {label} | " + " | ".join(results[d][key] for d in designs) + " |")


if __name__ == "__main__":
    main()
