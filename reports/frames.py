"""pandas DataFrames of a results folder: one row per run (`runs_df`), one row per turn (`turns_df`).

    from ctxbench.reports import runs_df, turns_df
    runs = runs_df("results/quickstart")            # RunResult fields, one row per run
    turns = turns_df("results/quickstart")          # transcript turns, ledger components as columns
    turns.groupby("strategy")["cached_tokens"].sum() / turns.groupby("strategy")["prompt_tokens"].sum()

The report is built from these two frames.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pandas as pd

from ctxbench.harness.errors import InputError
from ctxbench.harness.records import ActionKind, Component, RunResult, TranscriptEnd, TranscriptHeader, TranscriptTurn
from ctxbench.harness.records.results_folder import transcript_files
from ctxbench.harness.records.transcript import read_transcript
from ctxbench.reports.loading import load_results

__all__ = ["runs_df", "turns_df", "run_records", "TURN_COLUMNS", "transcript_files"]

COMPONENTS: tuple[str, ...] = get_args(Component)
ACTIONS: tuple[str, ...] = get_args(ActionKind)

TURN_COLUMNS: tuple[str, ...] = (
    "run_id", "strategy", "task_id", "repeat", "turn", "context_tokens", "fill",
    "prompt_tokens", "completion_tokens", "cached_tokens", "cache_write_tokens", "reasoning_tokens", "gap_s",
    "strategy_prompt_tokens", "strategy_completion_tokens",
    *(f"tokens_{c}" for c in COMPONENTS), *(f"actions_{a}" for a in ACTIONS),
    "actions", "tool_calls", "observation_tokens", "observation_errors", "reply", "malformed", "own_context", "stop",
)
"""Columns of `turns_df`. `cache_write_tokens`, `reasoning_tokens`: 0 where the provider reports none; `gap_s`: seconds
since the start of the run's previous model call (empty on the first call and in older transcripts).
`tokens_<component>`: the ledger's tokens per component; `actions_<kind>`: how
many actions of that kind the strategy took this turn; `actions`: all of them as JSON (kind, target,
reason, tokens before and after); `tool_calls`: the calls' names, comma-separated; `own_context`: what an
external agent did to its own context at this call (`summary_request`, `rewritten`; empty otherwise); `stop`: on the last
turn of a finished transcript, why the loop stopped (empty otherwise)."""


def runs_df(path: str | Path) -> pd.DataFrame:
    """One row per run of a results folder, one column per `RunResult` field (runs.jsonl as a frame).

    Raises:
        InputError: not a results folder, or no runs.
    """
    return load_results(path).runs


def run_records(frame: pd.DataFrame) -> list[RunResult]:
    """The `RunResult` records of a `runs_df` frame (the inverse of `runs_df`)."""
    out = []
    for row in frame.to_dict(orient="records"):
        out.append(RunResult.model_validate({k: (None if _missing(v) else v) for k, v in row.items()}))
    return out


def _missing(value: Any) -> bool:
    return isinstance(value, float) and value != value


def _turn_row(header: TranscriptHeader, record: TranscriptTurn) -> dict[str, Any]:
    ledger = record.ledger
    row: dict[str, Any] = {
        "run_id": header.run_id, "strategy": header.strategy, "task_id": header.task_id, "repeat": header.repeat,
        "turn": record.turn, "context_tokens": record.context_tokens, "fill": record.fill,
        "prompt_tokens": record.usage.prompt_tokens, "completion_tokens": record.usage.completion_tokens,
        "cached_tokens": record.usage.cached_tokens, "cache_write_tokens": record.usage.cache_write_tokens,
        "reasoning_tokens": record.usage.reasoning_tokens, "gap_s": record.gap_s,
        "strategy_prompt_tokens": ledger.strategy_prompt_tokens,
        "strategy_completion_tokens": ledger.strategy_completion_tokens,
    }
    row.update({f"tokens_{c}": int(ledger.components.get(c, 0)) for c in COMPONENTS})
    row.update({f"actions_{a}": sum(x.kind == a for x in ledger.actions) for a in ACTIONS})
    row["actions"] = json.dumps([{"kind": a.kind, "target": a.target, "reason": a.reason,
                                  "tokens_before": a.tokens_before, "tokens_after": a.tokens_after}
                                 for a in ledger.actions])
    row["tool_calls"] = ",".join(c.name for c in record.tool_calls)
    row["observation_tokens"] = sum(o.tokens for o in record.observations)
    row["observation_errors"] = sum(o.is_error for o in record.observations)
    row["reply"] = record.reply
    row["malformed"] = record.malformed or ""
    row["own_context"] = record.own_context or ""
    row["stop"] = ""
    return row


def turns_df(path: str | Path) -> pd.DataFrame:
    """One row per turn of every run with a transcript, columns `TURN_COLUMNS`, ordered by run then turn.

    Returns an empty frame with those columns when the folder has no transcripts.

    Raises:
        InputError: a transcript is not of the version ctxbench reads.
    """
    rows: list[dict[str, Any]] = []
    for file in transcript_files(path):
        header = None
        try:
            for record in read_transcript(file):
                if isinstance(record, TranscriptHeader):
                    header = record
                elif isinstance(record, TranscriptTurn) and header is not None:
                    rows.append(_turn_row(header, record))
                elif isinstance(record, TranscriptEnd) and rows and header is not None \
                        and rows[-1]["run_id"] == header.run_id:
                    rows[-1]["stop"] = record.stop
        except ValueError as exc:
            raise InputError(f"{file}: not a transcript this version of ctxbench reads ({str(exc)[:300]})") from None
    frame = pd.DataFrame(rows, columns=list(TURN_COLUMNS))
    return frame.sort_values(["strategy", "task_id", "repeat", "turn"], kind="stable").reset_index(drop=True)
