"""What a strategy hands to the model: messages plus a ledger of how they were made."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ctxbench.harness.history import NO_TOOL_CALL
from ctxbench.harness.records import Component, ContextLedger, StrategyAction
from ctxbench.harness.tokens import REPLY_PRIMING, TokenCounter

__all__ = ["Budget", "fixed_tokens", "Component", "StrategyAction", "ContextLedger", "Context", "ContextOverflow",
           "overflow_error", "conversation_problems", "well_formed", "MISSING_RESULT"]


class ContextOverflow(Exception):
    """The context cannot be made to fit (pinned content alone, or after every eviction)."""


def overflow_error(exc: Exception) -> str:
    """The `error` of a run that ended `context_overflow`: whether the strategy refused (a
    `ContextOverflow`: its budget could not hold the context) or the server did (the request was over
    the model's window), then the exception's words."""
    if isinstance(exc, ContextOverflow):
        return f"the strategy refused: its context does not fit its budget: {exc}"
    return f"the server refused the request as over the model's context window: {exc}"


@dataclass(frozen=True)
class Budget:
    """What a strategy may spend on one request."""

    context_window: int
    """The model's context window in tokens."""
    output_reserve: int
    """Tokens kept free for the reply (the model's max_output_tokens)."""
    fixed_tokens: int
    """Tokens of the fixed part every request carries: system prompt, tool schemas, request overhead."""
    counter: TokenCounter
    """The experiment's token counter."""

    @property
    def available(self) -> int:
        """Tokens left for the dynamic part (task, history, tool output...): window - reserve - fixed."""
        return self.context_window - self.output_reserve - self.fixed_tokens


def fixed_tokens(counter: TokenCounter, system_prompt: str, tools: list[dict[str, Any]]) -> int:
    """Tokens every request of a run carries whatever the strategy does: the system prompt, the tool
    schemas and the reply priming (`Budget.fixed_tokens`)."""
    return (counter.count_message({"role": "system", "content": system_prompt}) + counter.count_tools(tools)
            + REPLY_PRIMING)


@dataclass
class Context:
    """The chat messages to send (OpenAI format) and the ledger that explains them."""

    messages: list[dict[str, Any]]
    ledger: ContextLedger


def conversation_problems(messages: list[dict[str, Any]]) -> list[str]:
    """What a chat server would refuse in `messages`, one line each (empty when it accepts them): the
    last message is not a user or tool message (a server takes a trailing assistant message for a
    prefill, and two for an error), two assistant messages in a row, a tool result that does not answer
    a call of the assistant message right before it, a call without its result."""
    problems: list[str] = []
    open_calls: dict[str, int] = {}
    previous = None
    for index, message in enumerate(messages):
        role = message.get("role")
        if role != "tool" and open_calls:
            problems += [f"message {at}: tool call {cid} has no result after it" for cid, at in open_calls.items()]
            open_calls = {}
        if role == "assistant":
            if previous == "assistant":
                problems.append(f"message {index}: two assistant messages in a row")
            open_calls = {str(c.get("id")): index for c in message.get("tool_calls") or ()}
        elif role == "tool":
            if open_calls.pop(str(message.get("tool_call_id")), None) is None:
                problems.append(f"message {index}: tool result {message.get('tool_call_id')} answers no call "
                                "of the assistant message before it")
        previous = role
    problems += [f"message {at}: tool call {cid} has no result after it" for cid, at in open_calls.items()]
    if messages and messages[-1].get("role") not in ("user", "tool"):
        problems.append(f"message {len(messages) - 1}: the last message is {messages[-1].get('role')}, not user or tool")
    return problems


MISSING_RESULT = "[no result: this call's output is not in the context]"
"""The result given to a call whose result a context left out, so that the call is answered."""


def well_formed(messages: list[dict[str, Any]], ledger: ContextLedger,
                count: Callable[[dict[str, Any]], int]) -> list[dict[str, Any]]:
    """`messages` as a server accepts them (see `conversation_problems`), each repair recorded in `ledger`
    as a `repaired` action with its tokens under `history`: a reply without a call that is followed by
    another reply or ends the context gets the loop's reminder to use the tools after it, a call
    without its result gets `MISSING_RESULT`, a result that answers no call right before it is left out.
    A conversation with no problem comes back as it is."""
    if not conversation_problems(messages):
        return messages
    out: list[dict[str, Any]] = []
    open_calls: list[str] = []

    def add(message: dict[str, Any], target: str, reason: str) -> None:
        tokens = count(message)
        ledger.add("history", tokens)
        ledger.act("repaired", target, reason, 0, tokens)
        out.append(message)

    def close() -> None:
        for call_id in open_calls:
            add({"role": "tool", "tool_call_id": call_id, "content": MISSING_RESULT}, call_id,
                "a call without its result: answered with a note")
        open_calls.clear()

    for index, message in enumerate(messages):
        role = message.get("role")
        if role == "tool":
            call_id = str(message.get("tool_call_id"))
            if call_id in open_calls:
                open_calls.remove(call_id)
                out.append(message)
            else:
                tokens = count(message)
                ledger.add(_component_of_dropped(ledger, tokens), -tokens)
                ledger.act("repaired", call_id, "a result that answers no call before it: left out", tokens, 0)
            continue
        close()
        if role == "assistant" and out and out[-1].get("role") == "assistant":
            add({"role": "user", "content": NO_TOOL_CALL}, f"message:{index}", "two replies in a row: the reminder between")
        out.append(message)
        if role == "assistant":
            open_calls = [str(c.get("id")) for c in message.get("tool_calls") or ()]
    close()
    if out and out[-1].get("role") == "assistant":
        add({"role": "user", "content": NO_TOOL_CALL}, f"message:{len(messages) - 1}",
            "the context ended with a reply: the reminder after it")
    return out


def _component_of_dropped(ledger: ContextLedger, tokens: int) -> Component:
    """Where a left-out result's `tokens` come off: `tool_output` or `files`, where results are filed,
    the first that holds as many; else `history`."""
    for component in ("tool_output", "files"):
        if ledger.components.get(component, 0) >= tokens:
            return component
    return "history"
