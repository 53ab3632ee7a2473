"""A results folder as Inspect AI eval logs: one log per arm, one sample per run, written through
Inspect's own log API (the optional extra `ctxbench[inspect]`), so `inspect view` and Inspect's
dataframes (`inspect_ai.analysis.samples_df`) open a ctxbench experiment.

A sample holds the messages as the model was last sent them (after the strategy) and its last reply,
the score `resolved` (C / I, the failure reason as explanation, each test's outcome in its metadata),
the model usage (uncached input, cache reads and writes, reasoning, cost) and, as metadata, the
strategy's ledger of every turn, the patch and the run's figures.
"""

from __future__ import annotations

import functools
import hashlib
import json
import operator
from dataclasses import asdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ctxbench.harness.errors import InputError
from ctxbench.harness.records import Manifest, RunResult
from ctxbench.harness.records.results import read_results
from ctxbench.harness.records.results_folder import read_manifest, transcript_path
from ctxbench.reports.runview import RunView, read_view

__all__ = ["export_inspect"]


def _inspect() -> Any:
    try:
        import inspect_ai.log as log
    except ImportError:
        raise InputError("export-inspect needs Inspect AI: install the inspect extra "
                         "(.venv/bin/pip install -e '.[inspect]' in the checkout)") from None
    return log


