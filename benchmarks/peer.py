"""ctxbench side by side with Inspect AI on the same trivial agentic run, and the cost of containment.

Both run N samples of one trivial task, one after the other in this process tree, at the same load:

- ctxbench: a scripted model calls `run_tests`, whose command is `<this python> -c 'print(6*7)'`, then
  `finish`; the run changes nothing, so it is judged on the base's evaluation, which runs the command
  once per worker (docs/tasksets.md); 2 workers, the bubblewrap sandbox (where it works),
  timed from `prepare` to the end of `run_experiment` (workspaces, results and transcripts written).
- Inspect AI: its peer script (mockllm calls `bash` with `python3 -c 'print(6*7)'`, then `submit`;
  Inspect's local sandbox, no containment), timed around `eval()`. Its bash tool runs a login shell:
  the peer gets an empty HOME, so no user start-up file (a pyenv shim on PATH, say) slows it down.

The floor is measured right before ctxbench's runs: the test command a trivial run starts (its
`run_tests`), `runs` times over `workers` processes, bare and through `run_contained`, with nothing else around them.
Last, the contained-vs-bare overhead of one test command: `run_contained` against `subprocess.run` of
the same argv, median of 50 each, with bubblewrap and without. It prints as its last line

    ctxbench_ms_per_run=<x> inspect_ms_per_sample=<y> ratio=<y/x> contained_overhead_ms=<z>

where contained_overhead_ms is the larger of the two overheads (both are printed above it). Without
the Inspect peer set up it says how to set it up and prints `n/a` for Inspect's figures.

Usage: python benchmarks/peer.py [--runs 200] [--workers 2] [--inspect-kit DIR] [--inspect-env DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import yaml

import ctxbench.harness.run.single_run
from ctxbench.harness.config import load_config
from ctxbench.harness.history import ToolCall
from ctxbench.harness.protocols import Completion, Usage
from ctxbench.harness.run.runner import prepare, run_experiment
from ctxbench.harness.sandbox import Sandbox, choose_sandbox, run_contained
from ctxbench.harness.environments.testenv import test_env_vars

COMMAND = [sys.executable, "-c", "print(6*7)"]


class RunTestsThenFinish:
    """The scripted model: run the tests, then finish."""

    def __init__(self) -> None:
        self.calls = 0

    def complete(self, messages, tools) -> Completion:
        self.calls += 1
        name = "run_tests" if self.calls == 1 else "finish"
        return Completion("", (ToolCall(f"c{self.calls}", name, "{}"),), Usage(1, 1))


def build_taskset(folder: Path) -> Path:
    """One task whose test command is COMMAND, in a one-file repository."""
    (folder / "repos" / "answer").mkdir(parents=True)
    (folder / "repos" / "answer" / "answer.py").write_text("ANSWER = 41\n")
    (folder / "fix.diff").write_text("diff --git a/answer.py b/answer.py\n--- a/answer.py\n+++ b/answer.py\n"
                                     "@@ -1 +1 @@\n-ANSWER = 41\n+ANSWER = 42\n")
    task = {"id": "answer", "repo": "answer", "problem_statement": "Print the answer.", "test_cmd": COMMAND,
            "FAIL_TO_PASS": ["answer"], "patch": "fix.diff"}
    (folder / "taskset.yaml").write_text(yaml.safe_dump({"name": "peer", "tasks": [task]}))
    return folder


def ctxbench_trivial(folder: Path, runs: int, workers: int) -> tuple[float, str]:
    """Milliseconds per run of `runs` trivial runs, and the sandbox used."""
    ctxbench.harness.run.single_run.make_model = lambda config, task, counter, seed: RunTestsThenFinish()
    exp = folder / "peer.yaml"
    exp.write_text(yaml.safe_dump({
        "name": "peer", "taskset": str(build_taskset(folder / "taskset")), "repeats": runs, "workers": workers,
        "sandbox": "bwrap", "strategies": [{"name": "baseline"}], "model": {"provider": "sim"}}))
    config = load_config(exp)
    start = time.perf_counter()
    ctx = prepare(config, folder, folder / "out")
    results = run_experiment(ctx, progress=False)
    wall = time.perf_counter() - start
    assert len(results) == runs and all(r.tool_calls == {"run_tests": 1, "finish": 1} for r in results), \
        {r.failure_reason for r in results}
    return 1000 * wall / runs, ctx.sandbox.mode


def inspect_trivial(kit: Path | None, env: Path | None, runs: int) -> float | None:
    """Inspect's milliseconds per sample from its peer script, or None when it is not set up."""
    python = env / "venv" / "bin" / "python" if env else None
    if kit is None or not (kit / "agentic.py").is_file() or python is None or not python.exists():
        print("Inspect AI peer not set up: run `setup.sh DIR` from the Inspect peer kit (it builds Inspect AI "
              "and an offline tiktoken cache under DIR), then pass --inspect-kit KIT --inspect-env DIR "
              "(or set CTXBENCH_INSPECT_KIT and CTXBENCH_INSPECT_ENV)", file=sys.stderr)
        return None
    # Inspect's bash tool runs a login shell, which reads the user's shell start-up files; an empty HOME
    # keeps them out (a ~/.bashrc that puts a pyenv shim first on PATH costs ~160 ms a `python3` start,
    # which would be charged to Inspect). Its `python3` is then the system's, found on the login PATH.
    with tempfile.TemporaryDirectory(prefix="ctxbench-peer-home-") as home:
        proc = subprocess.run([str(python), str(kit / "agentic.py"), str(runs)], capture_output=True, text=True,
                              env={**os.environ, "HOME": home, "TIKTOKEN_CACHE_DIR": str(env / "tkcache")})
    match = re.search(r"ms_per_sample=([0-9.]+)", proc.stdout)
    if proc.returncode != 0 or match is None:
        sys.exit(f"the Inspect AI peer failed (exit {proc.returncode}):\n{proc.stdout[-1000:]}{proc.stderr[-2000:]}")
    print(proc.stdout.strip().splitlines()[-1])
    return float(match.group(1))


