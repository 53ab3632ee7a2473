"""Sequential against fixed designs on simulated experiments with a known truth, from ctxbench's own code.

Each simulated experiment is context-pressure-like: 24 tasks whose base rates come from a Beta close to
context-pressure's per-task rates, a candidate whose per-task rates are shifted by a true difference
spread over what each task has to gain (a task × strategy effect), and a latent shared by both arms of
one (task, repeat) (the shared seed). Up to 10 repeats (rounds) are drawn.

- Sequential design: after every round, the candidate's confidence sequence and verdict
  (ctxbench.harness.records.sequence, as `ctxbench run --until-decided` uses them, goal superiority, alpha
  0.05); it stops at the first verdict that stops it, else after the last round.
- Fixed design: 24 tasks × R repeats, decided once by the report's own task-level test
  (ctxbench.reports.metrics.Completion: the exact sign-flip test over tasks), for R = 1, 2, …. The
  fixed design "of equal power" is the smallest R (up to --fixed-repeats) whose power is at least the
  sequential design's.
- Peeking: the fixed test looked at after every round, stopping at its first better / worse, the
  practice the confidence sequence replaces.

Runs count both arms. Prints the A/A false better / worse rates, then power and mean runs per truth,
with Monte-Carlo errors (±, one standard error). Usage:

    python benchmarks/sequential_stats.py [--sims 400] [--seed 1] [--tasks 24] [--repeats 10] [--fixed-repeats 16]
                                          [--min-effect 0.05]
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from ctxbench.reports.exact import sign_flip
from ctxbench.reports.metrics import Completion, with_holm
from ctxbench.reports.power import variance_parts
from ctxbench.harness.records.sequence import confidence_sequence, decide, stops
from ctxbench.reports.stats import clustered_mean

BETA = (0.7, 0.9)
"""Per-task base rates: a Beta close to context-pressure's spread of per-task completion rates."""
SHARED = 0.5
"""Chance that both arms of a (task, repeat) draw the same latent uniform (the shared seed)."""
ALPHA, MARGIN = 0.05, 0.05
TRUTHS = (0.0, 0.10, 0.20)


def simulate(rng: np.random.Generator, tasks: int, repeats: int, points: float) -> tuple[np.ndarray, np.ndarray]:
    """(reference, candidate) outcomes, tasks × repeats; the candidate's mean rate over the task
    population is the reference's plus `points`, each task gaining in proportion to what it can gain."""
    base = rng.beta(*BETA, tasks)
    rate = base + points * (1 - base) / (1 - BETA[0] / sum(BETA))
    latent = rng.random((tasks, repeats))
    arms = []
    for p in (base, rate):
        u = np.where(rng.random((tasks, repeats)) < SHARED, latent, rng.random((tasks, repeats)))
        arms.append((u < p[:, None]).astype(float))
    return arms[0], arms[1]


def sequential(diff: np.ndarray, max_rounds: int, min_effect: float) -> tuple[str, int]:
    """The sequential design on one experiment: (verdict, rounds run)."""
    rounds: list[np.ndarray] = []
    verdict = "undecided"
    for r in range(max_rounds):
        rounds.append(diff[:, r])
        verdict = decide(confidence_sequence(rounds, ALPHA), "superiority", MARGIN, min_effect)
        if stops(verdict):
            break
    return verdict, len(rounds)


def fixed_verdict(ref: np.ndarray, cand: np.ndarray, repeats: int, seed: int) -> str:
    """The report's completion verdict on the first `repeats` repeats (one candidate: Holm changes nothing)."""
    r, c = ref[:, :repeats].ravel(), cand[:, :repeats].ravel()
    tasks = np.repeat(np.arange(ref.shape[0]), repeats)
    diff = c - r
    per_task = diff.reshape(ref.shape[0], repeats).mean(axis=1)
    m = Completion(rate_reference=float(r.mean()), rate_candidate=float(c.mean()),
                   tasks_better=int((per_task > 0).sum()), tasks_worse=int((per_task < 0).sum()),
                   mean=clustered_mean(diff, tasks), test=sign_flip(per_task, seed),
                   parts=variance_parts(diff, tasks), margin=MARGIN, alpha=ALPHA)
    return with_holm(m, m.p_value, 1, 1).verdict


