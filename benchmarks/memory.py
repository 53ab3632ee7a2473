"""The runner's memory on a large experiment of trivial runs.

Builds a one-repository taskset whose test command is `true` (no test framework starts, so a run is
mostly harness work: workspace copy, agent loop, sandboxed test command, diff, result), replaces the
model with a trivial one (list the files, then finish), runs 5 strategies x 2 tasks x N/10 repeats
through `run_experiment` with the local process pool, samples the runner's resident memory while it
runs, and prints as its last line:

    runs=<n> runner_peak_rss_mb=<x> worker_peak_rss_mb=<y> runs_per_s=<z> rss_growth_mb=<g>

- runner_peak_rss_mb: peak resident memory of the runner process (the one writer of runs.jsonl)
- worker_peak_rss_mb: peak resident memory of the largest worker or test process
- rss_growth_mb: runner memory near the end of the runs minus after the first 5% (growth with run count;
  the results list that `run_experiment` returns is read after the runs and is not counted here)

Every run ends `no_edit` (the trivial model changes nothing); that is expected.

Usage: python benchmarks/memory.py [--runs 10000] [--workers 2]
"""

from __future__ import annotations

import argparse
import resource
import tempfile
import threading
import time
from pathlib import Path

import yaml

import ctxbench.harness.run.single_run
from ctxbench.harness.config import load_config
from ctxbench.harness.run.runner import prepare, run_experiment
from overhead import OneCallThenFinish  # the trivial model, from the benchmark next to this one

STRATEGIES = ["baseline", "budget_planner", "summarizer", "trimmer", "file_selector"]

GREET = '''"""Greetings in a few languages."""

GREETINGS = {"en": "Hello", "fr": "Bonjour", "de": "Hallo"}


def greet(name: str, lang: str = "en") -> str:
    return f"{GREETINGS[lang]}, {name}"
'''


def build_taskset(folder: Path) -> Path:
    repo = folder / "repos" / "greet"
    repo.mkdir(parents=True)
    (repo / "greet.py").write_text(GREET)
    (folder / "patches").mkdir()
    diff = ('diff --git a/greet.py b/greet.py\n--- a/greet.py\n+++ b/greet.py\n@@ -2,3 +2,3 @@\n \n'
            '-GREETINGS = {"en": "Hello", "fr": "Bonjour", "de": "Hallo"}\n'
            '+GREETINGS = {"en": "Hello", "fr": "Bonjour", "de": "Hallo", "es": "Hola"}\n \n')
    tasks = []
    for task_id, statement in (("greet-spanish", "greet(name, 'es') raises KeyError; it should say Hola."),
                               ("greet-spanish-report", "Spanish greetings fail with KeyError: 'es'.")):
        (folder / "patches" / f"{task_id}.diff").write_text(diff)
        tasks.append({"id": task_id, "repo": "greet", "problem_statement": statement, "test_cmd": "true",
                      "FAIL_TO_PASS": ["tests/test_greet.py::test_spanish"], "patch": f"patches/{task_id}.diff"})
    (folder / "taskset.yaml").write_text(yaml.safe_dump({"name": "trivial", "tasks": tasks}))
    return folder


def rss_mb(pid: str = "self") -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    repeats = max(1, args.runs // (len(STRATEGIES) * 2))
    # The trivial model replaces the configured one in this process and in the forked workers.
    ctxbench.harness.run.single_run.make_model = lambda config, task, counter, seed: OneCallThenFinish()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        taskset = build_taskset(folder / "taskset")
        exp = folder / "memory.yaml"
        exp.write_text(yaml.safe_dump({
            "name": "memory", "taskset": str(taskset), "repeats": repeats, "workers": args.workers,
            "strategies": [{"name": s} for s in STRATEGIES], "model": {"provider": "sim"}}))
        ctx = prepare(load_config(exp), folder, folder / "out")
        total = repeats * len(STRATEGIES) * 2
        samples: list[tuple[float, float]] = []
        stop = threading.Event()

        def sample() -> None:
            runs = folder / "out" / "runs.jsonl"
            while not stop.is_set():
                done = sum(1 for _ in runs.open()) if runs.exists() else 0
                samples.append((done, rss_mb()))
                stop.wait(0.5)

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        start = time.monotonic()
        results = run_experiment(ctx, progress=None)
        wall = time.monotonic() - start
        stop.set()
        sampler.join()
        samples.append((total, rss_mb()))
        assert len(results) == total, (len(results), total)
        during = [(done, mb) for done, mb in samples[:-1] if done < total] or samples
        early = next((mb for done, mb in during if done >= total * 0.05), during[0][1])
        curve = ", ".join(f"{q}%: {next((mb for done, mb in during if done >= total * q / 100), during[-1][1]):.0f} MB"
                          for q in (5, 25, 50, 75, 95))
        peak = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, max(mb for _, mb in samples))
        worker = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        reasons = {r.failure_reason for r in results}
        print(f"{total} runs in {wall:.0f}s with {args.workers} workers; failure reasons {sorted(map(str, reasons))}; "
              f"runs.jsonl {(folder / 'out' / 'runs.jsonl').stat().st_size / 1e6:.1f} MB")
        print(f"runner resident memory after {curve}; with all {total} results loaded at the end: "
              f"{samples[-1][1]:.0f} MB")
        print(f"runs={total} runner_peak_rss_mb={peak:.0f} worker_peak_rss_mb={worker:.0f} "
              f"runs_per_s={total / wall:.1f} rss_growth_mb={during[-1][1] - early:.1f}")


if __name__ == "__main__":
    main()