def _bare(work: Path, env: dict[str, str]) -> None:
    subprocess.run(COMMAND, cwd=work / "repo", env=env, stdin=subprocess.DEVNULL, capture_output=True)


def _contained(work: Path, env: dict[str, str], sandbox: Sandbox) -> str:
    return run_contained(COMMAND, work / "repo", 30, env, sandbox, writable=work).output


def contained_overhead(folder: Path, mode: str, samples: int = 50) -> tuple[float, float, str]:
    """Median milliseconds of the test command bare and through `run_contained`, interleaved."""
    sandbox = choose_sandbox(mode)
    work = folder / f"contained-{mode}"
    (work / "repo").mkdir(parents=True)
    env = test_env_vars(work / "repo")
    bare, contained = [], []
    for _ in range(samples):
        start = time.perf_counter()
        _bare(work, env)
        bare.append(time.perf_counter() - start)
        start = time.perf_counter()
        output = _contained(work, env, sandbox)
        contained.append(time.perf_counter() - start)
        assert output.strip() == "42", output
    return 1000 * statistics.median(bare), 1000 * statistics.median(contained), sandbox.mode


def _commands(work: Path, mode: str | None, count: int) -> None:
    env = test_env_vars(work / "repo")
    sandbox = choose_sandbox(mode) if mode else None
    for _ in range(count):
        if sandbox is None:
            _bare(work, env)
        else:
            _contained(work, env, sandbox)


def command_floor(folder: Path, runs: int, workers: int, mode: str | None) -> float:
    """Milliseconds per run of the test command alone, as a trivial run starts it (its `run_tests`),
    `runs` times, spread over `workers` forked processes; bare (`mode` None) or through `run_contained`.
    What a harness would take that did nothing else."""
    work = folder / f"floor-{mode}"
    (work / "repo").mkdir(parents=True)
    shares = [runs // workers + (i < runs % workers) for i in range(workers)]
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork")) as pool:
        pool.submit(int).result()  # the workers are up before the clock starts
        start = time.perf_counter()
        list(pool.map(_commands, [work] * workers, [mode] * workers, shares))
        return 1000 * (time.perf_counter() - start) / runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--inspect-kit", type=Path, default=os.environ.get("CTXBENCH_INSPECT_KIT"),
                        help="folder holding the Inspect peer's agentic.py")
    parser.add_argument("--inspect-env", type=Path, default=os.environ.get("CTXBENCH_INSPECT_ENV"),
                        help="folder the kit's setup.sh built (venv/, tkcache/)")
    args = parser.parse_args()
    installed = "editable" if "site-packages" not in ctxbench.harness.run.single_run.__file__ else "from a wheel"
    print(f"python {sys.executable} (ctxbench installed {installed}); load average {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        mode = choose_sandbox("bwrap").mode
        bare_floor = command_floor(folder, args.runs, args.workers, None)  # right before ctxbench: the same load
        contained_floor = command_floor(folder, args.runs, args.workers, mode)
        ours, mode = ctxbench_trivial(folder, args.runs, args.workers)
        print(f"ctxbench n={args.runs} workers={args.workers} sandbox={mode} ms_per_run={ours:.1f}")
        print(f"floor: the trivial run's test command alone, n={args.runs} workers={args.workers}: "
              f"bare {bare_floor:.1f} ms per run, contained (sandbox {mode}) {contained_floor:.1f} ms per run; "
              f"ctxbench's own share {ours - contained_floor:.1f} ms per run")
        theirs = inspect_trivial(args.inspect_kit, args.inspect_env, args.runs)
        overheads = []
        for requested in ("none", "bwrap"):
            bare, contained, used = contained_overhead(folder, requested)
            overheads.append(contained - bare)
            print(f"test command, median of 50: bare {bare:.1f} ms, contained (sandbox {used}) {contained:.1f} ms, "
                  f"overhead {contained - bare:.1f} ms")
    ratio = f"{theirs / ours:.2f}" if theirs is not None else "n/a"
    print(f"ctxbench_ms_per_run={ours:.1f} inspect_ms_per_sample={theirs if theirs is not None else 'n/a'} "
          f"ratio={ratio} contained_overhead_ms={max(overheads):.1f}")


if __name__ == "__main__":
    main()
