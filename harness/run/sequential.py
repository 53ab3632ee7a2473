"""Sequential experiments: the arms run in rounds, and each candidate stops as soon as it is decided.

Round 1 runs every task at repeat 0, round k repeat k − 1, for the reference and every candidate not
yet decided. After each round every running candidate's confidence sequence against the reference
(ctxbench.harness.records.sequence) is updated; a candidate whose verdict stops it for the experiment's goal
runs no more. The experiment ends when every candidate is decided or after `max_repeats` rounds.
sequential.json records every look; `--resume` replays the recorded rounds as they were decided and
looks only at rounds that were never looked at, so resuming adds no look.

A nightly run (`previous`) pairs each strategy with itself in the previous run of the experiment instead,
on the same (task, repeat) and so the same seeds, with the goal non-inferiority: a strategy stops once it
is non-inferior (or better) or worse than it was, and one the previous run lacks runs every round.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ctxbench.harness.config import ExperimentConfig
from ctxbench.harness.errors import InputError
from ctxbench.harness.records import RunResult
from ctxbench.harness.run.runner import RunContext, RunSpec, run_experiment
from ctxbench.harness.config.sequential import (SEQUENTIAL_FILE, ArmDecision, ArmLook, RoundRecord,
                                                SequentialRecord, read_sequential)
from ctxbench.harness.records.sequence import Goal, arm_level, confidence_sequence, decide, fewest_deciding_pairs, stops

__all__ = ["SEQUENTIAL_FILE", "PreviousRun", "reference_arm", "check_sequential", "check_nightly_sequential",
           "design_line", "rounds_line", "round_differences", "run_sequential"]

DEFAULT_REFERENCE = "baseline"


def reference_arm(config: ExperimentConfig) -> str:
    """The arm the candidates are compared with: `sequential.reference`, else the arm labelled
    `baseline`, else the first arm running the baseline strategy, else the first arm.

    Raises:
        InputError: `sequential.reference` names no arm.
    """
    keys = [s.key for s in config.strategies]
    named = config.sequential.reference if config.sequential else None
    if named is not None:
        if named not in keys:
            raise InputError(f"sequential.reference: {named!r} is not an arm of the experiment (arms: {', '.join(keys)})")
        return named
    if DEFAULT_REFERENCE in keys:
        return DEFAULT_REFERENCE
    return next((s.key for s in config.strategies if s.name == DEFAULT_REFERENCE), keys[0])


def check_sequential(config: ExperimentConfig, flag: str = "sequential") -> None:
    """A sequential experiment compares a reference with at least one candidate.

    Raises:
        InputError: fewer than two arms, or an unknown reference.
    """
    if len(config.strategies) < 2:
        raise InputError(f"{flag}: needs at least two strategies (a reference and a candidate), the experiment has "
                         f"{len(config.strategies)}: {', '.join(s.key for s in config.strategies)}")
    reference_arm(config)


def design_line(config: ExperimentConfig, tasks: int) -> str:
    """What a sequential experiment of `tasks` tasks can decide at most, said before it starts: the
    smallest difference any sample can decide (its pairs all one way but the fewest needed, the rest
    tied), a warning when it is above 50 pts or when no sample decides anything."""
    seq = config.sequential
    assert seq is not None
    alpha = arm_level(seq.alpha, max(1, len(config.strategies) - 1))
    rounds, pairs = config.planned_repeats, tasks * config.planned_repeats
    fewest = fewest_deciding_pairs(pairs, alpha)
    design = f"{tasks} tasks × at most {rounds} rounds at α = {alpha:.3g} per candidate"
    if fewest is None:
        return (f"warning: this sequential experiment cannot decide: with {design}, a candidate that won (or lost) "
                f"every one of its {pairs} pairs would still end undecided; add tasks or rounds "
                "(sequential.max_repeats)")
    share = fewest / pairs
    return (("warning: " if share > 0.5 else "") + f"{design} decide better or worse only where at least {fewest} of "
            f"a candidate's {pairs} pairs go one way and the rest tie (a difference of {share * 100:.0f} pts or more); "
            "a smaller difference ends undecided")


def rounds_line(record: SequentialRecord) -> str:
    """How the rounds ended, in one line: the rounds run and each candidate's verdict, e.g. "3 rounds of at
    most 3: `trimmer` worse after round 2 (8 runs, 12 in the fixed design); `masking` undecided after 3
    rounds (the maximum) (12 runs, 12 in the fixed design)"."""
    arms = "; ".join(f"`{d.strategy}` {d.verdict} " + (f"after {d.round} rounds (the maximum)" if d.verdict == "undecided"
                                                        else f"after round {d.round}")
                     + f" ({d.runs} runs, {d.fixed_runs} in the fixed design)" for d in record.decisions)
    return f"{len(record.rounds)} rounds of at most {record.max_repeats}: {arms or 'no candidate looked at'}"


