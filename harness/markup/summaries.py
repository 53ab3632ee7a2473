"""The summary of earlier turns: its layout, the extractive digest that writes it, the summarizing request.

The layout is a contract between writers and a reader. The `summarizer`'s digest (`Digest`, below)
and the summaries the simulated model writes itself both produce it; the simulator reads any
summary in view back as memory (`ctxbench.harness.models.simmemory.parse_memory`), by the patterns
defined here next to the functions that write each part::

    Task goal: <first line of the task statement>
    Files read:
    - calc/ops.py (lines 1-60, 80-90)
    Files modified:
    - calc/ops.py (1 edit; last turn 3: "return a / b" -> "return a // b")
    Commands run (oldest first):
    - turn 0: run_tests({}) -> exit code 1
    Unresolved errors:
    - none

The digest is a left fold over turns (pure, deterministic), so the digest of turns 0..m is the same
whether it was built in one go or continued from the digest of 0..k.

In `model` mode the summarizer asks a model instead (`SUMMARIZE_PROMPT`, `fold_request`); the
simulator recognises such a request (`asks_for_summary`) and reads the turns it folds.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from ctxbench.harness.chat import message_text, read_opening
from ctxbench.harness.markup.placeholders import exit_code
from ctxbench.harness.records import Observation, Turn

__all__ = ["Digest", "failure_lines", "merge_ranges", "MAX_COMMANDS",
           "SECTIONS", "WHOLE_FILE", "CALL_ARGS_CHARS", "heading", "read_entry", "modified_entry", "call_text",
           "command_entry", "test_outcome", "outcome_passed", "summary_message",
           "SECTION", "READ_ENTRY", "LINE_RANGE", "MODIFIED_ENTRY", "EDIT_COUNT", "TURN", "COMMAND_ENTRY",
           "SUMMARIZE_PROMPT", "asks_for_summary", "folded_turn", "folded_call", "fold_request",
           "split_fold_request", "FOLDED_TURN", "FOLDED_CALL", "AGENT_SUMMARY_PROMPTS",
           "AGENT_SUMMARY_SYSTEM_PROMPTS", "agent_summary_request", "AGENT_TITLE_PROMPT", "asks_for_title",
           "title_of"]

# -- the layout -------------------------------------------------------------------------------------

SECTIONS = ("Task goal", "Files read", "Files modified", "Commands run", "Unresolved errors")
WHOLE_FILE = 10**9
"""End line of a read remembered without a range (written `all`)."""
CALL_ARGS_CHARS = 80
"""Characters of a call's JSON arguments a summary keeps."""

SECTION = re.compile(r"^(?:- )?(" + "|".join(SECTIONS + ("Last errors",)) + r")[^:\n]*:", re.M)
"""A section heading (`Last errors` is accepted for `Unresolved errors`)."""
READ_ENTRY = re.compile(r"([\w./-]+\.\w+) \(([^()]*)\)")
LINE_RANGE = re.compile(r"(\d+)-(\d+)")
MODIFIED_ENTRY = re.compile(r"([\w./-]+\.\w+) \((.*)")
EDIT_COUNT = re.compile(r"(\d+) edits?\b")
TURN = re.compile(r"\bturn (\d+)")
COMMAND_ENTRY = re.compile(r"^- (?:turn (?P<turn>\d+): )?(?P<tool>\w+)\((?P<args>.*?)(?P<cut>…)?\) -> "
                           r"(?P<outcome>.*)$", re.M)


def heading(section: str, empty: bool = False) -> str:
    """The heading line of `section` (` none` after it when the section has no entries)."""
    title = f"{section} (oldest first)" if section == "Commands run" else section
    return f"{title}:" + (" none" if empty else "")


def read_entry(path: str, ranges: list[tuple[int, int]] | tuple[tuple[int, int], ...]) -> str:
    """`- path (lines 1-60, 80-90)`; a range ending at WHOLE_FILE is `all`."""
    spans = ", ".join("all" if b >= WHOLE_FILE else f"{a}-{b}" for a, b in ranges)
    return f"- {path} (lines {spans})"


def modified_entry(path: str, edits: int, last: str | None) -> str:
    """`- path (2 edits; last <turn and how>)`."""
    return f"- {path} ({edits} edit{'s' if edits > 1 else ''}{f'; last {last}' if last else ''})"


def call_text(tool: str, args: str) -> str:
    """`tool(args)`, the JSON arguments cut to CALL_ARGS_CHARS (and `…` after a cut)."""
    return f"{tool}({args[:CALL_ARGS_CHARS]}{'…' if len(args) > CALL_ARGS_CHARS else ''})"


