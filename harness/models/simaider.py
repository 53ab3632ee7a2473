"""The simulator's `aider` dialect: it speaks Aider's `diff` edit format, as a model does with Aider.

Aider offers no tools: a model asks for the files it needs to be added to the chat, and edits them with
SEARCH/REPLACE blocks in its reply; Aider runs the tests itself after an edit (`--auto-test`) and
relays their output when they fail. Two directions, so that the rules of `ctxbench.harness.models.sim`
stay the one policy:

- `native_conversation` reads Aider's conversation (`ctxbench.harness.wire.aider`) as the native calls
  and results it stands for: the repo map is a listing, an answer that added files is a read of each
  file (its text, as Aider shows it, a numbered excerpt), a reply's SEARCH/REPLACE blocks are edits, the
  test output Aider relays is a failed test run;
- `allows` says which native actions Aider can carry out, and `reply_text` writes the chosen one as
  Aider reads it: a file read is a request to add the file, a search a request to add the files whose
  repo map entry shows the name, an edit a SEARCH/REPLACE block, finishing a reply without either.
  Running the tests or listing the files has no reply of its own (Aider tests after each edit, and its
  repo map is the listing): those actions are not taken.

Aider's request to summarize its history is answered by `summary_text`: the `summarizer`'s digest of the
turns it shows, which reads back as memory when Aider opens its next request with it.
"""

from __future__ import annotations

import json
import re
from functools import reduce
from typing import Any, Callable

from ctxbench.harness.chat import message_text
from ctxbench.harness.markup.placeholders import dropped_output, exit_marker
from ctxbench.harness.markup.rendering import excerpt_header, numbered_line
from ctxbench.harness.markup.summaries import SECTION, Digest
from ctxbench.harness.models.simrules import Action
from ctxbench.harness.models.simview import is_test_path
from ctxbench.harness.wire.aider import (FILES_PREFIX, RULES, SYSTEM_OPENING, added_files, aider_conversation,
                                         edit_blocks, file_blocks, repo_map, summary_transcript)
from ctxbench.harness.wire.conversation import history_from_messages

__all__ = ["native_conversation", "allows", "reply_text", "summary_text"]

_ASKED = re.compile(r"Please add (?P<paths>.+?) to the chat\.")
_TEST_OUTPUT = "I ran this command:\n\n"
_EDIT_FAILED = "failed to match"


def native_conversation(messages: list[dict[str, Any]], statement: str | None) -> list[dict[str, Any]]:
    """Aider's conversation as the native dialect's messages: a system message, the task (the statement,
    when known; a summary Aider opens with follows it, read as memory), the repo map as a listing, then
    one assistant message with native calls and their results per reply."""
    conversation = aider_conversation(messages)
    system = message_text(conversation[0]) if conversation[0].get("role") == "system" else ""
    talk = conversation[1:] if system else conversation
    told = message_text(talk[0]) if talk and talk[0].get("role") == "user" else ""
    task = told.split(FILES_PREFIX)[0].split(_TEST_OUTPUT)[0].strip()
    out = [{"role": "system", "content": system}, {"role": "user", "content": statement or task}]
    if statement and SECTION.search(task):
        out.append({"role": "user", "content": task})
    listed = repo_map(system)
    if listed:
        out += _turn("aider-map", "Aider's repo map.", [("list_files", {}, "\n".join(listed))])
    shown = file_blocks(told)
    if shown:
        out += _turn("aider-files", "The files in the chat.", [_read(p, shown) for p in shown])
    if _TEST_OUTPUT in told:  # after a summary: the test output of the edits it remembers
        out += _turn("aider-tests", "Aider ran the tests.", [_test_run(told)])
    rest = talk[1:] if told else talk
    for n, message in enumerate(rest):
        if message.get("role") != "assistant":
            continue
        answer = message_text(rest[n + 1]) if n + 1 < len(rest) and rest[n + 1].get("role") == "user" else None
        out += _reply_turn(f"aider-{n}", message_text(message), answer)
    return out


def _reply_turn(call_id: str, reply: str, answer: str | None) -> list[dict[str, Any]]:
    """One reply of the model's, and the answer Aider gave it, as native calls and results."""
    failed = answer is not None and _EDIT_FAILED in answer
    calls: list[tuple[str, dict[str, Any], str]] = []
    for path, search, replace in edit_blocks(reply):
        result = f"error: {answer}" if failed else f"edited {path}"
        calls.append(("edit_file", {"path": path, "old_text": search, "new_text": replace}, result) if search
                     else ("write_file", {"path": path, "content": replace + "\n"}, result))
    shown = file_blocks(answer or "")
    calls += [_read(path, shown) for path in (added_files(answer or "") or asked_files(reply))]
    tests = [_test_run(answer)] if answer is not None and _TEST_OUTPUT in answer else []
    if not calls + tests or (answer is None and not edit_blocks(reply)):  # Aider summarizes applied edits
        return [{"role": "assistant", "content": reply}] + ([{"role": "user", "content": answer}] if answer else [])
    if answer is not None and dropped_output(answer) is not None:  # masked by a strategy: every result hides behind it
        calls, tests = ([(name, args, answer) for name, args, _ in c] for c in (calls, tests))
    # the test run Aider makes after an edit is a turn of its own, after the edit's
    return (_turn(call_id, reply, calls) if calls else []) + (_turn(f"{call_id}-t", "Aider ran the tests.", tests)
                                                              if tests else [])


