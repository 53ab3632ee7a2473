"""Check the smoke experiment's runs against a real model (llama.cpp's llama-server): every run recorded,
none failed for ctxbench's or the taskset's sake, the served window discovered, and every turn's counted
prompt tokens equal to the server's usage.prompt_tokens (model.tokenizer: endpoint).

Usage: check_real_model.py RESULTS_DIR RUNS SERVED_WINDOW"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ctxbench.harness.records import TranscriptTurn
from ctxbench.harness.records.transcript import read_transcript


def main(folder: Path, runs_expected: int, window: int) -> None:
    runs = [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]
    problems = []
    if len(runs) != runs_expected:
        problems.append(f"{len(runs)} runs recorded, expected {runs_expected}")
    problems += [f"{r['run_id']}: {r['failure_reason']}: {(r.get('error') or '')[:300]}" for r in runs
                 if r["failure_reason"] in ("harness_error", "taskset_error", "model_error")]
    model = json.loads((folder / "manifest.json").read_text())["config"]["model"]
    if model.get("context_window") != window or model.get("tokenizer") != "endpoint":
        problems.append(f"the manifest's model has window {model.get('context_window')} and tokenizer "
                        f"{model.get('tokenizer')}, expected the served {window} and endpoint")
    turns = [t for path in sorted((folder / "transcripts").rglob("*.jsonl.gz")) for t in read_transcript(path)
             if isinstance(t, TranscriptTurn)]
    off = [(t.turn, t.context_tokens, t.usage.prompt_tokens) for t in turns if t.context_tokens != t.usage.prompt_tokens]
    if not turns or off:
        problems.append(f"{len(off)} of {len(turns)} turns counted other prompt tokens than the server's: {off[:5]}")
    if problems:
        sys.exit("real model check failed:\n  " + "\n  ".join(problems))
    print(f"real model: {len(runs)} runs, {len(turns)} turns, counted prompt tokens = usage.prompt_tokens on every one")


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
