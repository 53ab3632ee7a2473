"""The simulator's reading of a conversation of shell commands (its `bash` dialects,
`ctxbench.harness.models.simbash`) as the native tool calls and results they stand for, so that the
rules of `ctxbench.harness.models.sim` stay the one policy.

`native_messages` reads calls of a shell tool, or one fenced command per text reply answered by a user
message: `nl -ba F | sed -n 'A,Bp'` is a `read_file` whose output becomes a numbered excerpt, `grep -rn
X .` a `search` with its hits, a here-doc'd `git apply` an `edit_file`, the task's test command a
`run_tests` whose pytest output closes with its exit code. Outputs are read inside the agent's wrapping
(`<returncode>`/`<output>`, mini-swe-agent's JSON observation, Claude Code's leading `Exit code N`,
Codex's header before `Output:`, Pi's closing `Command exited with code N`, Cline's JSON list of
results, Gemini CLI's and Qwen Code's report around `Output:`, OpenHands' trailer, or plain); a
placeholder that a strategy put in an output's place is left as it is, so it hides what it hides from
a native read.

Outputs are read without what changes from run to run (`stable_messages`: durations, object
addresses), as the native tools write them, so the same behaviour gives the same view and the same
replies.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import PurePosixPath
from typing import Any

from ctxbench.harness.chat import message_text, read_arguments, read_opening
from ctxbench.harness.config import SimParams
from ctxbench.harness.markup.placeholders import (dropped_output, exit_marker, is_omission, omission,
                                                  without_masked_tokens)
from ctxbench.harness.markup.rendering import excerpt_header, is_numbered_line, numbered_line
from ctxbench.harness.markup.summaries import SECTION
from ctxbench.harness.wire.conversation import SHELL_TOOLS, fenced_command, shell_command_of
from ctxbench.harness.wire.shell_reading import (SUBMIT_MARKER, exit_status, here_document, leading_status,
                                                 read_command, search_pattern, shell_report, steady_header,
                                                 trailing_status, closing_status, pytest_status)

__all__ = ["stable_messages", "native_messages"]

NativeCall = tuple[str, dict[str, Any]]

_DURATION = re.compile(r" in \d+(?:\.\d+)?s(?: \(\d+:\d+:\d+\))?")
_ADDRESS = re.compile(r"0x[0-9a-fA-F]{6,}")
_SPILLED = re.compile(r"(Full output: |full content saved to )/[^\s\]]+")
"""Where Pi (`[Showing lines A-B of N. Full output: /tmp/pi-bash-….log]`) and OpenCode put the whole of an
output they cut: a file named afresh for each run."""
_NO_OUTPUT = "(Bash completed with no output)"
"""What Claude Code's `Bash` returns for a command that printed nothing."""
_NUMBERED = re.compile(r"^(?= *\d+(?:\t|  )|[ \d]{6}$) *(\d+)(?:\t|  |$)(.*)$")
"""A line `nl -ba` numbered: its tab kept, or expanded to the two spaces after the six-wide number and
trailing blanks dropped (an empty line is its six-wide number alone), as OpenHands' terminal shows it."""
_NUMBERING = re.compile(r"(?:^|[;&|(]\s*)(?:nl\s|cat\s+-\w*n)")
"""A read that numbers its lines itself (`nl -ba`, `cat -n`): its unnumbered lines are not the file's."""
_GREP_HIT = re.compile(r"^(?:\./)?(?P<path>[^\s:]+):(?P<line>\d+):(?P<text>.*)$")
_TAG = {name: re.compile(rf"<{name}>\n?(.*?)\n?</{name}>", re.S)
        for name in ("output", "output_head", "output_tail", "elided_chars")}
_JSON_STRING = re.compile(r'"(output|output_head|output_tail)":\s*"((?:[^"\\]|\\.)*)"?', re.S)
_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.)", re.S)
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "b": "\b", "f": "\f", '"': '"', "\\": "\\", "/": "/"}


