"""The records ctxbench builds, writes and reads: one typed definition each, shared by the runner and
the reports. This module gathers them; they are defined by lifetime:

- ctxbench.harness.records.taskset_records: read from a taskset (`Task`, `Taskset`), fixed for an experiment;
- ctxbench.harness.records.run_records: a run in flight (`History` and its turns, `ContextLedger`, `Usage`),
  in memory only;
- ctxbench.harness.records.stored_records: what reaches the disk and is read back (`RunResult` in
  runs.jsonl, `Manifest` in manifest.json, the transcript lines), each format with a `version`.

One typing system, pydantic: every record is validated when it is built, Literal fields included.
Records that reach the disk are `BaseModel`s (`model_validate_json` reads them back, `extra="forbid"`
refuses a field this version does not know); the in-memory ones are pydantic dataclasses, since the
agent loop, the tools and the strategies build them positionally and `History.append` is
`dataclasses.replace`, and they need no JSON methods (a transcript line embeds `ToolCall`,
`ContextLedger` and `Usage` as they are). None of them reads or writes a file (`Taskset.folders`
only asks whether its path is a folder): the writer or reader of each does (ctxbench.harness.records.results,
.results_folder, .transcript, .taskset_hash).

Nothing here depends on the experiment config or on any part of ctxbench but `errors`.
"""

from __future__ import annotations

from ctxbench.harness.records.run_records import (ActionKind, Component, ContextLedger, History, Observation,
                                          ObservationKind, StopReason, StrategyAction, ToolCall, Turn, Usage)
from ctxbench.harness.records.stored_records import (FAILURE_REASONS, MANIFEST_VERSION, RESULT_VERSION, TRANSCRIPT_RECORD,
                                             TRANSCRIPT_VERSION, FailureReason, Manifest, RunResult, SandboxInfo,
                                             StrategyEntry, TasksetInfo, TranscriptEnd, TranscriptHeader,
                                             TranscriptMessage, TranscriptObservation, TranscriptRecord,
                                             TranscriptTurn, message_hash)
from ctxbench.harness.records.taskset_records import Task, Taskset, TasksetEnvironment

__all__ = [
    "FailureReason", "StopReason", "FAILURE_REASONS",
    "TasksetEnvironment", "Task", "Taskset",
    "ObservationKind", "ToolCall", "Observation", "Turn", "History",
    "Component", "ActionKind", "StrategyAction", "ContextLedger",
    "Usage",
    "RESULT_VERSION", "RunResult",
    "MANIFEST_VERSION", "SandboxInfo", "TasksetInfo", "StrategyEntry", "Manifest",
    "TRANSCRIPT_VERSION", "TranscriptHeader", "TranscriptMessage", "TranscriptObservation", "TranscriptTurn",
    "TranscriptEnd", "TranscriptRecord", "TRANSCRIPT_RECORD", "message_hash",
]
