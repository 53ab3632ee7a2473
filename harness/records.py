"""The records ctxbench writes and reads: one typed definition each, shared by the runner and the reports.

Nothing here depends on the experiment config or on any other part of ctxbench but `errors` and `paths`: the
strategies, models and tools build on these types, the runner writes them, the reports read them
back through the same models. Formats that reach the disk carry a `version`.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal, Union, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from ctxbench.harness.errors import InputError, did_you_mean
from ctxbench.harness.paths import repo_entries

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
    "harness_error",     # a bug in ctxbench: traceback kept, the experiment goes on
    "taskset_error",     # the tests cannot be collected at the base commit either: the taskset's fault
]
FAILURE_REASONS: tuple[str, ...] = get_args(FailureReason)

StopReason = Literal["finished", "max_turns", "token_budget", "timeout", "context_overflow", "loop",
                     "invalid_action", "model_error", "harness_error"]
"""Why the agent loop stopped (`finished`: the agent called `finish`)."""

# -- tasks ----------------------------------------------------------------------------------------


class TasksetEnvironment(BaseModel):
    """Where a taskset's tests run."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    python: str | None = Field(None, description="Interpreter path to run tests with.")
    requirements: tuple[str, ...] = Field((), description="Requirements installed once into a cached venv.")


@dataclass(frozen=True)
class Task:
    """One task: a repository at a base state, a bug report, and the tests that decide."""

    id: str
    """Task id, unique in its taskset."""
    repo_dir: Path
    """Folder with the repository's files (native) or a git repository (SWE-bench)."""
    problem_statement: str
    """The bug report the agent is given."""
    test_cmd: tuple[str, ...]
    """Argv prefix; a leading `python` means the taskset environment's interpreter."""
    FAIL_TO_PASS: tuple[str, ...]
    """Test ids that fail before the fix and must pass after it."""
    PASS_TO_PASS: tuple[str, ...]
    """Test ids that pass before and must still pass after."""
    patch: str
    """Gold patch text (reference fix)."""
    test_patch: str | None = None
    """Hidden tests, applied only at evaluation."""
    test_files: tuple[str, ...] = ()
    """What run_tests runs when the agent passes no ids."""
    tags: tuple[str, ...] = ()
    """Free labels for include/exclude filters."""
    base_commit: str | None = None
    """For git repositories: the commit whose files make the workspace."""
    repo_name: str = ""
    """The repository's name as the taskset gives it."""
    environment: TasksetEnvironment | None = None
    """Where this task's tests run, instead of the taskset's environment."""


@dataclass(frozen=True)
class Taskset:
    """A named set of tasks and the environment their tests run in."""

    name: str
    """Taskset name."""
    path: Path
    """The taskset folder or JSONL file."""
    tasks: tuple[Task, ...]
    """The tasks, in file order."""
    environment: TasksetEnvironment = field(default_factory=TasksetEnvironment)
    """Where the tests run, unless a task has its own."""

    def content_hash(self) -> str:
        """Hash of everything that defines the tasks: statements, commands, patches, repo files."""
        h = hashlib.sha256()
        seen: set[Path] = set()
        for t in self.tasks:
            fields = [t.id, t.problem_statement, t.test_cmd, t.FAIL_TO_PASS, t.PASS_TO_PASS,
                      t.patch, t.test_patch, t.test_files, t.tags, t.base_commit]
            if t.environment is not None:  # absent from the hash otherwise: older hashes still hold
                fields.append(t.environment.model_dump())
            h.update(json.dumps(fields).encode())
            if t.repo_dir not in seen and t.base_commit is None:
                seen.add(t.repo_dir)
                for f in sorted(repo_entries(t.repo_dir)):
                    h.update(str(f.relative_to(t.repo_dir)).encode())
                    h.update(os.readlink(f).encode() if f.is_symlink() else f.read_bytes())
        h.update(self.environment.model_dump_json().encode())
        return h.hexdigest()

    def folders(self) -> tuple[Path, ...]:
        """Where the taskset's data lies (its folder, or the JSONL file's folder, and the folders of
        its git repositories, which hold the fixes in their history): hidden from the jailed commands."""
        found = [self.path if self.path.is_dir() else self.path.parent]
        found += [t.repo_dir.parent for t in self.tasks if t.base_commit]
        unique = sorted(set(found), key=lambda p: (len(p.parts), str(p)))
        return tuple(p for i, p in enumerate(unique)
                     if p != Path(p.anchor) and not any(q in p.parents for q in unique[:i]))

    def environment_for(self, task: Task) -> TasksetEnvironment:
        """The task's own environment when it declares one, else the taskset's."""
        return task.environment or self.environment

    def select(self, ids: list[str] | None = None, include_tags: list[str] | None = None,
               exclude_tags: list[str] | None = None, limit: int | None = None) -> Taskset:
        """The tasks with any of `ids` and `include_tags` and none of `exclude_tags`; then the first `limit`."""
        known = [t.id for t in self.tasks]
        unknown = [i for i in ids or [] if i not in known]
        if unknown:
            raise InputError(*(f"taskset {self.name}: no task with id {i!r}{did_you_mean(i, known)}" for i in unknown))
        tasks = [t for t in self.tasks
                 if (not ids or t.id in ids)
                 and (not include_tags or set(include_tags) & set(t.tags))
                 and not (set(exclude_tags or []) & set(t.tags))]
        if not tasks:
            raise InputError(f"taskset {self.name}: the filters leave no task")
        return Taskset(self.name, self.path, tuple(tasks[:limit]), self.environment)