def stable_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages with their text content stripped of durations and object addresses (and of the
    wall time and chunk id of Codex's outputs, of the file Pi and OpenCode spill a cut output to, and of
    the token count a masked output's placeholder gives)."""
    out = []
    for m in messages:
        content = m.get("content")
        if isinstance(content, str) and m.get("role") in ("tool", "user"):
            content = without_masked_tokens(steady_header(_DURATION.sub(" in <time>", content)))
            m = {**m, "content": _SPILLED.sub(r"\1<…>", _ADDRESS.sub("0x…", content))}
        out.append(m)
    return out


class _Reader:
    """Reads one conversation's commands and outputs as native calls and results."""

    def __init__(self, p: SimParams, test_cmd: tuple[str, ...]) -> None:
        self.submit = p.submit_command.strip()
        self.fence = p.fence
        self.test_commands = (test_cmd,) if test_cmd else ()
        self.marker = SUBMIT_MARKER if SUBMIT_MARKER in self.submit else ""
        """read_command's marker: the default one, or none (then only the configured command submits)."""

    def call(self, command: str) -> NativeCall:
        """The native call a command stands for (`bash` with the command when it is none of them)."""
        if command.strip() == self.submit:
            return "finish", {}
        reading = read_command(command, self.test_commands, self.marker)
        path = _relative(reading.path) if reading.path else None
        if reading.kind == "finish":
            return "finish", {}
        if reading.kind == "test_run":
            return "run_tests", {}
        if reading.kind == "file_read" and path:
            lines = {"start_line": reading.line_range[0], "end_line": reading.line_range[1]} if reading.line_range else {}
            return "read_file", {"path": path, **lines}
        if reading.kind == "search" and search_pattern(command):
            return "search", {"query": search_pattern(command)}
        if reading.kind == "listing":  # `git ls-files` reads as a listing whose first word is `ls-files`
            return "list_files", ({"path": path} if path and path not in (".", "ls-files") else {})
        if reading.kind == "edit":
            return _edit_call(command, path)
        return "bash", {"command": command}

    def result(self, call: NativeCall, content: str, command: str, tool: str = "bash") -> str:
        """The native result of `call` (read from `command`, run by the shell tool `tool`) for the
        output the agent got."""
        if not content or dropped_output(content) is not None:
            return content
        output, status = _unwrap(content, tool)
        name, args = call
        failed = status not in (None, 0)
        if name == "run_tests":
            status = pytest_status(output) if status is None else status  # a wrapping that tells none
            return f"{output.rstrip()}\n{exit_marker(status)}" if status is not None else output
        if name == "read_file":
            if failed:
                return f"error: {output}"
            return _excerpt(args, output, _NUMBERING.search(command) is None) or output
        if name == "search":
            return _search_result(str(args["query"]), output) if status in (None, 0, 1) else f"error: {output}"
        if name == "list_files":
            return "\n".join(_relative(line) for line in output.splitlines() if line.strip())
        if name in ("edit_file", "write_file") and failed:
            return f"error: {output}"
        return "finished" if name == "finish" else output

    def command(self, message: dict[str, Any]) -> str | None:
        """The command of a text-mode reply: its block fenced as configured, else any shell block."""
        text = message_text(message)
        blocks = re.findall(rf"```{re.escape(self.fence)}[ \t]*\n(.*?)\n```", text, re.S) if self.fence else []
        return blocks[-1].strip() if blocks else fenced_command(text)


def native_messages(messages: list[dict[str, Any]], p: SimParams, test_cmd: tuple[str, ...],
                    statement: str | None, sizes: list[int]) -> tuple[list[dict[str, Any]], list[int]]:
    """The conversation as the native dialect's messages, and each one's tokens (`sizes` of `messages`).

    The result opens with a system message and the task (the statement, when known, in place of the
    agent's template around it; the messages before the first reply folded into the two), then one
    assistant message with native tool calls and their tool results per reply. Where the opening
    holds a summary (an agent that compacted its history opens with one), it follows the task as the
    user message it stands in, so that it is read as memory.
    """
    reader = _Reader(p, test_cmd)
    opening = read_opening(messages)
    told = "\n\n".join(message_text(messages[i]) for i in opening.user)
    system = "\n\n".join(message_text(messages[i]) for i in opening.system)
    system_size, told_size = sum(sizes[i] for i in opening.system), sum(sizes[i] for i in opening.user)
    out = [{"role": "system", "content": system}, {"role": "user", "content": statement or told}]
    out_sizes = [system_size, told_size]
    if statement and SECTION.search(told):
        out.append({"role": "user", "content": told})
        out_sizes = [system_size, 0, told_size]
    index = opening.end
    seen: dict[str, int] = {}
    while index < len(messages):
        message = messages[index]
        calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
        command = reader.command(message) if message.get("role") == "assistant" and not calls else None
        answered = index + 1 < len(messages) and messages[index + 1].get("role") == "user"
        if message.get("role") == "assistant" and calls:
            taken = _tool_turn(reader, messages, index)
        elif command is not None and answered:
            key = hashlib.sha256(message_text(message).encode()).hexdigest()[:12]
            seen[key] = seen.get(key, 0) + 1
            taken = _text_turn(reader, message, command, messages[index + 1], f"text-{key}-{seen[key]}")
        else:
            taken = [_as_memory(message)]  # a message that answers no reply (an injected snippet, a summary)
        out += taken
        out_sizes += sizes[index:index + len(taken)]
        index += len(taken)
    return out, out_sizes


def _as_memory(message: dict[str, Any]) -> dict[str, Any]:
    """The message as it is, or a summary an agent keeps as a reply (OpenCode's, answering its own `What did
    we do so far?`) as the user message it is read as: memory."""
    text = message_text(message)
    if message.get("role") == "assistant" and not message.get("tool_calls") and SECTION.search(text):
        return {"role": "user", "content": text}
    return message


def _tool_turn(reader: _Reader, messages: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    """The assistant message at `index` with native calls, then the tool results that follow it."""
    message = messages[index]
    raws = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    natives = [_native_tool_call(reader, c) for c in raws]
    out = [{**message, "tool_calls": [n for n, _, _ in natives]}]
    by_id = {n["id"]: (call, command, str((raw.get("function") or {}).get("name") or ""))
             for (n, call, command), raw in zip(natives, raws)}
    for answer in messages[index + 1:]:
        if answer.get("role") != "tool":
            break
        call, command, tool = by_id.get(answer.get("tool_call_id", ""), (("bash", {}), "", "bash"))
        out.append({**answer, "content": reader.result(call, message_text(answer), command, tool)})
    return out


def _text_turn(reader: _Reader, message: dict[str, Any], command: str, answer: dict[str, Any],
               call_id: str) -> list[dict[str, Any]]:
    """A text-mode reply and the user message that answers it, as a native call and its result."""
    name, args = reader.call(command)
    return [{"role": "assistant", "content": message_text(message), "tool_calls": [_tool_call(call_id, name, args)]},
            {"role": "tool", "tool_call_id": call_id, "content": reader.result((name, args), message_text(answer), command)}]


def _native_tool_call(reader: _Reader, raw: dict[str, Any]) -> tuple[dict[str, Any], NativeCall, str]:
    """A shell tool's call as the native call it stands for, that call, and its command."""
    function = raw.get("function") or {}
    call_id = str(raw.get("id") or "")
    if function.get("name") not in SHELL_TOOLS:
        return raw, (str(function.get("name") or ""), {}), ""
    command = shell_command_of(read_arguments(function.get("arguments")))
    call = reader.call(command) if command else ("bash", {})
    return _tool_call(call_id, *call), call, command or ""


def _tool_call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(args, sort_keys=True)}}


