"""Any agent's chat request read as a `History`, so that a strategy can build its context.

An agent that is not ctxbench's own loop sends the whole conversation on every request: system
messages, the task (usually wrapped in the agent's own template), then its turns. A turn is an
assistant message with its tool results (agents that call tools), or an assistant message and the
user message that answers it (agents that act in plain text, one command per reply). What each
observation is (a file read, a search, a test run, an edit...) is read from the tool's name and
arguments: ctxbench's own tools by name, a shell tool (`bash`, `shell`, ... with a `command`) or a
text-mode reply's fenced command by `read_command`.

What a strategy cannot see through this mapping: anything the agent keeps outside its messages;
extra user messages before the first reply (they are folded into the task); images and other
non-text content parts (dropped).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ctxbench.harness.history import History, Observation, ObservationKind, ToolCall, Turn, parse_arguments
from ctxbench.harness.run_records import ObservationChannel
from ctxbench.harness.shell_reading import SUBMIT_MARKER, exit_status, read_command

__all__ = ["history_from_messages", "message_text", "fenced_command", "SHELL_TOOLS"]

SHELL_TOOLS = frozenset({"bash", "shell", "execute_bash", "run_shell_command", "terminal", "execute_command"})
"""Tool names read as one shell command in the argument `command` (or `cmd`)."""

_OWN_TOOLS: dict[str, ObservationKind] = {"read_file": "file_read", "search": "search", "list_files": "listing",
                                          "edit_file": "edit", "write_file": "edit", "run_tests": "test_run",
                                          "finish": "finish"}
_FENCE = re.compile(r"```(?:bash|sh|shell|console|mswea_bash_command)?[ \t]*\n(.*?)```", re.S)


def message_text(message: dict[str, Any]) -> str:
    """A message's text: its string content, or its text parts joined (other parts are dropped)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    return ""


def fenced_command(text: str) -> str | None:
    """The command of a text-mode reply: its one fenced shell block (the last one, if several)."""
    blocks = _FENCE.findall(text)
    return blocks[-1].strip() if blocks else None


def history_from_messages(messages: list[dict[str, Any]], test_commands: tuple[tuple[str, ...], ...] = (),
                          submit_marker: str = SUBMIT_MARKER) -> History:
    """The request's messages as a History: leading system messages, the task, then one turn per reply.

    Args:
        messages: the request's message list (OpenAI chat format).
        test_commands: the task's test commands, so that the agent's runs of them read as test runs.
        submit_marker: what a text-mode agent echoes to submit.
    """
    index = 0
    system: list[str] = []
    while index < len(messages) and messages[index].get("role") in ("system", "developer"):
        system.append(message_text(messages[index]))
        index += 1
    task: list[str] = []
    while index < len(messages) and messages[index].get("role") == "user":
        task.append(message_text(messages[index]))
        index += 1
    turns: list[Turn] = []
    while index < len(messages):
        message = messages[index]
        index += 1
        if message.get("role") != "assistant":
            continue  # a stray tool or user message that answers no reply
        calls = tuple(_tool_call(c, len(turns), n) for n, c in enumerate(message.get("tool_calls") or []))
        answers: list[dict[str, Any]] = []
        while index < len(messages) and messages[index].get("role") in (("tool",) if calls else ("user",)):
            answers.append(messages[index])
            index += 1
            if not calls:
                break  # a text-mode reply is answered by one user message
        read = _ReadContext(len(turns), test_commands, submit_marker)
        observations = (tuple(read.tool_result(c, answers) for c in calls) if calls
                        else tuple(read.text_reply(message_text(message), a) for a in answers))
        turns.append(Turn(len(turns), message_text(message), calls, observations))
    return History("\n\n".join(system), "\n\n".join(task), tuple(turns))


def _tool_call(raw: dict[str, Any], turn: int, n: int) -> ToolCall:
    function = raw.get("function") or {}
    arguments = function.get("arguments")
    return ToolCall(str(raw.get("id") or f"call-{turn}-{n}"), str(function.get("name") or ""),
                    arguments if isinstance(arguments, str) else json.dumps(arguments or {}))


class _ReadContext:
    """How the observations of one turn are read."""

    def __init__(self, turn: int, test_commands: tuple[tuple[str, ...], ...], submit_marker: str) -> None:
        self.turn, self.test_commands, self.submit_marker = turn, test_commands, submit_marker

    def tool_result(self, call: ToolCall, answers: list[dict[str, Any]]) -> Observation:
        answer = next((a for a in answers if a.get("tool_call_id") == call.id), None)
        content = message_text(answer) if answer is not None else ""
        arguments = _arguments(call.arguments)
        if call.name in SHELL_TOOLS:
            command = arguments.get("command", arguments.get("cmd"))
            return self._shell(call.id, call.name, arguments, str(command or ""), content, "tool")
        kind = _OWN_TOOLS.get(call.name, "command")
        path = arguments.get("path") if isinstance(arguments.get("path"), str) else None
        return Observation(call.id, call.name, tuple(sorted(arguments.items())), content,
                           content.startswith("error:"), kind, self.turn, path, _line_range(arguments))

    def text_reply(self, reply: str, answer: dict[str, Any]) -> Observation:
        command = fenced_command(reply)
        arguments = {"command": command} if command is not None else {}
        return self._shell(f"text-{self.turn}", "bash" if command is not None else "", arguments, command or "",
                           message_text(answer), "user")

    def _shell(self, call_id: str, tool: str, arguments: dict[str, Any], command: str, content: str,
               channel: ObservationChannel) -> Observation:
        reading = read_command(command, self.test_commands, self.submit_marker) if command else None
        status = exit_status(content)
        kind: ObservationKind = reading.kind if reading else "command"
        return Observation(call_id, tool, tuple(sorted(arguments.items())), content,
                           bool(status) and kind != "test_run", kind, self.turn,
                           reading.path if reading else None, reading.line_range if reading else None,
                           channel=channel)


def _arguments(raw: str) -> dict[str, Any]:
    try:
        return parse_arguments(raw)
    except ValueError:
        return {}


def _line_range(arguments: dict[str, Any]) -> tuple[int, int] | None:
    start, end = arguments.get("start_line"), arguments.get("end_line")
    return (start, end) if isinstance(start, int) and isinstance(end, int) else None
