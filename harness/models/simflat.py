"""OpenCode's and Pi's compaction requests read as the conversations they flatten, for the simulator to
summarize, and the summaries in the sections each asks for.

Both ask in a request of their own, without tools: a system prompt (`AGENT_SUMMARY_SYSTEM_PROMPTS`) and
one user message holding the turns as text inside `<conversation>`, each after a tag at the start of a
line, then their instructions:

- OpenCode: `[User]: …`, `[Assistant]: …`, one `[Assistant tool call]: bash({"command": …})` per call
  followed by its `[Tool result]: …` (or `[Tool error]: …`), a long result cut with `[truncated]`; the
  previous summary inside `<prior-summary>`. It takes the whole reply and sends it back as the reply to a
  question of its own (`What did we do so far?`), the turns it summarized gone.
- Pi: `[User]: …`, `[Assistant]: …`, `[Assistant tool calls]: bash(command="…"); read(path="…")`, then a
  `[Tool result]: …` per call, cut at 2,000 characters; the previous summary inside `<previous-summary>`.
  A turn too long to keep whole is summarized the same way. It takes the whole reply and sends it back in
  a user message before the turns it kept.

`conversation` turns that text back into the chat messages it stands for, so that the summary is the
digest of the same turns a request with tool calls gives.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ctxbench.harness.chat import message_text
from ctxbench.harness.markup.summaries import SECTION

__all__ = ["conversation", "calls", "summary_reply"]

_TAG = re.compile(r"^\[(User|Assistant|Assistant thinking|Assistant reasoning|Assistant tool calls?|Tool result"
                  r"|Tool error)\]: ?", re.M)
_CONVERSATION = re.compile(r"<conversation>\n(.*?)\n</conversation>", re.S)
_PREVIOUS = re.compile(r"<(?:previous|prior)-summary>\n(.*?)\n</(?:previous|prior)-summary>", re.S)
_NAME = re.compile(r"(\w+)\(")
_KEY = re.compile(r"(\w+)=")
_DECODER = json.JSONDecoder()


def conversation(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chat messages a compaction request (`messages`) flattens: a system message, the task (and the
    previous summary after it, where the request holds one), then per tool-call line an assistant message
    with its calls and the tool results that answer them, in order."""
    text = message_text(messages[-1]) if messages else ""
    found = _CONVERSATION.search(text)
    parts = _TAG.split(found[1] if found else "")
    tagged = list(zip(parts[1::2], (p.strip() for p in parts[2::2])))
    task = "\n\n".join(t for tag, t in tagged if tag == "User")
    out: list[dict[str, Any]] = [{"role": "system", "content": ""}, {"role": "user", "content": task}]
    previous = _PREVIOUS.search(text)
    if previous and SECTION.search(previous[1]):  # a previous summary in the layout read as memory
        out.append({"role": "user", "content": previous[1]})
    said, waiting = "", []
    for tag, part in tagged:
        if tag == "Assistant":
            said = part
        elif tag.startswith("Assistant tool call"):
            made = calls(part, len(out))
            out.append({"role": "assistant", "content": said, "tool_calls": made})
            said, waiting = "", list(made)
        elif tag in ("Tool result", "Tool error") and waiting:
            out.append({"role": "tool", "tool_call_id": waiting.pop(0)["id"], "content": part})
    return out


def calls(line: str, n: int) -> list[dict[str, Any]]:
    """The calls of a tool-call line as chat tool calls: OpenCode's `name({JSON})`, Pi's `name(key=JSON,
    key=JSON); name(…)`."""
    found: list[dict[str, Any]] = []
    at = 0
    while (name := _NAME.match(line, at)) is not None:
        arguments, at = _arguments(line, name.end())
        found.append({"id": f"flat-{n}-{len(found)}", "type": "function",
                      "function": {"name": name[1], "arguments": json.dumps(arguments)}})
        following = line.find("; ", at)
        at = following + 2 if following >= 0 else len(line)
    return found


def _arguments(line: str, at: int) -> tuple[dict[str, Any], int]:
    """The arguments from `at` (a JSON object, or `key=JSON` pairs) up to the closing parenthesis, and
    where they end."""
    if line.startswith("{", at):
        try:
            value, end = _DECODER.raw_decode(line, at)
            return (value if isinstance(value, dict) else {}), end
        except ValueError:
            return {}, len(line)
    arguments: dict[str, Any] = {}
    while (key := _KEY.match(line, at)) is not None:
        try:
            arguments[key[1]], at = _DECODER.raw_decode(line, key.end())
        except ValueError:
            break
        at += 2 if line.startswith(", ", at) else 0
    return arguments, at


def summary_reply(agent: str, task: str, body: str) -> str:
    """The summary in the sections `agent` (`opencode`, `pi`) asks for; each keeps the whole reply."""
    if agent == "opencode":
        return (f"## Objective\n- {task}\n\n## Important Details\n{body}\n\n## Work State\n### Completed\n"
                f"- (as above)\n\n### Active\n- (none)\n\n### Blocked\n- (none)\n\n## Next Move\n"
                f"1. Go on from the state above.\n\n## Relevant Files\n- (as above)")
    return (f"## Goal\n{task}\n\n## Progress\n{body}\n\n## Next Steps\n1. Go on from the progress above.\n\n"
            f"## Critical Context\n- (none)")