def _relative(path: str) -> str:
    return path[2:] if path.startswith("./") else path


def _unwrap(content: str, tool: str = "bash") -> tuple[str, int | None]:
    """The command's output inside the agent's wrapping, and its exit status where the wrapping says
    (Claude Code's `Bash` says it only for a failure: no `Exit code N` is 0)."""
    leading = leading_status(content) or trailing_status(content) or closing_status(content)
    if leading is not None:
        return leading[1], leading[0]
    report = shell_report(content)
    if report is not None:  # Gemini CLI's and Qwen Code's `run_shell_command`
        return report[1], report[0]
    if tool == "Bash":
        return ("" if content.strip() == _NO_OUTPUT else content), 0
    status = exit_status(content)
    text = content.lstrip()
    if text.startswith("[{") and '"query"' in text:
        return _cline_output(text)
    if text.startswith("{") and '"returncode"' in text:
        try:
            data = json.loads(text)
        except ValueError:  # cut by a strategy: read the strings as far as they go
            data = {m[1]: _ESCAPE.sub(lambda e: _unescape(e[1]), m[2]) for m in _JSON_STRING.finditer(text)}
            found = re.search(r'"returncode":\s*(-?\d+)', text)
            data["returncode"] = int(found[1]) if found else None
        if isinstance(data, dict):
            code = data.get("returncode")
            return _joined(data.get("output"), data.get("output_head"), data.get("output_tail"),
                           data.get("elided_chars")), code if isinstance(code, int) else None
    tags = {name: pattern.search(content) for name, pattern in _TAG.items()}
    if any(tags.values()):
        parts = {n: (m[1] if m else None) for n, m in tags.items()}
        return _joined(parts["output"], parts["output_head"], parts["output_tail"], parts["elided_chars"]), status
    return content, status