def _arguments(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {"raw": raw}
    return value if isinstance(value, dict) else {"value": value}


def _message(m: dict[str, Any]) -> Any:
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser
    from inspect_ai.tool import ToolCall

    content = m.get("content") or ""
    role = m.get("role")
    if role == "system":
        return ChatMessageSystem(content=content)
    if role == "tool":
        return ChatMessageTool(content=content, tool_call_id=m.get("tool_call_id"))
    if role == "assistant":
        calls = [ToolCall(id=c["id"], function=c["function"]["name"], arguments=_arguments(c["function"]["arguments"]))
                 for c in m.get("tool_calls") or []]
        return ChatMessageAssistant(content=content, tool_calls=calls or None)
    return ChatMessageUser(content=content)


def _messages(view: RunView | None) -> list[Any]:
    if view is None or not view.turns:
        return []
    last = view.turns[-1]
    sent = [_message(view.messages.get(h, {"role": "user", "content": ""})) for h in last.messages]
    reply = {"role": "assistant", "content": last.reply,
             "tool_calls": [{"id": c.id, "function": {"name": c.name, "arguments": c.arguments}} for c in last.tool_calls]}
    return sent + [_message(reply)]


def _usage(r: RunResult, view: RunView | None) -> Any:
    from inspect_ai.model import ModelUsage

    turns = view.turns if view is not None else []
    return ModelUsage(input_tokens=r.prompt_tokens - r.cached_tokens, output_tokens=r.completion_tokens,
                      total_tokens=r.prompt_tokens + r.completion_tokens,
                      input_tokens_cache_read=r.cached_tokens,
                      input_tokens_cache_write=sum(t.usage.cache_write_tokens for t in turns),
                      reasoning_tokens=sum(t.usage.reasoning_tokens for t in turns), total_cost=r.cost_usd)


def _sample(r: RunResult, view: RunView | None, model: str) -> Any:
    from inspect_ai.log import EvalSample
    from inspect_ai.model import ModelOutput
    from inspect_ai.scorer import Score

    messages = _messages(view)
    statement = next((m.text for m in messages if m.role == "user"), r.task_id)
    ledger = [{"turn": t.turn, "components": t.ledger.components, "actions": [asdict(a) for a in t.ledger.actions],
               "strategy_prompt_tokens": t.ledger.strategy_prompt_tokens,
               "strategy_completion_tokens": t.ledger.strategy_completion_tokens} for t in (view.turns if view else [])]
    score = Score(value="C" if r.resolved else "I", answer=r.patch or "", explanation=r.failure_reason or "resolved",
                  metadata={"tests": r.tests})
    last_reply = messages[-1].text if messages else ""
    return EvalSample(id=r.task_id, epoch=r.repeat + 1, input=statement, target=sorted(r.tests), messages=messages,
                      output=ModelOutput.from_content(model, last_reply), scores={"resolved": score},
                      model_usage={model: _usage(r, view)}, total_time=r.wall_s, working_time=r.wall_s,
                      metadata={"run_id": r.run_id, "strategy": r.strategy, "seed": r.seed,
                                "failure_reason": r.failure_reason, "turns": r.turns, "total_tokens": r.total_tokens,
                                "strategy_tokens": r.strategy_tokens, "patch": r.patch, "ledger": ledger})


def _arm_id(manifest: Manifest, strategy: str) -> str:
    """The arm's own task id: Inspect View takes logs that share a task id for retries of one eval and
    lists only the last, so each arm gets its own."""
    return hashlib.sha256(f"{manifest.experiment_id}/{strategy}".encode()).hexdigest()[:22]


def _log(manifest: Manifest, strategy: str, runs: list[RunResult], views: dict[str, RunView],
         completed: str) -> Any:
    log = _inspect()
    model = f"{manifest.config.get('model', {}).get('provider', '?')}/{manifest.model_name}"
    samples = [_sample(r, views.get(r.run_id), model) for r in runs]
    rate = sum(r.resolved for r in runs) / len(runs)
    entry = next((s for s in manifest.strategies if s.key == strategy), None)
    arm = _arm_id(manifest, strategy)
    spec = log.EvalSpec(created=manifest.created, task=f"ctxbench/{manifest.name}/{strategy}", task_id=arm,
                        eval_id=arm, run_id=manifest.experiment_id, task_display_name=f"{manifest.name}: {strategy}",
                        dataset=log.EvalDataset(name=manifest.taskset.name if manifest.taskset else None,
                                                samples=len({r.task_id for r in runs})),
                        model=model, config=log.EvalConfig(epochs=max(r.repeat for r in runs) + 1),
                        metadata={"strategy": strategy, "params": entry.params if entry else {},
                                  "experiment_id": manifest.experiment_id, "simulated": manifest.simulated})
    score = log.EvalScore(name="resolved", scorer="resolved",
                          metrics={"accuracy": log.EvalMetric(name="accuracy", value=rate)})
    results = log.EvalResults(total_samples=len(runs), completed_samples=len(runs), scores=[score])
    usage = functools.reduce(operator.add, (s.model_usage[model] for s in samples))  # the viewer's token column
    stats = log.EvalStats(started_at=manifest.created, completed_at=completed, model_usage={model: usage})
    return log.EvalLog(status="success", eval=spec, plan=log.EvalPlan(name=strategy), results=results,
                       stats=stats, samples=samples)


def export_inspect(path: str | Path, out: str | Path | None = None) -> list[Path]:
    """Write one Inspect eval log per arm of results folder `path` into `out` (default
    `path/inspect/`): `<strategy>.eval`. Returns the files written.

    Raises:
        InputError: not a results folder, no runs, or Inspect AI is not installed.
    """
    path = Path(path)
    log = _inspect()
    manifest = read_manifest(path)
    results = read_results(path / "runs.jsonl")
    if not results:
        raise InputError(f"{path}: runs.jsonl holds no runs")
    # The last run was recorded when runs.jsonl was last written: the experiment's end, as far as is known.
    completed = datetime.fromtimestamp((path / "runs.jsonl").stat().st_mtime, timezone.utc).isoformat()
    folder = Path(out) if out is not None else path / "inspect"
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for strategy in dict.fromkeys(r.strategy for r in results):
        runs = [r for r in results if r.strategy == strategy]
        files = {r.run_id: transcript_path(path, r.strategy, r.task_id, r.repeat) for r in runs}
        views = {k: read_view(f, next(r for r in runs if r.run_id == k)) for k, f in files.items() if f.is_file()}
        target = folder / f"{strategy}.eval"
        log.write_eval_log(_log(manifest, strategy, runs, views, completed), target, format="eval")
        written.append(target)
    return written