def _test_run(text: str) -> tuple[str, dict[str, Any], str]:
    """The last test run whose output `text` relays, as a failed run (Aider relays failing runs only)."""
    output = text.split(_TEST_OUTPUT)[-1].split(FILES_PREFIX)[0].split("\n\nAnd got this output:\n\n", 1)[-1]
    return "run_tests", {}, f"{output.rstrip()}\n{exit_marker(1)}"


def _read(path: str, shown: dict[str, str]) -> tuple[str, dict[str, Any], str]:
    """A read of `path`: its text as Aider shows it, a numbered excerpt of the whole file."""
    text = shown.get(path)
    if text is None:
        return "read_file", {"path": path}, f"{path} was added to the chat."
    lines = text.removesuffix("\n").split("\n")
    body = "\n".join(numbered_line(i, line) for i, line in enumerate(lines, 1))
    return "read_file", {"path": path}, f"{excerpt_header(path, 1, len(lines), len(lines))}\n{body}"


def _turn(call_id: str, text: str, calls: list[tuple[str, dict[str, Any], str]]) -> list[dict[str, Any]]:
    ids = [f"{call_id}-{k}" for k in range(len(calls))]
    return [{"role": "assistant", "content": text, "tool_calls": [
                {"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps(args, sort_keys=True)}}
                for i, (name, args, _) in zip(ids, calls)]},
            *({"role": "tool", "tool_call_id": i, "content": result} for i, (_, _, result) in zip(ids, calls))]


def asked_files(reply: str) -> list[str]:
    """The files a reply of the simulator's asked Aider to add to the chat."""
    return [p.strip(" `") for m in _ASKED.finditer(reply) for p in re.split(r",\s*|\s+and\s+", m["paths"]) if p.strip()]


def _in_chat(native: list[dict[str, Any]]) -> set[str]:
    """The files read in the conversation: Aider has them in the chat, and adds none of them again."""
    calls = [c["function"] for m in native for c in m.get("tool_calls") or []]
    return {json.loads(f["arguments"]).get("path", "") for f in calls if f["name"] == "read_file"}


def _map_hits(query: str, listed: dict[str, str], in_chat: set[str]) -> list[str]:
    """The files not in the chat whose repo map entry shows `query`, source files first (two at most)."""
    hits = [path for path, body in listed.items() if query in body and path not in in_chat]
    return sorted(hits, key=is_test_path)[:2]


def allows(native: list[dict[str, Any]]) -> Callable[[Action], bool]:
    """Which native actions a reply to Aider can carry out, in the conversation `native`."""
    in_chat, listed = _in_chat(native), repo_map(message_text(native[0]))

    def can(action: Action) -> bool:
        _, name, args = action
        if name == "read_file":
            return str(args.get("path")) not in in_chat
        if name == "search":
            return bool(_map_hits(str(args.get("query")), listed, in_chat))
        return name in ("edit_file", "write_file", "finish")
    return can


def reply_text(action: Action, native: list[dict[str, Any]]) -> str:
    """The reply to Aider that carries out `action` (one `allows` allows, or finishing)."""
    text, name, args = action
    if name == "read_file":
        return f"I need to see {args['path']}. Please add {args['path']} to the chat."
    if name == "search":
        hits = _map_hits(str(args["query"]), repo_map(message_text(native[0])), _in_chat(native))
        return f"The repo map shows {args['query']} in {' and '.join(hits)}. Please add {', '.join(hits)} to the chat."
    if name in ("edit_file", "write_file"):
        path = str(args["path"])
        search, replace = (str(args["old_text"]), str(args["new_text"])) if name == "edit_file" \
            else ("", str(args["content"]).removesuffix("\n"))
        fence = "```python" if path.endswith(".py") else "```"
        before = f"{search}\n" if search else ""
        return f"{text}\n\n{path}\n{fence}\n<<<<<<< SEARCH\n{before}=======\n{replace}\n>>>>>>> REPLACE\n```\n"
    return text if name == "finish" else "The fix is in; nothing more to change."


def summary_text(messages: list[dict[str, Any]], statement: str | None, test_cmd: tuple[str, ...]) -> str:
    """The summary Aider's summarizing request asks for: the digest of the turns it shows (files read,
    files modified, tests run and how they ended), opening as Aider asks, with `I asked you`."""
    transcript = summary_transcript(message_text(messages[-1]))
    request = [{"role": "system", "content": f"{SYSTEM_OPENING}\n{RULES}"}, *transcript]
    native = native_conversation(request, statement)
    history = history_from_messages(native, (test_cmd,) if test_cmd else ())
    task = statement or history.task_statement
    body, _ = reduce(Digest.fold, history.turns, Digest()).render(task)
    return f"I asked you to fix this problem:\n{task.strip()}\n\n{body}"
