"""The six strategies on the smoke tasks against a real model as it is served.

A small local model, not a frontier model: Qwen2.5-Coder Instruct (0.5B by default, or 1.5B) quantized to
Q4_K_M, served by llama.cpp's llama-server on loopback (examples/local-model/llama_server.sh builds and
starts it; this script starts it when nothing answers at --url). Its figures say what ctxbench measures
against such a server, and how exactly: they are no verdict on the strategies for a capable model.

Each strategy runs the smoke tasks once (`--repeats`), with the window read from the server, the
server's own token counts (`model.tokenizer: endpoint`) and the calls the model writes in its text read
as calls (`model.tool_calls: text`). Prints a table per strategy: runs, resolved, runs that called a tool,
turns, mean prompt tokens per run, replies cut at the output limit, turns whose counted prompt tokens
equal the server's usage, failure reasons; then the wall time.

Usage: python benchmarks/real_model.py [--model 0.5b|1.5b] [--url URL] [--repeats N] [--max-turns N]
"""

from __future__ import annotations

import argparse
import collections
import json
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from ctxbench.harness.records import TranscriptTurn
from ctxbench.harness.records.transcript import read_transcript

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "examples" / "local-model" / "llama_server.sh"
NAMES = {"0.5b": "qwen2.5-coder-0.5b-instruct-q4_k_m", "1.5b": "qwen2.5-coder-1.5b-instruct-q4_k_m"}
STRATEGIES = "[{name: baseline}, {name: observation_masking}, {name: budget_planner}, {name: summarizer}, " \
             "{name: trimmer}, {name: file_selector}]"


def answering(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=5) as reply:
            return reply.status == 200
    except OSError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(NAMES), default="0.5b")
    parser.add_argument("--url", default="http://127.0.0.1:8089/v1")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--max-turns", type=int, default=6)
    args = parser.parse_args()
    if not answering(args.url):
        port = args.url.rsplit(":", 1)[1].split("/")[0]
        subprocess.run(["bash", str(SCRIPT), "serve", "--port", port, "--ctx", "8192", "--model", args.model],
                       check=True, stdout=subprocess.DEVNULL)
    out = Path(tempfile.mkdtemp(prefix="ctxbench-real-model-")) / "run"
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "ctxbench", "run", "smoke", "--output", str(out), "--no-report",
                    "--repeats", str(args.repeats), "--provider", "openai", "--base-url", args.url,
                    "--model", NAMES[args.model], "--set", f"strategies={STRATEGIES}",
                    "--set", "model.context_window=null", "--set", "model.tokenizer=endpoint",
                    "--set", "model.tool_calls=text", "--set", "model.max_output_tokens=256",
                    "--set", f"limits.max_turns={args.max_turns}", "--set", "model.pricing={input: 0, output: 0}"],
                   check=True)
    wall = time.monotonic() - start
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    exact: dict[str, list[bool]] = collections.defaultdict(list)
    for path in (out / "transcripts").rglob("*.jsonl.gz"):
        strategy = path.parent.name
        exact[strategy] += [t.context_tokens == t.usage.prompt_tokens for t in read_transcript(path)
                            if isinstance(t, TranscriptTurn)]
    print(f"Qwen2.5-Coder {args.model} Instruct Q4_K_M on llama-server (a small local model, not a frontier "
          f"model); smoke tasks x {args.repeats} repeat(s), max_turns {args.max_turns}")
    print(f"{'strategy':20} {'runs':>4} {'resolved':>8} {'called':>6} {'turns':>5} {'prompt/run':>10} "
          f"{'cut':>3} {'exact turns':>11}  failure reasons")
    for strategy in dict.fromkeys(r["strategy"] for r in runs):
        mine = [r for r in runs if r["strategy"] == strategy]
        reasons = collections.Counter(r["failure_reason"] for r in mine if r["failure_reason"])
        called = sum(bool(r["tool_calls"]) for r in mine)
        print(f"{strategy:20} {len(mine):>4} {sum(r['resolved'] for r in mine):>8} {called:>6} "
              f"{sum(r['turns'] for r in mine) / len(mine):>5.1f} "
              f"{sum(r['prompt_tokens'] for r in mine) / len(mine):>10,.0f} {sum(r.get('cut_replies', 0) for r in mine):>3} "
              f"{sum(exact[strategy]):>5}/{len(exact[strategy]):<5}  "
              + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    print(f"wall {wall:.0f} s for {len(runs)} runs; results in {out}")


if __name__ == "__main__":
    main()