def command_entry(turn: int | None, call: str, outcome: str) -> str:
    """`turn 3: tool(args) -> outcome` (without the list's `- `)."""
    return f"{'' if turn is None else f'turn {turn}: '}{call} -> {outcome}"


def test_outcome(code: int) -> str:
    """The outcome of a test run that ended with an exit code."""
    return f"exit code {code}"


def outcome_passed(outcome: str) -> bool:
    """The outcome is that of a passing test run."""
    return outcome.strip().startswith(test_outcome(0))


def summary_message(first: int, last: int, body: str) -> str:
    """The user message that stands for turns `first`..`last` in the `summarizer`'s context."""
    return f"Summary of turns {first}-{last} (earlier turns, folded; the later turns follow verbatim):\n{body}"


# -- the summarizing request (model mode) -----------------------------------------------------------

SUMMARIZE_PROMPT = (
    "You summarize the earlier turns of a coding agent's session so that it can continue without them. "
    "Keep the task goal, the files read (paths and line ranges), the files modified and how, the commands "
    "run and their outcomes, and the errors still unresolved, quoting exact messages, names and line "
    "numbers. Fold the previous summary, if one is given, into the new one. Reply with the summary only.")
_ASKS = "summar"
_PREVIOUS, _TURNS = "Previous summary:", "Turns to fold:"
FOLDED_TURN = re.compile(r"^Turn (?P<turn>\d+) assistant:", re.M)
FOLDED_CALL = re.compile(r"^  call (?P<tool>\w+)\((?P<args>.*)\) -> \[(?P<kind>\w+)(?P<error> error)?\]$", re.M)


def asks_for_summary(system_prompt: str) -> bool:
    """A system prompt that asks for a summary (`SUMMARIZE_PROMPT` does)."""
    return _ASKS in system_prompt.lower()


def folded_turn(index: int, text: str) -> str:
    return f"Turn {index} assistant: {text}"


def folded_call(tool: str, args: str, kind: str, is_error: bool, body: str) -> str:
    return f"  call {tool}({args}) -> [{kind}{' error' if is_error else ''}]\n{body}"


def fold_request(previous: str | None, entries: list[str]) -> str:
    """The user message of a summarizing call: the previous summary (if any), then the turns to fold."""
    return "\n".join([f"{_PREVIOUS}\n{previous}\n" if previous else "", _TURNS, *entries]).strip()


def split_fold_request(text: str) -> tuple[str | None, str]:
    """(the previous summary or None, the turns to fold) of a summarizing request's text."""
    previous, _, turns = text.partition(_TURNS)
    return (previous if _PREVIOUS.rstrip(":") in previous else None), turns


# -- agents' own summarizing requests ---------------------------------------------------------------

AGENT_SUMMARY_PROMPTS = {
    "claude-code": "Your task is to create a detailed summary of the conversation so far",
    "codex": "You are performing a CONTEXT CHECKPOINT COMPACTION",
    "gemini-cli": "generate the updated <state_snapshot>",
    "gemini-cli/check": "Critically evaluate the <state_snapshot> you just generated",
    "qwen-code": "produce the <state_snapshot> XML",
}
"""How an agent's own compaction asks its model for a summary (in the request's last user message):
Claude Code's (it takes the reply's `<summary>` block), Codex CLI's (it takes the whole reply), Gemini
CLI's (the whole reply, a `<state_snapshot>`, which it then asks to check and repeat) and Qwen Code's
(the reply's `<state_snapshot>` without its `<analysis>`)."""


AGENT_SUMMARY_SYSTEM_PROMPTS = {
    "aider": "*Briefly* summarize this partial conversation about programming.",
    "cline": "Summarize the provided coding session into a concise continuation note",
    "openhands": "You are maintaining a context-aware state summary for an interactive agent.",
    "opencode": "You are a context summarization agent. You are given a conversation between a user and an agent.",
    "pi": "You are a context summarization assistant. Your task is to read a conversation between a user and an AI",
}
"""How an agent's own summary of its history is asked for by a request's first message, its system prompt
or, in a request of one user message, that message (its first words): Aider's (`--max-chat-history-tokens`;
it takes the whole reply), Cline's (`--compaction agentic`: the conversation as text in one user message;
it takes the whole reply) and OpenHands' (its summarizing condenser: one user message, the events as text
without their commands; it takes the whole reply, as a user message after the task), OpenCode's and Pi's
(the conversation as text inside `<conversation>` in one user message; each takes the whole reply)."""