# -- history --------------------------------------------------------------------------------------

ObservationKind = Literal["file_read", "search", "test_run", "listing", "edit", "error", "finish"]


@dataclass(frozen=True)
class ToolCall:
    """One tool call emitted by the model."""

    id: str
    """Call id, unique within the run."""
    name: str
    """Tool name as emitted (may be unknown)."""
    arguments: str
    """Raw JSON arguments as emitted (may be malformed)."""


@dataclass(frozen=True)
class Observation:
    """The result of one tool call."""

    call_id: str
    """Id of the tool call this answers."""
    tool: str
    """Tool name."""
    arguments: tuple[tuple[str, Any], ...]
    """Parsed arguments, as sorted pairs (empty when they did not parse)."""
    content: str
    """What the tool returned, as the model sees it."""
    is_error: bool
    """True when the call failed (bad path, bad arguments, failing edit...)."""
    kind: ObservationKind
    """What sort of content this is."""
    turn: int
    """Index of the turn that produced it."""
    path: str | None = None
    """Workspace-relative path, where one applies."""
    line_range: tuple[int, int] | None = None
    """Inclusive 1-based line range shown, for file reads."""

    @property
    def args(self) -> dict[str, Any]:
        return dict(self.arguments)


@dataclass(frozen=True)
class Turn:
    """One assistant message plus one observation per tool call."""

    index: int
    """0-based turn number."""
    text: str
    """Assistant text."""
    tool_calls: tuple[ToolCall, ...]
    """Tool calls in the order emitted."""
    observations: tuple[Observation, ...]
    """One observation per tool call, same order."""


@dataclass(frozen=True)
class History:
    """System prompt, task statement, then turns. Never mutated: `append` returns a new one."""

    system_prompt: str
    """The experiment's system prompt."""
    task_statement: str
    """The task's problem statement."""
    turns: tuple[Turn, ...] = field(default=())
    """Every turn so far, oldest first."""

    def append(self, turn: Turn) -> History:
        return replace(self, turns=self.turns + (turn,))

    def system_message(self) -> dict[str, Any]:
        return {"role": "system", "content": self.system_prompt}

    def task_message(self) -> dict[str, Any]:
        return {"role": "user", "content": self.task_statement}


# -- context ledger -------------------------------------------------------------------------------

Component = Literal["system", "task", "pinned", "history", "tool_output", "files", "summary"]
ActionKind = Literal["trimmed", "masked", "evicted", "summarized", "injected", "selected", "skipped"]


@dataclass(frozen=True)
class StrategyAction:
    """One thing a strategy did to the history this turn."""

    kind: ActionKind
    """What it did."""
    target: str
    """Id of what it acted on: a tool-call id, `turn:N`, a snippet id."""
    reason: str
    """Why, in a few words."""
    tokens_before: int = 0
    """Tokens of the target before the action."""
    tokens_after: int = 0
    """Tokens of the target after it (0 when dropped)."""


@dataclass
class ContextLedger:
    """Tokens per component, the strategy's actions, and tokens it spent on model calls."""

    components: dict[str, int] = field(default_factory=dict)
    """Tokens per context component (system, task, pinned, history, tool_output, files, summary)."""
    actions: list[StrategyAction] = field(default_factory=list)
    """What the strategy did this turn, in order."""
    strategy_prompt_tokens: int = 0
    """Prompt tokens of the strategy's own model calls this turn."""
    strategy_completion_tokens: int = 0
    """Completion tokens of the strategy's own model calls this turn."""

    def add(self, component: Component, tokens: int) -> None:
        self.components[component] = self.components.get(component, 0) + tokens

    def act(self, kind: ActionKind, target: str, reason: str, before: int = 0, after: int = 0) -> None:
        self.actions.append(StrategyAction(kind, target, reason, before, after))

    @property
    def strategy_tokens(self) -> int:
        return self.strategy_prompt_tokens + self.strategy_completion_tokens


@dataclass(frozen=True)
class Usage:
    """Tokens of one model call, as the provider reports them."""

    prompt_tokens: int = 0
    """Tokens of the request."""
    completion_tokens: int = 0
    """Tokens of the reply."""
    cached_tokens: int = 0
    """Prompt tokens the provider served from its cache (part of prompt_tokens)."""


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
    tests: dict[str, str] = Field(default_factory=dict, description="Outcome per FAIL_TO_PASS/PASS_TO_PASS id.")
    patch: str = Field("", description="The agent's diff against the base state.")
    error: str | None = Field(None, description="Traceback when the harness failed; the provider's error for "
                                                 "`model_error`; the test output for `taskset_error`.")
    workspace: str | None = Field(None, description="The run's workspace folder when keep_workspaces kept it.")


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
    pricing: dict[str, Any] | None = Field(None, description="$ per million tokens (input, cached_input, output) "
                                                             "and their source.")
    runs_planned: int = Field(0, description="strategies x tasks x repeats.")

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