def _cline_output(text: str) -> tuple[str, int | None]:
    """The outputs in Cline's `run_commands` result (a JSON list, one `{query, result, success}` per
    command; a failure's result opens with `[Command exited with code N]`), and the last exit status."""
    try:
        data = json.loads(text)
    except ValueError:  # cut by a strategy: read the strings as far as they go
        data = [{"result": _ESCAPE.sub(lambda e: _unescape(e[1]), m[1])}
                for m in re.finditer(r'"result":\s*"((?:[^"\\]|\\.)*)"?', text)]
    results = [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []
    outputs, status = [], None
    for item in results:
        output = str(item.get("result") or "")
        leading = leading_status(output)
        status = leading[0] if leading else (0 if item.get("success") is True else exit_status(output))
        outputs.append(leading[1] if leading else output)
    return "\n".join(outputs), status


def _joined(whole: Any, head: Any, tail: Any, elided: Any = None) -> str:
    """The whole output, or its head and tail around an omission marker (an output the agent cut)."""
    if isinstance(whole, str):
        return whole
    if isinstance(head, str) and isinstance(tail, str):
        count = int(re.sub(r"\D", "", str(elided)) or 0)
        return head + omission(count, "characters") + tail
    return ""


def _unescape(code: str) -> str:
    return chr(int(code[1:], 16)) if code.startswith("u") and len(code) == 5 else _ESCAPES.get(code, code)


def _excerpt(args: dict[str, Any], output: str, plain: bool) -> str:
    """A file read's output as a numbered excerpt: `nl -ba`/`cat -n` lines by their numbers, plain
    lines (`cat`, `sed -n`, `head`) numbered from the first line asked for; omission markers kept."""
    raws = output.rstrip("\n").split("\n")
    start = int(args.get("start_line") or 1)
    body: list[str] = []
    first = last = 0
    number = start
    for raw in raws:
        m = _NUMBERED.match(raw)
        if is_omission(raw):
            if body and not is_numbered_line(body[-1]):
                body.pop()  # the line the cut broke before its number ended: not a line of the excerpt
            body.append(raw)
            plain = False  # after a cut, plain lines have no known number
        elif m or plain:
            n, text = (int(m[1]), m[2]) if m and not plain else (number, raw)
            number += 1
            first, last = first or n, n
            body.append(numbered_line(n, text))
        else:
            body.append(raw)
    if not first or output == "":
        return ""
    asked = int(args.get("end_line") or 0)
    total = last + 1 if asked and last >= asked else last
    return excerpt_header(args["path"], first, last, total) + "\n" + "\n".join(body)


def _search_result(query: str, output: str) -> str:
    """grep's `path:line:text` hits in the native search's layout, in the order of its sorted walk."""
    hits = sorted(((PurePosixPath(m["path"]).parts, int(m["line"]), m["text"].strip()[:200])
                   for m in map(_GREP_HIT.match, output.splitlines()) if m), key=lambda h: (h[0], h[1]))
    lines = [f"{'/'.join(parts)}:{line}: {text}" for parts, line, text in hits]
    return f"{len(lines)} matches for {query!r}\n" + "\n".join(lines)


def _edit_call(command: str, path: str | None) -> NativeCall:
    """An edit: a here-doc'd unified diff (its first hunk), a here-doc written to a file, or another edit."""
    body = here_document(command)
    if body is not None and re.search(r"^@@ ", body, re.M):
        target, old, new, inside = path or "", [], [], False
        for line in body.split("\n"):
            if line.startswith("+++ "):
                target = _strip_side(line[4:].strip())
            elif line.startswith("@@") or line.startswith("diff --git "):
                if inside:
                    break
                inside = line.startswith("@@")
            elif inside and line[:1] in (" ", "-", "+", ""):
                if line[:1] in (" ", "-", ""):
                    old.append(line[1:])
                if line[:1] in (" ", "+", ""):
                    new.append(line[1:])
        return "edit_file", {"path": target, "old_text": "\n".join(old), "new_text": "\n".join(new)}
    if body is not None and path:
        return "write_file", {"path": path, "content": body + "\n"}
    return "edit_file", {"path": path or ""}


def _strip_side(name: str) -> str:
    return name[2:] if name[:2] in ("a/", "b/") else name
