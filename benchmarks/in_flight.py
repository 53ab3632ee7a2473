"""Runs in flight against a slow endpoint: ctxbench and Inspect AI on the same latency server.

For each latency and concurrency C it starts the benchmark kit's latency server (loopback; it answers
every chat completion after the latency, calling the test tool, then the finishing tool), then runs,
one after the other on it:

- ctxbench, from its installed package (`ctxbench run` of the interpreter running this script), the
  `openai` provider, the trivial one-task taskset of benchmarks/peer.py, `max_runs` = C, repeats = runs;
- Inspect AI, where its peer kit is set up: its `openai` provider, react with `bash`, `max_connections`
  = `max_samples` = C, the same number of samples.

Each side prints: runs per second, efficiency (runs per second ÷ C / (2 calls × latency); and the same
from the first call to the last reply the server saw, `efficiency_while_calling`, which leaves each
side's start-up out), the peak of
calls in flight the server saw, the peak resident and proportional memory of its process tree, CPU per
run (its process tree, the server's excluded), and for ctxbench the ratio of its throughput to Inspect's.

`--storm` runs ctxbench twice at one latency and C instead: storm-free, then with 30 % of the calls
answered 429 for `--storm-s` seconds from `--storm-at` on; it prints both times, their ratio, the runs
that ended in model_error and the manifest's `concurrency` (the limit's lowest value and the 429s seen).

`--capacity N` runs ctxbench once at one latency and C against an endpoint that refuses (429, at once)
every call beyond N in flight, and prints its pace against the capacity's (N / (2 calls × latency)),
the server's mean of calls in flight while calling, and the refusals.

`--executor ray` runs ctxbench's side on a local Ray runtime of `--workers` CPUs (actors holding
`C / workers` runs each) and leaves Inspect's out.

Usage: python benchmarks/in_flight.py [--latency 0.5 2] [--concurrency 8 32 128 512] [--runs-per-c 3]
           [--inspect-env DIR] [--kit ../shared/bench/latency] [--executor ray] [--storm | --capacity N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer import build_taskset  # noqa: E402  (the same trivial taskset)

KIT = next((k for k in (Path(__file__).resolve().parents[i] / "shared" / "bench" / "latency" for i in (2, 3))
            if (k / "latency_server.py").exists()), Path("../shared/bench/latency"))
"""The benchmark kit's latency server: `../shared/bench/latency` beside the checkout (or one level up)."""

STORM_SERVER = """
import random, sys, time
sys.path.insert(0, {kit!r})
import latency_server as s
plain, start = s.chat, time.monotonic()
s.STATS.refused = 0
async def chat(body):
    storm = {at} <= time.monotonic() - start < {at} + {length} and random.random() < {share}
    if storm or s.STATS.in_flight >= {capacity}:
        s.STATS.refused += 1
        return 429, {{"error": {{"message": "rate limited", "type": "rate_limit_error"}}}}
    return await plain(body)
counts = s.Stats.as_dict
s.Stats.as_dict = lambda self: {{**counts(self), "refused": getattr(self, "refused", 0)}}
s.chat = chat
sys.argv = [sys.argv[0], *sys.argv[1:]]
s.main()
"""

INSPECT_SCRIPT = """
import sys, tempfile, time
from inspect_ai import Task, eval
from inspect_ai.agent import react
from inspect_ai.dataset import Sample
from inspect_ai.scorer import includes
from inspect_ai.tool import bash
n, c = int(sys.argv[1]), int(sys.argv[2])
task = Task(dataset=[Sample(input=f"run #{i}", target="42") for i in range(n)],
            solver=react(tools=[bash(timeout=30)]), scorer=includes(), sandbox="local")
t = time.perf_counter()
logs = eval(task, model="openai/latency-sim", model_base_url=sys.argv[3], model_args={"responses_api": False},
            max_connections=c, max_samples=c, log_dir=tempfile.mkdtemp(), display="none")
print(f"inspect n={n} status={logs[0].status} eval_s={time.perf_counter() - t:.2f}")
sys.exit(0 if logs[0].status == "success" else 2)
"""