def agent_summary_request(messages: list[dict]) -> str | None:
    """The agent whose compaction request this is (a key of AGENT_SUMMARY_PROMPTS or
    AGENT_SUMMARY_SYSTEM_PROMPTS), or None."""
    system = message_text(messages[0]) if messages and (messages[0].get("role") == "system" or len(messages) == 1
                                                        and messages[0].get("role") == "user") else ""
    asked = next((agent for agent, prompt in AGENT_SUMMARY_SYSTEM_PROMPTS.items() if system.startswith(prompt)), None)
    if asked is not None:
        return asked
    user = [m for m in messages[read_opening(messages).task_end:] if m.get("role") == "user"]  # after the task
    if not user:
        return None
    text = message_text(user[-1])
    return next((agent for agent, prompt in AGENT_SUMMARY_PROMPTS.items() if prompt in text), None)


# -- agents' title requests -------------------------------------------------------------------------

AGENT_TITLE_PROMPT = "You are a title generator"
"""How OpenCode asks its model to name its session (the first words of the request's system prompt, no
tools offered), before its first turn."""
TITLE_CHARS = 50
"""The longest title OpenCode asks for."""


def asks_for_title(messages: list[dict]) -> bool:
    """The request asks for a title of the conversation, not for its next step (OpenCode's)."""
    return bool(messages) and messages[0].get("role") == "system" \
        and message_text(messages[0]).startswith(AGENT_TITLE_PROMPT)


def title_of(task_statement: str) -> str:
    """A title for a session on `task_statement`: its first line, cut at a word within TITLE_CHARS."""
    line = _first_line(task_statement).replace("`", "").strip(" .")
    return line if len(line) <= TITLE_CHARS else line[:TITLE_CHARS].rsplit(" ", 1)[0]


# -- the digest -------------------------------------------------------------------------------------

MAX_COMMANDS = 10
MAX_CALL_ERRORS = 3
LINE_CHARS = 200
EDIT_CHARS = 60

_LOCATION = re.compile(r'^(?:\S+\.py:\d+|\s*File "[^"]+", line \d+)')
_SUMMARY = re.compile(r"^=+ .*\b(failed|error|errors|passed)\b.* =+$")


