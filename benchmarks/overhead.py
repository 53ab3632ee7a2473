"""Harness overhead on this machine.

Runs a fixed experiment (the smoke taskset, two strategies, the simulator) with 1 and 2 workers,
alternated for `--rounds` rounds (the figures are the rounds' medians: on a shared VM one pair says
little), then trivial runs (one tool call, then finish), and prints as its last line:

    overhead_ratio=<x> speedup_2w=<y> per_run_overhead_ms=<z> retokenized_share=<w>

- overhead_ratio: wall time x workers / sum of the wall times of the test subprocesses (1.0 is the floor)
- speedup_2w: 1-worker wall / 2-worker wall on the same experiment
- per_run_overhead_ms: the harness's own time per trivial run, test subprocesses excluded
- retokenized_share: tokens encoded by the tokenizer / tokens sent in contexts (caching keeps it low)

Above that line it prints what the machine itself gives two processes before each round: a pure-Python
CPU loop run twice in one process, then once in each of two processes (`machine_scaling_2w`). On a
shared VM that figure moves between runs, and speedup_2w cannot exceed it by much.

Usage: python benchmarks/overhead.py [--repeats N] [--trivial N] [--rounds N]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import statistics
import tempfile
import time
from pathlib import Path

import yaml

from ctxbench.harness.config import load_config
from ctxbench.harness.history import ToolCall
from ctxbench.harness.protocols import Completion, Usage
from ctxbench.harness.run.runner import counter_for, plan_runs, prepare, run_experiment, run_one

ROOT = Path(__file__).resolve().parent.parent


class OneCallThenFinish:
    """A trivial model: list the files, then finish."""

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages, tools) -> Completion:
        self.calls += 1
        name = "list_files" if self.calls == 1 else "finish"
        return Completion("", (ToolCall(f"c{self.calls}", name, "{}"),), Usage(1, 1))


def experiment(folder: Path, repeats: int, workers: int) -> Path:
    path = folder / f"bench-{workers}.yaml"
    path.write_text(yaml.safe_dump({
        "name": "overhead", "taskset": str(ROOT / "tasksets" / "smoke"), "repeats": repeats, "workers": workers,
        "strategies": [{"name": "baseline"}, {"name": "trimmer"}], "model": {"provider": "sim"},
    }))
    return path


def timed_run(folder: Path, repeats: int, workers: int, label: str) -> tuple[float, list]:
    config = load_config(experiment(folder, repeats, workers))
    ctx = prepare(config, folder, folder / f"out-{label}")
    start = time.monotonic()
    results = run_experiment(ctx, progress=False)
    return time.monotonic() - start, results


def _spin(n: int = 4_000_000) -> int:
    total = 0
    for i in range(n):
        total += i * i
    return total


def machine_scaling() -> float:
    """How much faster two CPU-bound processes finish two loops than one process does, here and now."""
    start = time.monotonic()
    _spin(), _spin()
    one = time.monotonic() - start
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pool.map(abs, [0, 0])  # both processes are up before the clock starts
        start = time.monotonic()
        pool.map(_spin, [4_000_000, 4_000_000], chunksize=1)
        two = time.monotonic() - start
    return one / two


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--trivial", type=int, default=40)
    parser.add_argument("--rounds", type=int, default=3,
                        help="1-worker and 2-worker runs, alternated; the figures are the rounds' medians")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        counter = counter_for("cl100k_base")
        rounds = []  # (machine scaling, 1-worker wall, 2-worker wall, 2-worker test seconds)
        for n in range(args.rounds):
            scaling = machine_scaling()
            wall1, results1 = timed_run(folder, args.repeats, 1, f"{n}-1")
            if n == 0:
                encoded, sent = counter.encoded_tokens, sum(r.prompt_tokens for r in results1)
            wall2, results2 = timed_run(folder, args.repeats, 2, f"{n}-2")
            test_s2 = sum(r.test_s for r in results2)
            rounds.append((scaling, wall1, wall2, test_s2))
            print(f"round {n + 1}: machine_scaling_2w={scaling:.2f}; 1 worker {wall1:.1f}s, 2 workers {wall2:.1f}s "
                  f"for {len(results2)} runs (speedup {wall1 / wall2:.2f}); test subprocesses {test_s2:.1f}s "
                  f"(overhead ratio {wall2 * 2 / test_s2:.3f}); sandbox "
                  f"{json.loads((folder / f'out-{n}-2' / 'manifest.json').read_text())['sandbox']['used']}")
        speedup = statistics.median(w1 / w2 for _, w1, w2, _ in rounds)
        ratio = statistics.median(w2 * 2 / t for _, _, w2, t in rounds)
        print(f"machine_scaling_2w={statistics.median(r[0] for r in rounds):.2f} (median of the rounds: two "
              "CPU-bound processes against one, measured before each round)")

        config = load_config(experiment(folder, 1, 1))
        ctx = prepare(config, folder, folder / "trivial")
        spec = plan_runs(config, ctx.taskset)[0]
        run_one(ctx, spec, model_factory=lambda t, c, s: OneCallThenFinish())  # warm caches
        own = []
        for _ in range(args.trivial):
            r = run_one(ctx, spec, model_factory=lambda t, c, s: OneCallThenFinish()).result
            own.append(r.wall_s - r.test_s)
        own.sort()
        per_run_ms = 1000 * sum(own) / len(own)
        print(f"trivial runs: {len(own)}, harness time per run: mean {per_run_ms:.1f} ms, "
              f"median {1000 * own[len(own) // 2]:.1f} ms")
    print(f"overhead_ratio={ratio:.3f} speedup_2w={speedup:.2f} "
          f"per_run_overhead_ms={per_run_ms:.1f} retokenized_share={encoded / max(sent, 1):.3f}")


if __name__ == "__main__":
    main()
