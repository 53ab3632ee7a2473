"""Aider's chat requests (its `diff` edit format) read as a text-mode conversation, so that a strategy and
the simulator read them as they read any agent's: the system prompt, the task, then each reply answered by
one user message.

Aider (PyPI `aider-chat`) offers no tools. A request of its is, in this order: its system prompt (which
ends with the SEARCH/REPLACE rules), its example conversation and the repo map (pairs of a user message
and Aider's own acknowledgement), the history, the files in the chat (one user message with each file's
current text, sent again on every request), then the current exchange, with the rules repeated at the end
of the last user message. Read here:

- the example pairs, the repo map and Aider's other fixed pairs join the system prompt;
- the files' text is an observation: each file goes with the answer that says it was added to the chat
  (`I added these files to the chat: ...`), or, where no answer in view says so (a file given on the
  command line, or added in turns that a summary has replaced), with the task;
- Aider's own `Ok.` replies are left out and the user messages around them make one answer (`I updated
  the files.` and the test output Aider relays after an edit);
- the rules repeated at the end of the last user message (the system prompt's last section) are left out.

Aider's summary of its history (`--max-chat-history-tokens`) is asked for in a request of its own, a
system prompt (`SUMMARY_PROMPT`) and the history as one user message (`# USER` / `# ASSISTANT` sections):
`summary_transcript` reads it back into messages.
"""

from __future__ import annotations

import re
from typing import Any

from ctxbench.harness.chat import message_text

__all__ = ["is_aider_request", "is_aider_summary", "aider_conversation", "summary_transcript", "file_blocks",
           "added_files", "edit_blocks", "repo_map", "SUMMARY_PROMPT", "FILES_PREFIX", "RULES"]

SYSTEM_OPENING = "Act as an expert software developer."
RULES = "# *SEARCH/REPLACE block* Rules:"
"""The heading of the edit-format rules that close Aider's system prompt and its last user message."""
SUMMARY_PROMPT = "*Briefly* summarize this partial conversation about programming."
FILES_PREFIX = "I have *added these files to the chat* so you can go ahead and edit them."
_FIXED_USER = ("Change get_factorial() to use math.factorial", "Refactor hello() into its own file.",
               "I switched to a new code base.", "Here are summaries of some files present in my git repository.",
               "Don't try and edit any existing code without asking me to add the files to the chat!",
               "I am not sharing any files that you can edit yet.", "Here are some READ ONLY files")
"""How Aider's fixed user messages open (each answered by its own fixed reply)."""
_OWN_REPLY = "Ok."
_ADDED = re.compile(r"^I added these files to the chat: (.+)$", re.M)
_FILE = re.compile(r"^(?P<path>[^\n`]+)\n(?P<fence>`{3,4})[^\n]*\n(?P<body>.*?)(?P=fence)$", re.M | re.S)
_EDIT = re.compile(r"^(?P<path>[^\n`]+)\n`{3,4}[^\n]*\n<{5,9} SEARCH\n(?P<search>.*?)^={5,9}\n(?P<replace>.*?)"
                   r"^>{5,9} REPLACE\n", re.M | re.S)
_SECTION = re.compile(r"^# (USER|ASSISTANT)\n", re.M)
_MAP_FILE = re.compile(r"^(?P<path>[\w./-]+\.\w+):?\n(?P<body>(?:[⋮│].*\n?)*)", re.M)


def is_aider_request(messages: list[dict[str, Any]]) -> bool:
    """A request of Aider's: its system prompt opens as Aider's and holds the SEARCH/REPLACE rules, and no
    message calls a tool (Aider offers none)."""
    first = message_text(messages[0]) if messages and messages[0].get("role") == "system" else ""
    return first.startswith(SYSTEM_OPENING) and RULES in first and not any(m.get("tool_calls") for m in messages)


def is_aider_summary(messages: list[dict[str, Any]]) -> bool:
    """Aider's request to summarize its history."""
    return bool(messages) and messages[0].get("role") == "system" \
        and message_text(messages[0]).startswith(SUMMARY_PROMPT)


