"""How a run's history (see ctxbench.harness.records) renders to chat messages."""

from __future__ import annotations

from typing import Any, Callable, Literal, Mapping

from ctxbench.harness.chat import parse_arguments
from ctxbench.harness.records import ContextLedger, History, Observation, ObservationKind, ToolCall, Turn

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
    "turn_parts",
    "append_turn",
    "file_turn",
    "tool_component",
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


def turn_messages(turn: Turn, replaced: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """The assistant message, its tool results and the agent's notes after them: one unit, never split.
    A reply without tool calls is answered by its text-mode observation where it has one, else by
    ctxbench's reminder to use the tools. `replaced` gives some results other content (call id ->
    content: trimmed, masked...)."""
    return [message for _, message in turn_parts(turn, replaced)]


def turn_parts(turn: Turn, replaced: Mapping[str, str] | None = None) -> list[tuple[Observation | None, dict[str, Any]]]:
    """The messages of `turn_messages`, each with the observation it carries (None for the assistant
    message, the reminder and the notes)."""
    lead = assistant_message(turn)
    if not turn.tool_calls and not turn.observations:
        return [(None, lead), (None, {"role": "user", "content": NO_TOOL_CALL})]
    replaced = replaced or {}
    return ([(None, lead)] + [(o, tool_message(o, replaced.get(o.call_id))) for o in turn.observations]
            + [(None, note) for note in note_messages(turn)])


def tool_component(obs: Observation) -> Literal["files", "tool_output"]:
    """Ledger component of a tool message: file reads are `files`, everything else `tool_output`."""
    return "files" if obs.kind == "file_read" else "tool_output"


def append_turn(messages: list[dict[str, Any]], ledger: ContextLedger, turn: Turn,
                count: Callable[[dict[str, Any]], int], replaced: Mapping[str, str] | None = None) -> None:
    """Append `turn`'s unit (`turn_messages`) to `messages`, each message's tokens filed in `ledger`
    (`file_turn`)."""
    unit = turn_messages(turn, replaced)
    file_turn(ledger, turn, unit, count)
    messages += unit


def file_turn(ledger: ContextLedger, turn: Turn, unit: list[dict[str, Any]],
              count: Callable[[dict[str, Any]], int]) -> None:
    """File the tokens of `unit`, the messages `turn_messages(turn)` made (their contents may since have
    changed), in `ledger`: results under `tool_component`, the rest (the reply, the reminder, the
    notes) under `history`."""
    for (obs, _), message in zip(turn_parts(turn), unit, strict=True):
        ledger.add(tool_component(obs) if obs is not None else "history", count(message))


def note_messages(turn: Turn) -> list[dict[str, Any]]:
    """The user messages an external agent sent after the turn's tool results (see `Turn.notes`)."""
    return [{"role": "user", "content": note} for note in turn.notes]
