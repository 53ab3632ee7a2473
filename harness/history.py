"""How a run's history (see ctxbench.harness.records) renders to chat messages."""

from __future__ import annotations

from typing import Any

from ctxbench.harness.chat import parse_arguments
from ctxbench.harness.records import History, Observation, ObservationKind, ToolCall, Turn

__all__ = [
    "ObservationKind",
    "ToolCall",
    "Observation",
    "Turn",
    "History",
    "assistant_message",
    "tool_message",
    "turn_messages",
    "note_messages",
    "parse_arguments",
]

def assistant_message(turn: Turn) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": turn.text}
    if turn.tool_calls:
        msg["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in turn.tool_calls
        ]
    return msg


def tool_message(obs: Observation, content: str | None = None) -> dict[str, Any]:
    """The message that carries `obs` (a tool message, or a user message for a text-mode reply), optionally
    with replaced content (trimmed, masked...)."""
    text = obs.content if content is None else content
    if obs.channel == "user":
        return {"role": "user", "content": text}
    return {"role": "tool", "tool_call_id": obs.call_id, "content": text}


NO_TOOL_CALL = "Your reply had no tool call. Use the tools; call `finish` when you are done."


def turn_messages(turn: Turn) -> list[dict[str, Any]]:
    """The assistant message, its tool results and the agent's notes after them: one unit, never split.
    A reply without tool calls is answered by its text-mode observation where it has one, else by
    ctxbench's reminder to use the tools."""
    if not turn.tool_calls and not turn.observations:
        return [assistant_message(turn), {"role": "user", "content": NO_TOOL_CALL}]
    return [assistant_message(turn)] + [tool_message(o) for o in turn.observations] + note_messages(turn)


def note_messages(turn: Turn) -> list[dict[str, Any]]:
    """The user messages an external agent sent after the turn's tool results (see `Turn.notes`)."""
    return [{"role": "user", "content": note} for note in turn.notes]