def share(hits: int, n: int) -> str:
    p = hits / n
    return f"{p:.1%} ± {math.sqrt(max(p * (1 - p), 1 / n) / n):.1%}"


def mean_se(values: list[int]) -> tuple[float, float]:
    x = np.asarray(values, dtype=float)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def run_truth(points: float, args: argparse.Namespace, rng: np.random.Generator) -> dict[str, object]:
    verdicts, rounds, peeked = [], [], 0
    most = max(args.repeats, args.fixed_repeats)
    fixed = np.zeros((most, 3))  # per R: better, worse, either
    for s in range(args.sims):
        ref, cand = simulate(rng, args.tasks, most, points)
        verdict, used = sequential(cand - ref, args.repeats, args.min_effect)
        verdicts.append(verdict)
        rounds.append(used)
        looks = [fixed_verdict(ref, cand, r, seed=s) for r in range(1, most + 1)]
        for i, v in enumerate(looks):
            fixed[i] += (v == "better", v == "worse", v in ("better", "worse"))
        peeked += any(v in ("better", "worse") for v in looks[:args.repeats])
    return {"verdicts": verdicts, "rounds": rounds, "fixed": fixed, "peeked": peeked}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sims", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--repeats", type=int, default=10, help="Most rounds of the sequential design.")
    parser.add_argument("--fixed-repeats", type=int, default=16, help="Largest fixed design tried.")
    parser.add_argument("--min-effect", type=float, default=0.05)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    start = time.perf_counter()
    results = {p: run_truth(p, args, rng) for p in TRUTHS}
    n, per_round = args.sims, 2 * args.tasks
    print(f"{n} simulated experiments per truth; {args.tasks} tasks, up to {args.repeats} rounds; alpha {ALPHA}, "
          f"goal superiority, min_effect {args.min_effect:g}; runs count both arms\n")
    aa = results[0.0]
    wrong = sum(v in ("better", "worse") for v in aa["verdicts"])  # type: ignore[union-attr]
    print("A/A (true difference 0):")
    print(f"- sequential, a look after every round: false better/worse {share(wrong, n)} (nominal ≤ 5 %)")
    fixed_any = aa["fixed"][args.repeats - 1, 2]  # type: ignore[index]
    print(f"- fixed design {args.tasks} × {args.repeats}, one look: false better/worse {share(int(fixed_any), n)}")
    print(f"- fixed test looked at after every round (peeking): false better/worse {share(aa['peeked'], n)}\n")  # type: ignore[arg-type]
    print("| true difference | sequential: better | worse | futile | undecided | sequential runs (mean) | "
          "fixed R of equal power | fixed power | fixed runs | runs saved |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for p, res in results.items():
        verdicts: list[str] = res["verdicts"]  # type: ignore[assignment]
        counts = {k: sum(v == k for v in verdicts) for k in ("better", "worse", "futile", "undecided")}
        runs_mean, runs_se = mean_se([r * per_round for r in res["rounds"]])  # type: ignore[attr-defined]
        power = counts["better"] / n
        fixed: np.ndarray = res["fixed"]  # type: ignore[assignment]
        reaching = [r for r in range(fixed.shape[0]) if fixed[r, 0] / n >= power]
        if p == 0.0 or not reaching:
            equal = "–" if p == 0.0 else f"none up to {fixed.shape[0]} (best {fixed[:, 0].max() / n:.1%})"
            cells = [equal, "–", "–", "–"]
        else:
            r = reaching[0]
            fixed_runs = (r + 1) * per_round
            saved = 1 - runs_mean / fixed_runs
            cells = [str(r + 1), share(int(fixed[r, 0]), n), str(fixed_runs),
                     f"{saved:.0%} ± {runs_se / fixed_runs:.0%}"]
        print(f"| {p * 100:+.0f} pts | " + " | ".join(share(counts[k], n) for k in counts)
              + f" | {runs_mean:.0f} ± {runs_se:.0f} | " + " | ".join(cells) + " |")
    print("\nfixed-design power by repeats (share better):")
    for p, res in results.items():
        fixed = res["fixed"]  # type: ignore[assignment]
        print(f"- {p * 100:+.0f} pts: " + ", ".join(f"R={r + 1} {fixed[r, 0] / n:.0%}" for r in range(fixed.shape[0])))
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