def failure_lines(output: str, limit: int = 8) -> list[str]:
    """The lines of a failing test run that say what failed: `E` lines, FAILED ids, the last location."""
    lines = output.splitlines()
    picked = [ln for ln in lines if ln.startswith("E ")][:limit // 2]
    picked += [ln for ln in lines if ln.startswith("FAILED")][:limit // 4 or 1]
    locations = [ln for ln in lines if _LOCATION.match(ln)]
    picked += locations[-1:] + [ln for ln in lines if _SUMMARY.match(ln)][-1:]
    return [ln.strip()[:LINE_CHARS] for ln in picked]


def _first_line(text: str) -> str:
    return (text.strip().splitlines() or [""])[0][:LINE_CHARS]


def _call(obs: Observation) -> str:
    return call_text(obs.tool, json.dumps(dict(obs.arguments), sort_keys=True, default=str))


def _short(text: str, limit: int = EDIT_CHARS) -> str:
    line = next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")
    return json.dumps(line if len(line) <= limit else line[:limit] + "…")


def _how(obs: Observation) -> str:
    """How an edit changed its file, in one short line."""
    args = obs.args
    if "old_text" in args and "new_text" in args:
        return f"{_short(args['old_text'])} -> {_short(args['new_text'])}"
    if "content" in args:
        return f"wrote {str(args['content']).count(chr(10)) + 1} lines"
    return _first_line(obs.content)


def merge_ranges(ranges: tuple[tuple[int, int], ...], new: tuple[int, int]) -> tuple[tuple[int, int], ...]:
    """`ranges` plus `new`, overlapping or adjacent ranges merged, sorted."""
    out: list[tuple[int, int]] = []
    for start, end in sorted(ranges + (new,)):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return tuple(out)


def _fit(entries: list[str], budget: int) -> tuple[list[str], int]:
    """The latest entries whose lines fit in `budget` characters, and how many earlier ones did not."""
    kept: list[str] = []
    used = 0
    for entry in reversed(entries):
        if used + len(entry) + 1 > budget:
            break
        kept.append(entry)
        used += len(entry) + 1
    return kept[::-1], len(entries) - len(kept)


@dataclass(frozen=True)
class Digest:
    """What the extractive summary keeps of the turns folded so far."""

    files_read: tuple[tuple[str, tuple[tuple[int, int], ...]], ...] = ()
    """(path, merged line ranges read), in order of latest read."""
    files_modified: tuple[tuple[str, int, str], ...] = ()
    """(path, successful edits, how the latest one changed it), in order of first edit."""
    commands: tuple[str, ...] = ()
    """The last MAX_COMMANDS calls other than file reads, with their outcome."""
    test_failure: tuple[str, ...] = ()
    """Key lines of the latest test run, if it failed and no later run passed."""
    call_errors: tuple[str, ...] = ()
    """The last failed calls since the latest passing test run."""

    def fold(self, turn: Turn) -> Digest:
        """This digest extended by `turn`."""
        reads = dict(self.files_read)
        edits = {path: (n, how) for path, n, how in self.files_modified}
        commands, failure, errors = list(self.commands), self.test_failure, list(self.call_errors)
        for obs in turn.observations:
            where = f"turn {turn.index}"
            if obs.kind == "file_read" and not obs.is_error and obs.path:
                ranges = reads.pop(obs.path, ())
                reads[obs.path] = merge_ranges(ranges, obs.line_range) if obs.line_range else ranges
                continue
            if obs.kind == "edit" and not obs.is_error and obs.path:
                n = edits.get(obs.path, (0, ""))[0] + 1
                edits[obs.path] = (n, f"{where}: {_how(obs)}")
            if obs.kind == "test_run":
                code = exit_code(obs.content)
                failure = () if code == 0 else tuple(failure_lines(obs.content)) or (_first_line(obs.content),)
                errors = [] if code == 0 else errors
                outcome = test_outcome(code) if code is not None else _first_line(obs.content)
            elif obs.kind == "listing" and not obs.is_error:
                outcome = f"{len(obs.content.splitlines())} entries"
            else:
                outcome = ("ERROR " if obs.is_error else "") + _first_line(obs.content)
                if obs.is_error or obs.kind == "error":
                    errors = (errors + [f"{where} {_call(obs)}: {_first_line(obs.content)}"])[-MAX_CALL_ERRORS:]
            commands = (commands + [command_entry(turn.index, _call(obs), outcome)])[-MAX_COMMANDS:]
        return replace(self, files_read=tuple(reads.items()),
                       files_modified=tuple((p, n, how) for p, (n, how) in edits.items()),
                       commands=tuple(commands), test_failure=failure, call_errors=tuple(errors))

    def kept_sections(self, task_statement: str) -> tuple[str, str, str]:
        """The sections never cut: the task goal, every file modified and how, the unresolved errors."""
        goal = f"{heading('Task goal')} {_first_line(task_statement)}"
        modified = "\n".join([heading("Files modified", not self.files_modified),
                              *(modified_entry(p, n, how) for p, n, how in self.files_modified)])
        unresolved = [f"- last test run: {ln}" for ln in self.test_failure] + [f"- {e}" for e in self.call_errors]
        return goal, modified, "\n".join([heading("Unresolved errors"), *(unresolved or ["- none"])])

    def render(self, task_statement: str, max_chars: int = 4000) -> tuple[str, int]:
        """The summary text, and how many entries of the bounded sections were left out.

        The task goal, the files modified and the unresolved errors are always whole. The files
        read and the commands are each bounded: they share what `max_chars` leaves after the kept
        sections, half each (the commands get what the files read leave unused), and drop their
        oldest entries first, saying how many.
        """
        goal, modified, unresolved = self.kept_sections(task_statement)
        fixed = "\n".join([goal, heading("Files read"), modified, heading("Commands run"), unresolved])
        room = max(0, max_chars - len(fixed) - 2 * len("- (+999 files read earlier)\n"))
        reads = [read_entry(p, r or ((1, WHOLE_FILE),)) for p, r in self.files_read]
        kept_reads, left_reads = _fit(reads, room // 2)
        kept_cmds, left_cmds = _fit(list(self.commands), room - sum(len(e) + 1 for e in kept_reads))
        read_lines = ([f"- (+{left_reads} files read earlier)"] if left_reads else []) + kept_reads
        cmd_lines = ([f"- (+{left_cmds} earlier commands)"] if left_cmds else []) + [f"- {c}" for c in kept_cmds]
        out = [goal, heading("Files read", not read_lines), *read_lines, modified,
               heading("Commands run"), *(cmd_lines or ["- none"]), unresolved]
        return "\n".join(out), left_reads + left_cmds