class Server:
    """The latency server in a process of its own (optionally with a 429 storm)."""

    def __init__(self, kit: Path, latency: float, storm: tuple[float, float] | None = None,
                 capacity: int | None = None) -> None:
        self.port_file = Path(tempfile.mkdtemp(prefix="ctxbench-latency-")) / "port"
        args = ["--port", "0", "--latency", str(latency), "--port-file", str(self.port_file)]
        if storm is None and capacity is None:
            argv = [sys.executable, str(kit / "latency_server.py"), *args]
        else:
            at, length = storm or (0.0, 0.0)
            code = STORM_SERVER.format(kit=str(kit), at=at, length=length, share=0.3 if storm else 0.0,
                                       capacity=capacity or 10 ** 9)
            argv = [sys.executable, "-c", code, *args]
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL)
        while not self.port_file.exists():
            if self.proc.poll() is not None:
                sys.exit("the latency server did not start")
            time.sleep(0.05)
        self.url = f"http://127.0.0.1:{self.port_file.read_text()}/v1"

    def stats(self) -> dict:
        with urllib.request.urlopen(self.url.removesuffix("/v1") + "/stats") as reply:
            return json.load(reply)

    def reset(self) -> None:
        urllib.request.urlopen(urllib.request.Request(self.url.removesuffix("/v1") + "/reset", method="POST")).close()

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def tree_memory(root: int) -> tuple[float, float]:
    """(RSS, PSS) in MB of `root` and its descendants."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    rss = pss = 0
    todo = [root]
    while todo:
        pid = todo.pop()
        todo.extend(children.get(pid, ()))
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Rss:"):
                    rss += int(line.split()[1])
                elif line.startswith("Pss:"):
                    pss += int(line.split()[1])
        except OSError:
            continue
    return rss / 1024, pss / 1024


def measured(argv: list[str], env: dict[str, str]) -> dict:
    """Run `argv`, sampling its process tree's memory; wall seconds, peak RSS / PSS, CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    peak = [0.0, 0.0]
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.append(proc.stdout.read() if proc.stdout else ""))
    reader.start()
    while proc.poll() is None:
        rss, pss = tree_memory(proc.pid)
        peak = [max(peak[0], rss), max(peak[1], pss)]
        time.sleep(0.5)
    wall = time.perf_counter() - start
    reader.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):  # 1: ctxbench ran, some runs unresolved (all are, here)
        sys.exit(f"{argv[0]} failed (exit {proc.returncode}):\n{''.join(output)[-3000:]}")
    return {"wall_s": wall, "rss_mb": peak[0], "pss_mb": peak[1], "cpu_s": cpu, "output": "".join(output)}


def run_ctxbench(folder: Path, url: str, runs: int, c: int, workers: int, executor: str = "local") -> dict:
    taskset = folder / "taskset"
    if not taskset.exists():
        build_taskset(taskset)
    out = folder / f"out-{time.monotonic_ns()}"
    exp = folder / "in_flight.yaml"
    exp.write_text(yaml.safe_dump({
        "name": "in-flight", "taskset": str(taskset), "repeats": runs, "workers": workers, "max_runs": c,
        "executor": executor, "sandbox": "bwrap", "strategies": [{"name": "baseline"}],
        "model": {"provider": "openai", "name": "latency-sim", "base_url": url, "max_connections": c}}))
    ctxbench = Path(sys.executable).with_name("ctxbench")
    figures = measured([str(ctxbench), "run", str(exp), "--output", str(out), "--no-report"], {**os.environ})
    records = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert len(records) == runs, (len(records), figures["output"][-2000:])
    figures["model_errors"] = sum(r["failure_reason"] == "model_error" for r in records)
    figures["concurrency"] = json.loads((out / "manifest.json").read_text()).get("concurrency")
    return figures


def run_inspect(env: Path | None, url: str, runs: int, c: int) -> dict | None:
    if env is None or not (env / "venv" / "bin" / "python").exists():
        return None
    python = env / "venv" / "bin" / "python"
    with tempfile.TemporaryDirectory(prefix="ctxbench-in-flight-home-") as home:
        return measured([str(python), "-c", INSPECT_SCRIPT, str(runs), str(c), url],
                        {**os.environ, "HOME": home, "TIKTOKEN_CACHE_DIR": str(env / "tkcache"),
                         "OPENAI_API_KEY": "no-key", "INSPECT_LOG_LEVEL": "warning"})


def line(side: str, figures: dict, stats: dict, runs: int, c: int, latency: float) -> str:
    rate = runs / figures["wall_s"]
    efficiency = rate / (c / (2 * latency))
    span = stats["chat_span_s"]  # first call to last reply: the start-up (imports, checks) left out
    steady = (runs / span) / (c / (2 * latency)) if span else 0.0
    return (f"{side}: latency={latency} C={c} runs={runs} runs_per_s={rate:.2f} efficiency={efficiency:.2f} "
            f"efficiency_while_calling={steady:.2f} "
            f"peak_in_flight={stats['peak_in_flight']} rss_mb={figures['rss_mb']:.0f} pss_mb={figures['pss_mb']:.0f} "
            f"cpu_ms_per_run={1000 * figures['cpu_s'] / runs:.0f}")


