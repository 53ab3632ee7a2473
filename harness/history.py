"""The complete, immutable record of a run, and its rendering to chat messages."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal

__all__ = [
    "ObservationKind",
    "ToolCall",
    "Observation",
    "Turn",
    "History",
    "assistant_message",
    "tool_message",
    "turn_messages",
]

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
    task_statement: str
    turns: tuple[Turn, ...] = field(default=())

    def append(self, turn: Turn) -> History:
        return replace(self, turns=self.turns + (turn,))

    def system_message(self) -> dict[str, Any]:
        return {"role": "system", "content": self.system_prompt}

    def task_message(self) -> dict[str, Any]:
        return {"role": "user", "content": self.task_statement}


def assistant_message(turn: Turn) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": turn.text}
    if turn.tool_calls:
        msg["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in turn.tool_calls
        ]
    return msg


def tool_message(obs: Observation, content: str | None = None) -> dict[str, Any]:
    """The tool message for `obs`, optionally with replaced content (trimmed, masked...)."""
    return {"role": "tool", "tool_call_id": obs.call_id, "content": obs.content if content is None else content}


NO_TOOL_CALL = "Your reply had no tool call. Use the tools; call `finish` when you are done."


def turn_messages(turn: Turn) -> list[dict[str, Any]]:
    """The assistant message and its tool results: one unit, never split."""
    if not turn.tool_calls:
        return [assistant_message(turn), {"role": "user", "content": NO_TOOL_CALL}]
    return [assistant_message(turn)] + [tool_message(o) for o in turn.observations]


def parse_arguments(raw: str) -> dict[str, Any]:
    """Parse raw tool-call arguments; raises ValueError when they are not a JSON object."""
    value = json.loads(raw or "{}")
    if not isinstance(value, dict):
        raise ValueError("arguments must be a JSON object")
    return value