def check_nightly_sequential(config: ExperimentConfig) -> None:
    """A nightly's rounds compare each strategy with itself in the previous run, for non-inferiority.

    Raises:
        InputError: the `sequential:` block sets `goal` or `reference`, which a nightly does not use.
    """
    seq = config.sequential
    for key in ("goal", "reference"):
        if seq is not None and key in seq.model_fields_set:
            raise InputError(f"sequential.{key}: a nightly run compares each strategy with itself in the previous run, "
                             "for non-inferiority within sequential.margin; leave sequential.goal and "
                             "sequential.reference out")


@dataclass(frozen=True)
class PreviousRun:
    """The run a nightly compares with: each strategy is paired with itself there, on (task, repeat)."""

    name: str
    """Its folder's name in the history."""
    results: list[RunResult]


def round_differences(results: list[RunResult], reference: str, candidate: str, tasks: list[str],
                      repeat: int) -> np.ndarray:
    """One round's paired differences, candidate − reference resolved, one per task (NaN where either
    run is missing or ended in `harness_error`)."""
    outcome: dict[tuple[str, str], float] = {
        (r.strategy, r.task_id): float(r.resolved) for r in results
        if r.repeat == repeat and r.failure_reason != "harness_error" and r.strategy in (reference, candidate)}
    return np.array([outcome.get((candidate, t), np.nan) - outcome.get((reference, t), np.nan) for t in tasks])


def _look(results: list[RunResult], record: SequentialRecord, candidate: str, partner: str, tasks: list[str],
          repeats: int) -> ArmLook:
    rounds = [round_differences(results, partner, candidate, tasks, r) for r in range(repeats)]
    bounds = confidence_sequence(rounds, record.arm_alpha)
    verdict = decide(bounds, record.goal, record.margin, record.min_effect)
    runs = sum(1 for r in results if r.strategy == candidate)
    return ArmLook(strategy=candidate, runs=runs, pairs=bounds.pairs,
                   estimate=None if bounds.pairs == 0 else bounds.estimate,
                   low=bounds.low, high=bounds.high, verdict=verdict)


@dataclass(frozen=True)
class _Pairing:
    """Whom each candidate is compared with, which arms run every round, and the runs compared with
    that this experiment does not run (a nightly's previous run, relabelled)."""

    reference: str
    """As sequential.json names it."""
    partner: dict[str, str]
    always: set[str]
    outside: list[RunResult]
    goal: Goal
    max_repeats: int
    against: str | None = None


def _pairing(config: ExperimentConfig, previous: PreviousRun | None) -> _Pairing:
    seq = config.sequential
    assert seq is not None
    if previous is None:
        check_sequential(config)
        reference = reference_arm(config)
        return _Pairing(reference, {s.key: reference for s in config.strategies if s.key != reference}, {reference}, [],
                        seq.goal, config.planned_repeats)
    check_nightly_sequential(config)
    before = {r.strategy for r in previous.results}
    partner = {s.key: f"{s.key} in {previous.name}" for s in config.strategies if s.key in before}
    outside = [r.model_copy(update={"strategy": partner[r.strategy]}) for r in previous.results if r.strategy in partner]
    repeats = 1 + max((r.repeat for r in previous.results), default=0)
    return _Pairing("itself in the previous run", partner, {s.key for s in config.strategies if s.key not in before},
                    outside, "non_inferiority", min(config.planned_repeats, repeats), previous.name)


