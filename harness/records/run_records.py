"""Records of a run in flight: the history the agent loop builds turn by turn, the ledger a
strategy fills while it builds a context, and the token usage of a model call.

They live in memory only (a transcript copies what it keeps into ctxbench.harness.records.stored_records).
Pydantic dataclasses (see ctxbench.harness.records for why): the agent loop, tools and strategies
build them positionally and `History.append` is `dataclasses.replace`.
"""

from __future__ import annotations

from dataclasses import field, replace
from typing import Any, Literal

from pydantic.dataclasses import dataclass

__all__ = ["ObservationKind", "ObservationChannel", "OwnContext", "ToolCall", "Observation", "Turn", "History", "Component", "ActionKind",
           "StrategyAction", "ContextLedger", "Usage", "StopReason"]

ObservationKind = Literal["file_read", "search", "test_run", "listing", "edit", "error", "finish", "command"]
"""`command` is a shell command of another agent that is none of the others (ctxbench's own tools never make one)."""

OwnContext = Literal["summary_request", "rewritten"]
"""An external agent's own context management seen at one of its requests: it asks the model to
summarize the conversation (`summary_request`), or its messages no longer extend its previous request
and the reply to it (`rewritten`: it replaced its history, with a summary, say)."""

ObservationChannel = Literal["tool", "user"]
"""How an observation reaches the model: a tool message answering a call, or the user message that answers
a text-mode reply (an agent acting in plain text, one command per reply)."""


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
    channel: ObservationChannel = "tool"
    """A tool message (ctxbench's loop, tool-calling agents) or a user message (text-mode agents)."""

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
    notes: tuple[str, ...] = ()
    """User messages an external agent sent after the turn's tool results and before its next reply
    (Claude Code's reminders, an agent's request to summarize the conversation); ctxbench's loop sends none."""


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
ActionKind = Literal["trimmed", "masked", "evicted", "summarized", "injected", "selected", "skipped", "repaired"]


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
    cache_write_tokens: int = 0
    """Prompt tokens the provider wrote to its cache (part of prompt_tokens; 0 where it reports none)."""
    reasoning_tokens: int = 0
    """Completion tokens spent reasoning (part of completion_tokens; 0 where it reports none)."""
    estimated: bool = False
    """The endpoint reported no usage: the tokens were counted with the run's own tokenizer (messages and
    tool schemas as sent, the reply), and none are known to be cached."""


StopReason = Literal["finished", "max_turns", "token_budget", "timeout", "context_overflow", "loop",
                     "invalid_action", "model_error", "request_refused", "harness_error", "agent_error"]
"""Why the agent loop stopped (`finished`: the agent called `finish`; for an external agent: it exited 0)."""
