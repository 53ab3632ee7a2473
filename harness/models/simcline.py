"""Cline's compaction request read as the conversation it flattens, for the simulator to summarize.

Cline's own compaction (`--compaction agentic`) asks for a summary in a request of its own: a system
prompt (`AGENT_SUMMARY_SYSTEM_PROMPTS["cline"]`) and one user message, its instructions then
`Conversation:` and the turns as text, each after a tag at the start of a line (`[User]: …`,
`[Bot]: …`, `[Bot tool calls]: run_commands(commands=[…])`, `[Tool result]: …`). `conversation` turns
that text back into the chat messages it stands for (a `run_commands` call and its result per
tool-call line), so that the summary is the digest of the same turns a request with tool calls gives.
Cline 3.0 leaves the commands' outputs out of that text (`[Tool result]: ` stays empty): a call whose
result the request does not show is not known to have done anything, and is left out of the summary
(a summary says a file was read, so a model need not read it again; here it would have to). It keeps
the previous summary, when the request holds one, after the task, where it is read as memory.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ctxbench.harness.chat import message_text
from ctxbench.harness.markup.summaries import SECTION

__all__ = ["conversation", "summary_reply"]

_TAG = re.compile(r"^\[(User|Bot|Bot tool calls|Tool result)\]: ?", re.M)
_CALL = re.compile(r"^(\w+)\((\w+)=(.*)\)$", re.S)
_USER_INPUT = re.compile(r"</?user_input[^>]*>")


def conversation(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat messages a Cline compaction request (`messages`) flattens: a system message, the task
    (and the request's text before `Conversation:` after it where it holds a previous summary), then an
    assistant message with one call per tool-call line and the tool results that answer them."""
    text = message_text(messages[-1]) if messages else ""
    head, _, body = text.partition("\nConversation:\n")
    parts = _TAG.split(body)
    tagged = list(zip(parts[1::2], (p.strip() for p in parts[2::2])))
    task = "\n\n".join(_USER_INPUT.sub("", t).strip() for tag, t in tagged if tag == "User")
    out: list[dict[str, Any]] = [{"role": "system", "content": ""}, {"role": "user", "content": task}]
    if SECTION.search(head):  # a previous summary in the layout read as memory
        out.append({"role": "user", "content": head})
    said, calls = "", []
    for tag, part in tagged:
        if tag == "Bot":
            said = part
        elif tag == "Bot tool calls":
            calls = _calls(part, len(out))
        elif tag == "Tool result" and calls and part:  # a result it left out: nothing known of the call
            out += [{"role": "assistant", "content": said, "tool_calls": calls},
                    *({"role": "tool", "tool_call_id": c["id"], "content": part} for c in calls)]
            said, calls = "", []
    return out


def _calls(line: str, n: int) -> list[dict[str, Any]]:
    """The calls of a tool-call line: `name(key=JSON)` (Cline's `run_commands(commands=[…])`)."""
    match = _CALL.match(line)
    if match is None:
        return []
    try:
        value = json.loads(match[3])
    except ValueError:
        value = match[3]
    return [{"id": f"cline-{n}", "type": "function",
             "function": {"name": match[1], "arguments": json.dumps({match[2]: value})}}]


def summary_reply(task: str, body: str) -> str:
    """The summary in the sections Cline asks for (it keeps the whole reply, then adds its list of files)."""
    return f"## Goal\n{task}\n\n## State\n{body}\n\n## Next\nGo on from the state above."
