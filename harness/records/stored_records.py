"""Records that reach the disk and are read back: a run's line of runs.jsonl, the experiment's
manifest.json, and the lines of a transcript. Each format carries a `version`.

Pydantic models with `extra="forbid"`: a file is validated as it is read (see ctxbench.harness.records).
Files are written and read by ctxbench.harness.records.results (runs.jsonl), ctxbench.harness.records.results_folder
(manifest.json, where transcripts lie) and ctxbench.harness.records.transcript.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ctxbench.harness.records.run_records import ContextLedger, ObservationKind, OwnContext, StopReason, ToolCall, Usage

__all__ = [
    "FailureReason", "FAILURE_REASONS",
    "RESULT_VERSION", "RunResult",
    "MANIFEST_VERSION", "SandboxInfo", "TasksetInfo", "StrategyEntry", "Manifest",
    "TRANSCRIPT_VERSION", "TranscriptHeader", "TranscriptMessage", "TranscriptObservation", "TranscriptTurn",
    "TranscriptEnd", "TranscriptRecord", "TRANSCRIPT_RECORD", "message_hash",
]

# -- failure reasons ------------------------------------------------------------------------------

FailureReason = Literal[
    "tests_failed",      # edited, but the target tests still fail
    "regression",        # target tests pass, a PASS_TO_PASS test broke
    "no_edit",           # the agent finished with an empty patch
    "max_turns",         # turn limit reached
    "token_budget",      # max_tokens_per_run reached
    "timeout",           # run_timeout_s reached
    "context_overflow",  # request over the window, or pinned content alone does not fit
    "loop",              # the same action repeated loop_threshold times in a row
    "invalid_action",    # max_invalid_actions malformed tool calls in a row
    "model_error",       # provider failures after retries
    "request_refused",   # the endpoint refused one of the run's requests (a 4xx other than key, model, window)
    "harness_error",     # a bug in ctxbench: traceback kept, the experiment goes on
    "agent_error",       # an external agent exited non-zero or crashed: the end of its output kept
    "taskset_error",     # the tests cannot be collected at the base commit either: the taskset's fault
]
FAILURE_REASONS: tuple[str, ...] = get_args(FailureReason)


# -- run results ----------------------------------------------------------------------------------

RESULT_VERSION = 1


class RunResult(BaseModel):
    """One run of one strategy on one task at one repeat: one line of runs.jsonl."""

    model_config = ConfigDict(extra="forbid")
    version: int = Field(RESULT_VERSION, description="Format version of this record.")
    experiment_id: str = Field(description="Hash of the experiment's name, resolved config and taskset.")
    run_id: str = Field(description="strategy/task/repeat, unique in the experiment.")
    strategy: str = Field(description="Strategy label.")
    task_id: str = Field(description="Task id.")
    repeat: int = Field(description="Repeat index, from 0.")
    seed: int = Field(description="Depends on (task, repeat) only: every strategy meets the same seeds.")
    resolved: bool = Field(description="The target tests pass and nothing regressed.")
    failure_reason: FailureReason | None = Field(description="Why an unresolved run failed; None when resolved.")
    turns: int = Field(description="Model calls the agent made.")
    prompt_tokens: int = Field(description="Prompt tokens of the agent's model calls.")
    completion_tokens: int = Field(description="Completion tokens of the agent's model calls.")
    strategy_tokens: int = Field(description="Tokens the strategy itself spent on model calls.")
    total_tokens: int = Field(description="prompt + completion + strategy tokens.")
    cached_tokens: int = Field(0, description="Prompt tokens served from the provider's cache.")
    cost_usd: float | None = Field(None, description="Dollars at the experiment's prices (manifest `pricing`); "
                                                     "None when unknown.")
    peak_context_tokens: int = Field(description="Largest request of the run, in tokens.")
    wall_s: float = Field(description="Seconds from the start of the run to its evaluation.")
    model_s: float = Field(0.0, description="Seconds spent waiting for the model.")
    tool_s: float = Field(0.0, description="Seconds spent executing tool calls.")
    test_s: float = Field(0.0, description="Seconds spent in test subprocesses (agent runs and evaluation).")
    tool_calls: dict[str, int] = Field(default_factory=dict, description="Calls per tool name.")
    invalid_actions: int = Field(0, description="Malformed or unknown tool calls, and replies without one.")
    context_loss_events: int = Field(0, description="Strategy actions that dropped or cut content.")
    own_rewrites: int = Field(0, description="Times an external agent replaced the history it sends (its own "
                                             "compaction): its transcript turns marked `own_context: rewritten`.")
    cut_replies: int = Field(0, description="Replies the endpoint cut short (`finish_reason: length`, at the "
                                             "output limit or the server's window), not ended by the model.")
    usage_estimated: int = Field(0, description="Model calls whose endpoint reported no usage: their tokens were "
                                                 "counted with the run's own tokenizer (each such transcript turn's "
                                                 "`usage.estimated`), their cached tokens unknown (0).")
    tests: dict[str, str] = Field(default_factory=dict, description="Outcome per FAIL_TO_PASS/PASS_TO_PASS id.")
    patch: str = Field("", description="The agent's diff against the base state.")
    error: str | None = Field(None, description="Traceback when the harness failed; the provider's error for "
                                                 "`model_error`; the test output for `taskset_error`.")
    workspace: str | None = Field(None, description="The run's workspace folder when keep_workspaces kept it.")
    grader: Literal["swebench"] | None = Field(None, exclude_if=lambda v: v is None,
                                               description="`swebench` when the swebench package graded the "
                                                           "run; absent: pytest's JUnit report did.")


# -- manifest -------------------------------------------------------------------------------------

MANIFEST_VERSION = 1


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SandboxInfo(_Record):
    """How test commands were contained."""

    requested: str | None = Field(None, description="The sandbox the config asked for.")
    used: str | None = Field(None, description="The sandbox the runs used.")
    warning: str | None = Field(None, description="Set when the sandbox fell back to less isolation.")
    process_limit: str | None = Field(None, description="How the number of processes of a test command is bounded.")


class TasksetInfo(_Record):
    """Which tasks the experiment ran."""

    name: str = Field(description="Taskset name.")
    path: str = Field(description="Where it was read from.")
    tasks: list[str] = Field(description="Ids of the tasks selected, in order.")


class StrategyEntry(_Record):
    """One arm of the experiment."""

    name: str = Field(description="Registered strategy name.")
    params: dict[str, Any] = Field(default_factory=dict, description="Parameters with every default filled in.")
    label: str | None = Field(None, description="Name in results; None means the strategy name.")
    agent: str = Field("builtin", description="The agent the arm runs: `builtin` or the external agent's name.")

    @property
    def key(self) -> str:
        return self.label or self.name


class Manifest(_Record):
    """`manifest.json`: what an experiment fixed, written once when it starts."""

    version: int = Field(MANIFEST_VERSION, description="Format version of this record.")
    experiment_id: str = Field(description="Hash of the name, the resolved config and the taskset: the experiment.")
    fixed_id: str | None = Field(None, description="Hash of the fixed variables alone (absent in older folders).")
    name: str = Field(description="Experiment name.")
    created: str = Field(description="UTC ISO time the experiment started.")
    harness_version: str = Field(description="ctxbench version that ran it.")
    fixed: dict[str, str] = Field(description="Hashes of the fixed variables (model, taskset, ...).")
    config: dict[str, Any] = Field(description="The full resolved experiment config.")
    system_prompt: str = Field("", description="The system prompt every run was given.")
    taskset: TasksetInfo | None = Field(None, description="The taskset and the tasks selected.")
    strategies: list[StrategyEntry] = Field(default_factory=list, description="The arms, in config order.")
    sandbox: SandboxInfo = Field(default_factory=SandboxInfo, description="How test commands were contained.")
    simulated: bool = Field(description="The model provider is the simulator.")
    pricing: dict[str, Any] | None = Field(None, description="$ per million tokens (input, cached_input, "
                                                             "cache_write, output) and their source.")
    runs_planned: int = Field(0, description="strategies x tasks x repeats.")
    left_out: dict[str, str] = Field(default_factory=dict, description="Arms of the experiment file left out "
                                     "because their agent is not installed (`--available`): arm -> how to install it.")
    concurrency: dict[str, Any] | None = Field(None, description="Endpoint -> its model calls in flight: `limit` "
                                               "(now), `ceiling`, `lowest`, `peak_in_flight`, `throttled` (429/503 "
                                               "answers); updated while the experiment runs.")

    @property
    def strategy_labels(self) -> list[str]:
        """Strategy result keys in the order the experiment lists them."""
        return [s.key for s in self.strategies]

    @property
    def model_name(self) -> str:
        return str(self.config.get("model", {}).get("name", "?"))


# -- transcripts ----------------------------------------------------------------------------------

TRANSCRIPT_VERSION = 2


class TranscriptHeader(_Record):
    """First line of a transcript: which run it records."""

    type: Literal["header"] = "header"
    version: int = Field(TRANSCRIPT_VERSION, description="Format version of the transcript.")
    run_id: str = Field(description="strategy/task/repeat.")
    strategy: str = Field(description="Strategy label.")
    task_id: str = Field(description="Task id.")
    repeat: int = Field(description="Repeat index.")
    seed: int = Field(description="The run's seed.")


class TranscriptMessage(_Record):
    """A chat message sent to the model, written once per run before the first turn that sends it."""

    type: Literal["message"] = "message"
    hash: str = Field(description="message_hash of `message`; turns refer to messages by it.")
    message: dict[str, Any] = Field(description="The message as sent (OpenAI chat format).")


class TranscriptObservation(_Record):
    """One tool result of a turn."""

    call_id: str = Field(description="Id of the tool call it answers.")
    tool: str = Field(description="Tool name.")
    kind: ObservationKind = Field(description="What sort of content it is.")
    is_error: bool = Field(description="The call failed.")
    content: str = Field(description="What the tool returned, in full.")
    size: int = Field(description="Characters of `content`.")
    tokens: int = Field(description="Tokens of `content` with the experiment's tokenizer.")
    path: str | None = Field(None, description="Workspace-relative path, where one applies.")
    line_range: tuple[int, int] | None = Field(None, description="Lines shown, for file reads.")


class TranscriptTurn(_Record):
    """One turn: what the strategy built, what the model replied, what the tools returned."""

    type: Literal["turn"] = "turn"
    turn: int = Field(description="0-based turn index.")
    messages: list[str] = Field(description="Hashes of the messages sent, in order (see TranscriptMessage).")
    context_tokens: int = Field(description="Tokens of the request: messages plus tool schemas.")
    fill: float = Field(description="context_tokens / context window.")
    ledger: ContextLedger = Field(description="The strategy's ledger: components, actions (targets are call ids).")
    reply: str = Field("", description="The model's reply text.")
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Calls with their ids and full arguments.")
    observations: list[TranscriptObservation] = Field(default_factory=list, description="One per tool call.")
    usage: Usage = Field(default_factory=Usage, description="Tokens the provider reported for this call.")
    malformed: str | None = Field(None, description="Why the reply could not be parsed, when it could not.")
    finish_reason: str | None = Field(None, description="Why the reply ended, as the endpoint said (`stop`, "
                                                        "`tool_calls`, `length`: cut at the output limit or the "
                                                        "server's window); None where it did not say.")
    cost_usd: float | None = Field(None, description="Dollars of this call at the model's prices (None: no prices).")
    gap_s: float | None = Field(None, description="Seconds from the start of the run's previous model call to the "
                                                 "start of this one (None: the first call, or not recorded).")
    request_messages: int | None = Field(None, description="Messages the agent sent, before the strategy "
                                                           "rewrote them (another agent's turns, at its gateway).")
    own_context: OwnContext | None = Field(None, description="The agent's own context management at this call "
                                           "(another agent's turns, at its gateway): `summary_request` (it asks "
                                           "the model to summarize the conversation: Claude Code's, Codex's "
                                           "compaction), `rewritten` (its messages no longer extend its previous "
                                           "request and the reply: it replaced its history); None where they "
                                           "extend it.")
    delivered: bool = Field(True, description="False where the client went away before the reply was sent "
                                              "(it closed its connection, a stream cut off, while the model "
                                              "answered): the turn was computed, not served.")


class TranscriptEnd(_Record):
    """Last line of a complete transcript (a killed run has none)."""

    type: Literal["end"] = "end"
    stop: StopReason = Field(description="Why the loop stopped.")
    detail: str = Field("", description="The error text behind the stop, where there is one.")
    turns: int = Field(description="Turns recorded.")


TranscriptRecord = Annotated[Union[TranscriptHeader, TranscriptMessage, TranscriptTurn, TranscriptEnd],
                             Field(discriminator="type")]
TRANSCRIPT_RECORD: TypeAdapter[Any] = TypeAdapter(TranscriptRecord)
"""Validates one transcript line: `TRANSCRIPT_RECORD.validate_json(line)`."""


def message_hash(message: dict[str, Any]) -> str:
    """Content hash of a chat message (its canonical JSON), the key turns use to refer to it."""
    return hashlib.sha256(json.dumps(message, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:20]