def _open_record(ctx: RunContext, resume: bool, pairing: _Pairing) -> SequentialRecord:
    seq = ctx.config.sequential
    assert seq is not None
    recorded = read_sequential(ctx.output_dir) if resume else None
    if recorded is not None:
        return recorded
    return SequentialRecord(reference=pairing.reference, against=pairing.against, goal=pairing.goal,
                            alpha=seq.alpha, arm_alpha=arm_level(seq.alpha, max(1, len(pairing.partner))),
                            margin=seq.margin, min_effect=seq.min_effect, max_repeats=pairing.max_repeats,
                            tasks=len(ctx.taskset.tasks))


def run_sequential(ctx: RunContext, resume: bool = False, progress: Any = None,
                   previous: PreviousRun | None = None) -> list[RunResult]:
    """Run a sequential experiment (ctx.config.sequential) into ctx.output_dir; returns every result.

    Args:
        previous: A nightly's previous run of the experiment: each strategy is compared with itself
            there (rounds up to its repeats), rather than with a reference arm of this experiment.

    Raises:
        InputError: fewer than two arms, an unknown reference, or an unreadable sequential.json; for a
            nightly, a `goal` or `reference` in the `sequential:` block.
        ExperimentAborted: as run_experiment; the rounds looked at are recorded, `resume` goes on.
    """
    pairing = _pairing(ctx.config, previous)
    record = _open_record(ctx, resume, pairing)
    tasks = [t.id for t in ctx.taskset.tasks]
    stopped = {look.strategy for rnd in record.rounds for look in rnd.arms if stops(look.verdict)}
    results: list[RunResult] = []
    for repeat in range(len(record.rounds), record.max_repeats):
        running = [key for key in pairing.partner if key not in stopped]
        if not running:
            break
        arms = {*pairing.always, *running}

        def select(spec: RunSpec) -> bool:
            return spec.strategy in arms and spec.repeat <= repeat

        results = run_experiment(ctx, resume=resume or repeat > 0, progress=progress, select=select)
        looks = [_look(results + pairing.outside, record, key, pairing.partner[key], tasks, repeat + 1)
                 for key in running]
        record.rounds.append(RoundRecord(round=repeat + 1, repeat=repeat, runs=len(results), arms=looks))
        stopped |= {look.strategy for look in looks if stops(look.verdict)}
        _write(ctx.output_dir / SEQUENTIAL_FILE, record)
    if not results:  # every round was looked at before: the runs as recorded
        results = run_experiment(ctx, resume=True, progress=progress, select=lambda spec: False)
    record.finished = True
    record.decisions = _decisions(record, list(pairing.partner))
    _write(ctx.output_dir / SEQUENTIAL_FILE, record)
    return results


def _decisions(record: SequentialRecord, candidates: list[str]) -> list[ArmDecision]:
    out = []
    for key in candidates:
        looks = [(rnd.round, look) for rnd in record.rounds for look in rnd.arms if look.strategy == key]
        if not looks:
            continue
        decided = next(((n, look) for n, look in looks if stops(look.verdict)), looks[-1])
        n, look = decided
        out.append(ArmDecision(strategy=key, verdict=look.verdict, round=n, runs=look.runs,
                               fixed_runs=record.tasks * record.max_repeats, low=look.low, high=look.high))
    return out


def _write(path: Path, record: SequentialRecord) -> None:
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(record.model_dump_json(indent=2), encoding="utf-8")
    os.replace(tmp, path)
