"""Error rates of the non-inferiority and equivalence verdicts on simulated experiments with a known truth.

Each simulated experiment pairs a reference and one candidate on T tasks × R repeats, the model of
benchmarks/calibration_stats.py: per-task base rates from a Beta close to context-pressure's, a latent
shared by both arms of a (task, repeat) half of the time (the shared seed), the candidate's rates shifted
so that the mean over the task population moves by the true difference, spread over what each task has
to gain or lose (a task × strategy effect). "Tied" designs make a share of the tasks resolved by neither
arm, ever (the difference then sits on the other tasks). The completion verdict is the report's own
(`ctxbench.reports.metrics.Completion`, one candidate: Holm changes nothing).

Errors, each nominal ≤ 5 %:
- at the margin (true difference −5 pts): called non-inferior, equivalent or better;
- at the other margin (+5 pts): called equivalent.
Beside them, the same calls under the rule the verdicts used before (the larger p of the sign-flip test
shifted by the margin and the task-clustered t test), and the power: called non-inferior (or equivalent, or
better) when the truth is 0 and +10 pts. Every share prints its Monte-Carlo error (one standard error).

Usage: python benchmarks/ni_calibration.py [--sims 4000] [--seed 1] [--workers 2]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import time
from dataclasses import replace

import numpy as np

from ctxbench.reports.exact import sign_flip
from ctxbench.reports.metrics import Completion, with_holm
from ctxbench.reports.power import variance_parts
from ctxbench.reports.stats import clustered_mean
from ctxbench.reports.tdist import t_cdf

BETA = (0.7, 0.9)
"""Per-task base rates: a Beta close to context-pressure's spread of per-task completion rates."""
SHARED = 0.5
"""Chance that both arms of a (task, repeat) draw the same latent uniform (the shared seed)."""
MARGIN, ALPHA = 0.05, 0.05
DESIGNS = ((5, 3, 0.0), (6, 3, 0.0), (8, 3, 0.0), (24, 3, 0.0), (100, 1, 0.0), (5, 3, 0.8), (10, 5, 0.8), (24, 3, 0.8))
"""(tasks, repeats, share of tasks resolved by neither arm)."""
TRUTHS = (-0.05, 0.05, 0.0, 0.10)
NOT_WORSE = ("non-inferior", "equivalent", "better")


def simulate(rng: np.random.Generator, tasks: int, repeats: int, points: float, tied: float
             ) -> tuple[np.ndarray, np.ndarray]:
    """(reference, candidate) outcomes, tasks × repeats, with a true mean difference of `points`."""
    base = rng.beta(*BETA, tasks)
    neither = rng.random(tasks) < tied
    mean = BETA[0] / sum(BETA)
    share = points / (1 - tied)  # the difference sits on the tasks that are not tied
    rate = base + share * base / mean if share < 0 else base + share * (1 - base) / (1 - mean)
    base, rate = np.where(neither, 0.0, base), np.where(neither, 0.0, rate)
    latent = rng.random((tasks, repeats))
    arms = []
    for p in (base, rate):
        u = np.where(rng.random((tasks, repeats)) < SHARED, latent, rng.random((tasks, repeats)))
        arms.append((u < p[:, None]).astype(float))
    return arms[0], arms[1]


def completion(ref: np.ndarray, cand: np.ndarray) -> Completion:
    """The report's completion record of one candidate (Holm's m = 1)."""
    tasks, repeats = ref.shape
    diff = (cand - ref).ravel()
    clusters = np.repeat(np.arange(tasks), repeats)
    per_task = (cand - ref).mean(axis=1)
    m = Completion(rate_reference=float(ref.mean()), rate_candidate=float(cand.mean()),
                   tasks_better=int((per_task > 0).sum()), tasks_worse=int((per_task < 0).sum()),
                   mean=clustered_mean(diff, clusters), test=sign_flip(per_task), parts=variance_parts(diff, clusters),
                   margin=MARGIN, alpha=ALPHA)
    m = with_holm(m, m.p_value, 1, 1)
    return replace(m, ni_holm_p=m.ni_p, ni_holm_factor=1)


