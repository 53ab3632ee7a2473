"""Against a real model served with a 2,048-token window: `summarizer` and `budget_planner` never send a
request the server refuses. llama.cpp's llama-server (Qwen2.5-Coder 0.5B, `-t 1`) is started here on a
port of its own with `--ctx 2048` (examples/local-model/llama_server.sh, its binary and weights cached as
`.ci/run` builds them), and a smoke task runs under both strategies with `model.tokenizer: endpoint`, its
system prompt padded so that a few turns fill the budget. Every run must end without the server refusing
a request, every turn's counted prompt must be the server's own and within the window less the reply's
reserve, and each strategy must have had to act (summarize, evict, cut) for the check to mean anything.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from ctxbench.harness.config import DEFAULT_SYSTEM_PROMPT, ModelConfig
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.harness.models.served_counting import endpoint_counter
from ctxbench.harness.records import TranscriptTurn
from ctxbench.harness.records.transcript import read_transcript
from ctxbench.harness.tokens import REPLY_PRIMING

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "examples" / "local-model" / "llama_server.sh"
WINDOW = 2048
MAX_OUTPUT = 128
AVAILABLE = 450
"""Tokens the padded system prompt leaves a request's task and turns (the budget's `available`)."""
MODEL = "qwen2.5-coder-0.5b-instruct-q4_k_m"
RULES = ["Read the failing test before the code it tests.", "Change as few lines as the fix needs.",
         "Keep the public names and signatures as they are.", "Run the tests after every edit.",
         "Prefer the standard library to new dependencies.", "Say in one sentence why each edit is needed."]
SERVER_FAILURES = ("model_error", "request_refused", "harness_error", "taskset_error")


def _env() -> dict[str, str]:
    return {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def small_server() -> Iterator[str]:
    """The base URL of a llama-server serving a 2,048-token window, stopped after the module."""
    port = _free_port()
    started = subprocess.run(["bash", str(SCRIPT), "serve", "--port", str(port), "--ctx", str(WINDOW)],
                             capture_output=True, text=True, cwd=ROOT, env=_env())
    if started.returncode != 0:
        pytest.fail(f"llama-server did not start with --ctx {WINDOW}: {started.stderr[-600:]}", pytrace=False)
    try:
        yield started.stdout.strip().splitlines()[-1]
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", "--port", str(port)], capture_output=True, cwd=ROOT)


def padded_system_prompt(model: ModelConfig) -> str:
    """The default system prompt and house rules, until the fixed part of a request leaves AVAILABLE tokens."""
    counter = endpoint_counter(model, TOOL_SCHEMAS)
    fixed = counter.count_tools(TOOL_SCHEMAS) + REPLY_PRIMING
    target = WINDOW - MAX_OUTPUT - AVAILABLE - fixed
    prompt, n = DEFAULT_SYSTEM_PROMPT + "\n\nHouse rules of this repository:", 0
    while counter.count_message({"role": "system", "content": prompt}) < target:
        prompt += f"\n- {RULES[n % len(RULES)]}"
        n += 1
    return prompt


def run_padded(url: str, out: Path) -> tuple[list[dict[str, Any]], dict[str, list[TranscriptTurn]]]:
    """The two runs (`ctxbench run`, as a user runs it) and each strategy's turns."""
    model = ModelConfig(provider="openai", name=MODEL, base_url=url, tokenizer="endpoint", request_timeout_s=600)
    experiment = {
        "name": "budget-binds",
        "model": {"provider": "openai", "name": MODEL, "base_url": url, "context_window": None, "tokenizer": "endpoint",
                  "tool_calls": "text", "max_output_tokens": MAX_OUTPUT, "request_timeout_s": 600,
                  "pricing": {"input": 0, "output": 0}},
        "taskset": {"path": "smoke", "ids": ["calc-median-even-length"]},
        "strategies": [{"name": "summarizer", "params": {"keep_recent": 1, "max_summary_chars": 800}},
                       {"name": "budget_planner", "params": {"keep_recent": 1}}],
        "system_prompt": padded_system_prompt(model),
        "repeats": 1, "seed": 0,
        # the turns go on through replies the model gets wrong, so that the history grows past the budget
        "limits": {"max_turns": 6, "max_invalid_actions": 6, "loop_threshold": 7, "run_timeout_s": 3600},
    }
    path = out.parent / "budget-binds.yaml"
    path.write_text(yaml.safe_dump(experiment, sort_keys=False))
    ran = subprocess.run([sys.executable, "-m", "ctxbench", "run", str(path), "--output", str(out), "--no-report"],
                         capture_output=True, text=True, cwd=ROOT, env=_env())
    assert ran.returncode == 0, ran.stderr[-2000:]
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    turns = {p.parent.name: [t for t in read_transcript(p) if isinstance(t, TranscriptTurn)]
             for p in sorted((out / "transcripts").rglob("*.jsonl.gz"))}
    return runs, turns


def test_strategies_never_send_a_context_the_server_refuses(small_server, tmp_path):
    runs, turns = run_padded(small_server, tmp_path / "results")
    assert sorted(r["strategy"] for r in runs) == ["budget_planner", "summarizer"]
    for run in runs:
        assert run["failure_reason"] not in SERVER_FAILURES, (run["run_id"], run["failure_reason"], run.get("error"))
        assert "the server refused" not in (run.get("error") or ""), (run["run_id"], run["error"])
    for strategy, recorded in turns.items():
        counted = [(t.turn, t.context_tokens, t.usage.prompt_tokens) for t in recorded]
        print(f"{strategy}: (turn, counted, server's usage.prompt_tokens) {counted}; "
              f"actions {[len(t.ledger.actions) for t in recorded]}")
        assert len(recorded) >= 2, (strategy, counted)
        assert all(c == served for _, c, served in counted), f"{strategy}: counted as the server counts: {counted}"
        assert max(c for _, c, _ in counted) <= WINDOW - MAX_OUTPUT, f"{strategy}: within the window: {counted}"
        assert any(t.ledger.actions for t in recorded), f"{strategy}: the budget never bound: {counted}"