def aider_conversation(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Aider's request as one system message, the task, then each reply and the user message answering it
    (any other request unchanged). Reading its own result gives it back unchanged."""
    if not is_aider_request(messages):
        return messages
    system, files = [message_text(messages[0])], ""
    talk: list[dict[str, Any]] = []
    index = 1
    while index < len(messages):
        message, text = messages[index], message_text(messages[index])
        index += 1
        fixed = message.get("role") == "user" and (text.startswith(_FIXED_USER) or text.startswith(FILES_PREFIX))
        if fixed and index < len(messages) and messages[index].get("role") == "assistant":
            index += 1  # Aider's own acknowledgement of its fixed message
        if fixed and text.startswith(FILES_PREFIX):
            files = text
        elif fixed or (message.get("role") == "system" and text in system[0]):
            system += [] if message.get("role") == "system" else [text]
        elif message.get("role") == "assistant" and text.strip() == _OWN_REPLY:
            continue
        elif talk and talk[-1]["role"] == message.get("role") == "user":
            talk[-1] = {"role": "user", "content": f"{talk[-1]['content']}\n\n{_without_rules(text)}"}
        else:
            talk.append({"role": message.get("role"), "content": _without_rules(text)})
    return [{"role": "system", "content": "\n\n".join(system)}, *_with_files(talk, files)]


def _without_rules(text: str) -> str:
    at = text.find(RULES)
    return text[:at].rstrip() if at > 0 else text


def _with_files(talk: list[dict[str, Any]], files: str) -> list[dict[str, Any]]:
    """The conversation with each file of Aider's files message after the answer that added it, the rest
    after the task."""
    blocks = list(_FILE.finditer(files))
    if not blocks:
        return talk
    owner: dict[str, int] = {}
    for i, m in enumerate(talk):
        if m["role"] == "user":
            owner.update({path: i for path in added_files(m["content"])})
    first_user = next((i for i, m in enumerate(talk) if m["role"] == "user"), None)
    if first_user is None:
        talk, first_user = [*talk, {"role": "user", "content": ""}], len(talk)
    shown: dict[int, list[str]] = {}
    for block in blocks:
        shown.setdefault(owner.get(block["path"].strip(), first_user), []).append(block[0])
    out = list(talk)
    for i, texts in shown.items():
        out[i] = {"role": "user", "content": "\n\n".join([out[i]["content"], FILES_PREFIX, *texts]).strip()}
    return out


def added_files(text: str) -> list[str]:
    """The files an answer of Aider's says it added to the chat."""
    return [p.strip() for m in _ADDED.finditer(text) for p in m[1].split(",") if p.strip()]


def file_blocks(text: str) -> dict[str, str]:
    """The files whose text a message shows (after Aider's files prefix): path -> text."""
    at = text.find(FILES_PREFIX)
    return {} if at < 0 else {m["path"].strip(): m["body"] for m in _FILE.finditer(text, at)}


def edit_blocks(text: str) -> list[tuple[str, str, str]]:
    """The SEARCH/REPLACE blocks of a reply: (path, search text, replace text), each text without its
    closing newline."""
    return [(m["path"].strip(), m["search"].removesuffix("\n"), m["replace"].removesuffix("\n"))
            for m in _EDIT.finditer(text)]


def repo_map(system: str) -> dict[str, str]:
    """The repo map a system prompt holds: path -> the lines the map shows of it."""
    at = system.find("Here are summaries of some files present in my git repository.")
    if at < 0:
        return {}
    end = system.find("\n\n\n", at)
    return {m["path"]: m["body"] for m in _MAP_FILE.finditer(system[at:end if end > 0 else None])}


def summary_transcript(text: str) -> list[dict[str, Any]]:
    """The messages of the history Aider asks to summarize (its `# USER` / `# ASSISTANT` sections)."""
    parts = _SECTION.split(text)
    return [{"role": role.lower(), "content": body.strip("\n")} for role, body in zip(parts[1::2], parts[2::2])]
