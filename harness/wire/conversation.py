"""Any agent's chat request read as a `History`, so that a strategy can build its context.

An agent that is not ctxbench's own loop sends the whole conversation on every request: system
messages, the task (usually wrapped in the agent's own template), then its turns. A turn is an
assistant message with its tool results (agents that call tools), or an assistant message and the
user message that answers it (agents that act in plain text, one command per reply). What each
observation is (a file read, a search, a test run, an edit...) is read from the tool's name and
arguments: ctxbench's own tools and Claude Code's file tools by name, a shell tool (`bash`, Claude
Code's `Bash`, Codex's `exec_command`, ... with a `command` or `cmd`) or a text-mode reply's fenced
command by `read_command`.

What a strategy cannot see through this mapping: anything the agent keeps outside its messages;
system and tool messages between the first reply and the end that answer no reply (dropped); images
and other non-text content parts (dropped). User messages after a turn's tool results (Claude Code's
reminders, an agent's request to summarize) are the turn's `notes`, kept with it. Several system and
user messages before the first reply are joined: the system ones into the system prompt, the user
ones into the task.

The same module tells how one request of an agent relates to its previous one (`own_context`):
extending it, asking the model to summarize the conversation (the agent's own compaction), or
replacing the history it had sent.
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from typing import Any

from ctxbench.harness.chat import message_text, read_arguments, read_opening
from ctxbench.harness.history import History, Observation, ObservationKind, ToolCall, Turn
from ctxbench.harness.records.run_records import ObservationChannel, OwnContext
from ctxbench.harness.wire.aider import aider_conversation, is_aider_request
from ctxbench.harness.wire.shell_reading import SUBMIT_MARKER, exit_status, read_command
from ctxbench.harness.markup.summaries import agent_summary_request, asks_for_title

__all__ = ["history_from_messages", "fenced_command", "shell_command_of", "SHELL_TOOLS",
           "fingerprints", "replies", "own_context"]

SHELL_TOOLS = frozenset({"bash", "Bash", "exec_command", "shell", "execute_bash", "run_shell_command", "terminal",
                         "execute_command", "local_shell", "run_commands"})
"""Tool names read as one shell command in the argument `command` (or `cmd`; a list of words is a command
line, `[bash, -lc, SCRIPT]` its script), or in `commands`, a list of whole command lines (Cline's
`run_commands`)."""

_OWN_TOOLS: dict[str, ObservationKind] = {"read_file": "file_read", "search": "search", "list_files": "listing",
                                          "edit_file": "edit", "write_file": "edit", "run_tests": "test_run",
                                          "finish": "finish",
                                          # Claude Code's file tools, and Codex's apply_patch
                                          "Read": "file_read", "Grep": "search", "Glob": "listing", "LS": "listing",
                                          "Edit": "edit", "MultiEdit": "edit", "Write": "edit", "NotebookEdit": "edit",
                                          "apply_patch": "edit"}
_FENCE = re.compile(r"```(?:bash|sh|shell|console|mswea_bash_command)?[ \t]*\n(.*?)```", re.S)


def fenced_command(text: str) -> str | None:
    """The command of a text-mode reply: its one fenced shell block (the last one, if several)."""
    blocks = _FENCE.findall(text)
    return blocks[-1].strip() if blocks else None


def shell_command_of(arguments: dict[str, Any]) -> str | None:
    """The command a shell tool's arguments run: `command` or `cmd`, a string or a list of words (the
    script of `[bash, -lc, SCRIPT]`), or `commands`, command lines run one after another (one a line)."""
    lines = arguments.get("commands")
    if isinstance(lines, list) and lines and all(isinstance(line, str) for line in lines):
        return "\n".join(lines)
    command = arguments.get("command", arguments.get("cmd"))
    if isinstance(command, list) and all(isinstance(w, str) for w in command):
        if len(command) == 3 and command[0].rsplit("/", 1)[-1] in ("bash", "sh", "zsh") and command[1] in ("-c", "-lc"):
            return command[2]
        return shlex.join(command)
    return command if isinstance(command, str) else None


def history_from_messages(messages: list[dict[str, Any]], test_commands: tuple[tuple[str, ...], ...] = (),
                          submit_marker: str = SUBMIT_MARKER) -> History:
    """The request's messages as a History: leading system messages, the task, then one turn per reply.

    Args:
        messages: the request's message list (OpenAI chat format).
        test_commands: the task's test commands, so that the agent's runs of them read as test runs.
        submit_marker: what a text-mode agent echoes to submit.
    """
    messages = aider_conversation(messages)  # Aider's layout as a text-mode conversation (`wire.aider`)
    opening = read_opening(messages)
    system = [message_text(messages[i]) for i in opening.system]
    task = [message_text(messages[i]) for i in opening.user]
    index = opening.end
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
        notes: list[str] = []
        while calls and index < len(messages) and messages[index].get("role") == "user":
            notes.append(message_text(messages[index]))  # what the agent adds after the results
            index += 1
        read = _ReadContext(len(turns), test_commands, submit_marker)
        observations = (tuple(read.tool_result(c, answers) for c in calls) if calls
                        else tuple(read.text_reply(message_text(message), a) for a in answers))
        turns.append(Turn(len(turns), message_text(message), calls, observations, tuple(notes)))
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
        flagged = answer is not None and answer.get("is_error") is True  # the Anthropic wire keeps the flag
        arguments = read_arguments(call.arguments)
        if call.name in SHELL_TOOLS:
            return self._shell(call.id, call.name, arguments, shell_command_of(arguments) or "", content, "tool",
                               flagged)
        kind = _OWN_TOOLS.get(call.name, "command")
        path = next((arguments[k] for k in ("path", "file_path", "notebook_path") if isinstance(arguments.get(k), str)),
                    None)
        return Observation(call.id, call.name, _items(arguments), content, flagged or content.startswith("error:"),
                           kind, self.turn, path, _line_range(arguments))

    def text_reply(self, reply: str, answer: dict[str, Any]) -> Observation:
        command = fenced_command(reply)
        arguments = {"command": command} if command is not None else {}
        return self._shell(f"text-{self.turn}", "bash" if command is not None else "", arguments, command or "",
                           message_text(answer), "user")

    def _shell(self, call_id: str, tool: str, arguments: dict[str, Any], command: str, content: str,
               channel: ObservationChannel, flagged: bool = False) -> Observation:
        reading = read_command(command, self.test_commands, self.submit_marker) if command else None
        status = exit_status(content)
        kind: ObservationKind = reading.kind if reading else "command"
        return Observation(call_id, tool, _items(arguments), content,
                           (bool(status) or flagged) and kind != "test_run", kind, self.turn,
                           reading.path if reading else None, reading.line_range if reading else None,
                           channel=channel)


def _items(arguments: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    """The arguments as the Observation keeps them (lists as tuples, so that it stays hashable)."""
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in arguments.items()))


def _line_range(arguments: dict[str, Any]) -> tuple[int, int] | None:
    start, end = arguments.get("start_line"), arguments.get("end_line")
    if isinstance(start, int) and isinstance(end, int):
        return start, end
    offset, limit = arguments.get("offset"), arguments.get("limit")  # Claude Code's Read
    if isinstance(offset, int) and isinstance(limit, int):
        return offset, offset + limit - 1
    return None


# -- how a request relates to the previous one --------------------------------------------------------

def fingerprints(messages: list[dict[str, Any]]) -> list[str]:
    """What identifies each message as sent again in a later request: its role, text and tool-call id (of
    Aider's request, as read by `aider_conversation`, its system prompt left out: the repo map in it
    changes as files join the chat); none for a request beside the conversation (OpenCode's title request),
    so that the request after it is not read as a rewrite of it."""
    if asks_for_title(messages):
        return []
    if is_aider_request(messages):
        messages = [{"role": "system"}, *aider_conversation(messages)[1:]]
    return [hashlib.sha256(json.dumps([m.get("role"), m.get("content"), m.get("tool_call_id")], sort_keys=True,
                                      default=str).encode()).hexdigest()[:16] for m in messages]


def replies(messages: list[dict[str, Any]]) -> int:
    """The assistant messages of a request."""
    return sum(1 for m in messages if m.get("role") == "assistant")


def own_context(messages: list[dict[str, Any]], sent: list[str], previous: list[str] | None) -> OwnContext | None:
    """How a request relates to the agent's previous one (`sent`: its messages' `fingerprints`;
    `previous`: those of the previous request, None for the first): None where it extends it with the
    reply (or sends it again), or with user messages alone: the agent dropped a reply it could not use and
    asks again, saying why (mini-swe-agent's format-error retry), its history kept."""
    if agent_summary_request(messages) is not None:
        return "summary_request"
    messages = aider_conversation(messages)
    if not previous:
        return None
    if sent == previous:
        return None
    added = messages[len(previous):]
    if len(sent) > len(previous) and sent[:len(previous)] == previous and (
            added[0].get("role") == "assistant" or all(m.get("role") == "user" for m in added)):
        return None
    return "rewritten"