def previous_rule(m: Completion) -> str:
    """The verdict under the rule used before: non-inferiority and equivalence from the larger p of the
    sign-flip test shifted by the margin and the task-clustered t test."""
    if not math.isnan(m.holm_p) and m.holm_p < ALPHA and m.difference != 0:
        return "better" if m.difference > 0 else "worse"

    def t_p(mu: float, greater: bool) -> float:
        if not m.mean.estimable:
            return 0.0
        t = (m.mean.estimate - mu) / m.mean.se
        return 1 - t_cdf(t, m.mean.df) if greater else t_cdf(t, m.mean.df)

    ni = max(m.test.p_value(-MARGIN, "greater"), t_p(-MARGIN, True))
    if ni < ALPHA:
        upper = max(m.test.p_value(MARGIN, "less"), t_p(MARGIN, False))
        return "equivalent" if upper < ALPHA else "non-inferior"
    return "inconclusive"


def one_design(args: tuple[int, int, float, float, int, np.random.SeedSequence]) -> dict[str, list[int]]:
    """Counts of the verdicts of `sims` experiments of one design and truth: {verdict: [now, before]}."""
    tasks, repeats, tied, truth, sims, seed = args
    rng = np.random.default_rng(seed)
    counts: dict[str, list[int]] = {}
    for _ in range(sims):
        m = completion(*simulate(rng, tasks, repeats, truth, tied))
        for i, verdict in enumerate((m.verdict, previous_rule(m))):
            counts.setdefault(verdict, [0, 0])[i] += 1
    return counts


def share(hits: int, n: int) -> str:
    """e.g. "5.3% ± 0.4%", "0.30% ± 0.09%" below 1 %; none of n as "0 of n" (the share is then below 3/n
    with 95 % confidence)."""
    if hits == 0:
        return f"0 of {n}"
    p = hits / n
    digits = 2 if p < 0.01 else 1
    return f"{p:.{digits}%} ± {math.sqrt(max(p * (1 - p), 1 / n) / n):.{digits}%}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=4000, help="simulated experiments per design and truth")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    start = time.perf_counter()
    jobs = [(t, r, tied, truth, args.sims, seed) for (t, r, tied), seeds in
            zip(DESIGNS, np.random.SeedSequence(args.seed).spawn(len(DESIGNS)))
            for truth, seed in zip(TRUTHS, seeds.spawn(len(TRUTHS)))]
    with multiprocessing.Pool(args.workers) as pool:
        results = pool.map(one_design, jobs, chunksize=1)
    counts = {(j[0], j[1], j[2], j[3]): c for j, c in zip(jobs, results)}
    n = args.sims

    def cell(design: tuple[int, int, float], truth: float, verdicts: tuple[str, ...], which: int) -> str:
        c = counts[(*design, truth)]
        return share(sum(c.get(v, [0, 0])[which] for v in verdicts), n)

    print(f"{n} simulated experiments per design and truth (± one Monte-Carlo standard error); one candidate, "
          f"margin {MARGIN * 100:g} pts, α = {ALPHA:g}\n")
    print("| design | at −5 pts: called non-inferior, equivalent or better (≤ 5 %) | before | at +5 pts: called "
          "equivalent (≤ 5 %) | before | power at 0: non-inferior or better | before | power at +10 pts | before |")
    print("|---|---|---|---|---|---|---|---|---|")
    for design in DESIGNS:
        t, r, tied = design
        name = f"{t} × {r}" + (f", {tied:.0%} tied" if tied else "")
        cells = [cell(design, -0.05, NOT_WORSE, 0), cell(design, -0.05, NOT_WORSE, 1),
                 cell(design, 0.05, ("equivalent",), 0), cell(design, 0.05, ("equivalent",), 1),
                 cell(design, 0.0, NOT_WORSE, 0), cell(design, 0.0, NOT_WORSE, 1),
                 cell(design, 0.10, NOT_WORSE, 0), cell(design, 0.10, NOT_WORSE, 1)]
        print(f"| {name} | " + " | ".join(cells) + " |")
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