def sweep(args: argparse.Namespace) -> None:
    if args.inspect_env is None or not (args.inspect_env / "venv" / "bin" / "python").exists():
        print("Inspect AI peer not set up: run `setup.sh DIR` from the Inspect peer kit, then pass "
              "--inspect-env DIR (or set CTXBENCH_INSPECT_ENV); Inspect's figures are left out", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="ctxbench-in-flight-") as tmp:
        for latency in args.latency:
            server = Server(args.kit, latency)
            try:
                for c in args.concurrency:
                    runs = max(args.min_runs, args.runs_per_c * c)
                    server.reset()
                    ours = run_ctxbench(Path(tmp), server.url, runs, c, args.workers, args.executor)
                    print(line(f"ctxbench ({args.executor})", ours, server.stats(), runs, c, latency), flush=True)
                    if args.executor == "ray":
                        continue
                    server.reset()
                    theirs = run_inspect(args.inspect_env, server.url, runs, c)
                    if theirs is None:
                        continue
                    print(line("inspect", theirs, server.stats(), runs, c, latency), flush=True)
                    print(f"ratio latency={latency} C={c}: ctxbench runs/s ÷ Inspect's = "
                          f"{theirs['wall_s'] / ours['wall_s']:.2f}", flush=True)
            finally:
                server.stop()


def storm(args: argparse.Namespace) -> None:
    latency, c = args.latency[0], args.concurrency[0]
    runs = max(args.min_runs, args.runs_per_c * c)
    walls = []
    with tempfile.TemporaryDirectory(prefix="ctxbench-in-flight-") as tmp:
        for scenario in (None, (args.storm_at, args.storm_s)):
            server = Server(args.kit, latency, scenario)
            try:
                ours = run_ctxbench(Path(tmp), server.url, runs, c, args.workers)
                label = "storm" if scenario else "storm-free"
                print(line(f"ctxbench {label}", ours, server.stats(), runs, c, latency) +
                      f" wall_s={ours['wall_s']:.1f} model_errors={ours['model_errors']} "
                      f"concurrency={json.dumps(ours['concurrency'])}", flush=True)
                walls.append(ours["wall_s"])
            finally:
                server.stop()
    print(f"storm_time_ratio={walls[1] / walls[0]:.2f}")


def capacity(args: argparse.Namespace) -> None:
    """ctxbench against an endpoint that refuses (429, at once) every call beyond `--capacity` in flight:
    the adaptive limit should settle near the capacity, and the runs go at nearly its pace."""
    latency, c = args.latency[0], args.concurrency[0]
    runs = max(args.min_runs, args.runs_per_c * c)
    with tempfile.TemporaryDirectory(prefix="ctxbench-in-flight-") as tmp:
        server = Server(args.kit, latency, capacity=args.capacity)
        try:
            ours = run_ctxbench(Path(tmp), server.url, runs, c, args.workers)
            stats = server.stats()
        finally:
            server.stop()
    ideal = args.capacity / (2 * latency)
    print(line("ctxbench capacity", ours, stats, runs, c, latency) +
          f" capacity={args.capacity} runs_per_s_vs_capacity={runs / ours['wall_s'] / ideal:.2f} "
          f"mean_in_flight_while_calling={stats['mean_in_flight_over_chat_span']} refused={stats['refused']} "
          f"answered={stats['chat_replies']} model_errors={ours['model_errors']} "
          f"concurrency={json.dumps(ours['concurrency'])}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, nargs="+", default=[0.5, 2.0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32, 128, 512])
    parser.add_argument("--runs-per-c", type=int, default=3, help="runs per side: this many times C")
    parser.add_argument("--min-runs", type=int, default=40)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="ctxbench's worker processes")
    parser.add_argument("--kit", type=Path, default=KIT, help="folder holding latency_server.py")
    parser.add_argument("--inspect-env", type=Path, default=os.environ.get("CTXBENCH_INSPECT_ENV"),
                        help="folder the Inspect kit's setup.sh built (venv/, tkcache/)")
    parser.add_argument("--executor", choices=["local", "ray"], default="local",
                        help="ray: a local Ray runtime of --workers CPUs (Inspect's side is left out)")
    parser.add_argument("--storm", action="store_true", help="the 429 storm scenario (first latency and C)")
    parser.add_argument("--storm-at", type=float, default=20.0)
    parser.add_argument("--storm-s", type=float, default=60.0)
    parser.add_argument("--capacity", type=int, default=None,
                        help="instead: an endpoint refusing every call beyond this many in flight (first latency and C)")
    args = parser.parse_args()
    print(f"python {sys.executable}; load average {os.getloadavg()[0]:.2f}", flush=True)
    capacity(args) if args.capacity else storm(args) if args.storm else sweep(args)


if __name__ == "__main__":
    main()
