"""What a shell command does, read the way a coding agent's reviewer would: a file read, a search, an edit...

Agents that act through one `bash` tool or one fenced command per reply (mini-swe-agent, SWE-agent,
OpenHands' CodeAct) read files with `cat -n F` or `nl -ba F | sed -n 'A,Bp'`, search with `grep -rn`,
edit with `sed -i`, a here-doc or `git apply`, and run the tests. Strategies and the simulator need
to know which of these a command was (a masked test run is not a masked file read), so both take
their reading from `read_command`, which looks only at the command's text.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import Literal

from ctxbench.harness.markup.placeholders import exit_code

__all__ = ["CommandKind", "CommandReading", "SUBMIT_MARKER", "read_command", "exit_status", "leading_status",
           "shell_report", "trailing_status", "closing_status", "pytest_status", "steady_header", "search_pattern",
           "here_document"]

CommandKind = Literal["file_read", "search", "listing", "edit", "test_run", "finish", "command"]

SUBMIT_MARKER = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"
"""What mini-swe-agent echoes to submit; agents with another convention pass theirs to `read_command`."""


@dataclass(frozen=True)
class CommandReading:
    """The command's effect as far as its text tells."""

    kind: CommandKind
    """What the command is for; `command` when it is none of the others."""
    path: str | None = None
    """The file read, searched or edited, where the command names one."""
    line_range: tuple[int, int] | None = None
    """The lines a read shows (1-based, inclusive) where it says; None for the whole file."""


_TEST_PROGRAMS = {"pytest", "py.test", "tox", "nox"}
_TEST_MODULES = {"pytest", "unittest"}
_LISTERS = {"ls", "find", "tree"}
_SEARCHERS = {"grep", "egrep", "fgrep", "rg", "ag"}
_SED_RANGE = re.compile(r"^(\d+)(?:,(\d+))?p$")
_REDIRECT = re.compile(r"(?<![0-9&])>{1,2}\s*(?!&)([^\s;&|]+)")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")


def read_command(command: str, test_commands: tuple[tuple[str, ...], ...] = (),
                 submit_marker: str = SUBMIT_MARKER) -> CommandReading:
    """Classify `command` (one shell command line, possibly with pipes, `&&` and here-docs).

    Args:
        command: the command as the agent sent it.
        test_commands: the task's own test commands (argv), recognised as test runs however spelt.
        submit_marker: the text an agent echoes to submit its work.
    """
    if submit_marker and re.search(rf"(?<!\w){re.escape(submit_marker)}(?!\w)", command):
        return CommandReading("finish")
    heredoc = _HEREDOC.search(command)
    body = _HEREDOC.sub(" ", command.split("\n", 1)[0]) if heredoc else command  # a here-doc's lines are data
    pipelines = [[_words(stage) for stage in _split_unquoted(part, "|")]
                 for part in re.split(r"&&|\|\||;|\n", body)]
    pipelines = [[s for s in p if s] for p in pipelines]
    pipelines = [p for p in pipelines if p and p[0][0] != "cd"]
    stages = [s for p in pipelines for s in p]
    if any(_is_test_run(words, test_commands) for words in stages):
        return CommandReading("test_run")
    target = _redirect_target(body)
    if target is not None or heredoc and _writes(stages):
        return CommandReading("edit", target)
    for pipeline in pipelines:
        reading = _read_pipeline(pipeline)
        if reading is not None:
            return reading
    return CommandReading("command")


def _split_unquoted(text: str, sep: str) -> list[str]:
    """`text` split at `sep` where it stands outside quotes (`||` is not a pipe and was split off before)."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == sep:
            parts.append("".join(current))
            current = []
            continue
        current.append(char)
    parts.append("".join(current))
    return parts


def _read_pipeline(stages: list[list[str]]) -> CommandReading | None:
    """The first stage says what is read; a later `sed -n 'A,Bp'` or `head -n N` narrows a file read's lines."""
    reading = _read_segment(stages[0])
    if reading is None or reading.kind != "file_read":
        return reading
    for words in stages[1:]:
        narrowed = _sed_range(words[-1]) if _program(words) == "sed" and "-n" in words else (
            _head_range(words) if _program(words) == "head" else None)
        if narrowed is not None:
            return CommandReading("file_read", reading.path, narrowed)
    return reading


def _words(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=False)
    except ValueError:  # an unbalanced quote: read word by word
        return text.split()


def _program(words: list[str]) -> str:
    return words[0].rsplit("/", 1)[-1] if words else ""


def _is_test_run(words: list[str], test_commands: tuple[tuple[str, ...], ...]) -> bool:
    program = _program(words)
    if program in _TEST_PROGRAMS:
        return True
    if program.startswith("python") and len(words) > 2 and words[1] == "-m":
        return words[2] in _TEST_MODULES
    if program == "make" and "test" in words[1:]:
        return True
    return any(tuple(words[:len(cmd)]) == cmd for cmd in test_commands if cmd)


def _redirect_target(body: str) -> str | None:
    """The file a `>` or `>>` writes (outside quotes), None when the output is not redirected to a file."""
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "''", body)
    for match in _REDIRECT.finditer(unquoted):
        if match.group(1) != "/dev/null":
            return match.group(1)
    return None


def _writes(segments: list[list[str]]) -> bool:
    """A here-doc fed to a program that edits: `git apply`, `patch`, `python` (a script that writes), `tee`."""
    return any(_program(w) in {"patch", "tee"} or _program(w).startswith("python")
               or w[:2] == ["git", "apply"] for w in segments)


def _read_segment(words: list[str]) -> CommandReading | None:
    program, args = _program(words), [w for w in words[1:] if not w.startswith("-")]
    if program == "sed" and any(w == "-i" or w.startswith("-i") for w in words[1:]):
        return CommandReading("edit", args[-1] if args else None)
    if words[:2] == ["git", "apply"] or program == "patch":
        return CommandReading("edit")
    if program in _SEARCHERS or words[:2] == ["git", "grep"]:
        return CommandReading("search", args[-1] if len(args) > 1 else None)
    if program in _LISTERS or words[:2] == ["git", "ls-files"]:
        return CommandReading("listing", args[0] if args else None)
    if program in {"cat", "nl", "head", "tail", "less", "more"} and args:
        return CommandReading("file_read", args[-1], _head_range(words) if program == "head" else None)
    if program == "sed" and len(args) >= 2 and "-n" in words:
        return CommandReading("file_read", args[-1], _sed_range(args[0]))
    return None


def _sed_range(script: str) -> tuple[int, int] | None:
    match = _SED_RANGE.match(script.strip())
    if not match:
        return None
    start = int(match.group(1))
    return start, int(match.group(2) or start)


def _head_range(words: list[str]) -> tuple[int, int] | None:
    for flag, value in zip(words, words[1:]):
        if flag == "-n" and value.isdigit():
            return 1, int(value)
    return None


_GREP_VALUED = {"-e", "--regexp", "-f", "--file", "-m", "--max-count", "-A", "-B", "-C", "--include", "--exclude",
                "--exclude-dir", "-g", "--glob", "-t", "--type"}
"""Searcher options that take the next word as their value."""


def search_pattern(command: str) -> str | None:
    """What a search command (`grep -rn 'def median' .`, `grep -e X`, `rg X`, `git grep X`) looks for:
    its pattern as written, None when the command is no search."""
    for part in re.split(r"&&|\|\||;|\n", command):
        words = _words(_split_unquoted(part, "|")[0])
        if words[:2] == ["git", "grep"]:
            words = words[1:]
        if _program(words) not in _SEARCHERS:
            continue
        rest = iter(words[1:])
        for word in rest:
            if word in ("-e", "--regexp"):
                return next(rest, None)
            if word.startswith("--regexp="):
                return word.split("=", 1)[1]
            if word == "--":
                return next(rest, None)
            if word in _GREP_VALUED:
                next(rest, None)
            elif not word.startswith("-"):
                return word
    return None


def here_document(command: str) -> str | None:
    """The text of the command's first here-document (without its closing delimiter line), if any."""
    match = _HEREDOC.search(command)
    if match is None or "\n" not in command:
        return None
    lines = command.split("\n")[1:]
    end = next((k for k, line in enumerate(lines) if line.strip() == match.group(1)), len(lines))
    return "\n".join(lines[:end])


_RETURNCODE = re.compile(r"<returncode>\s*(-?\d+)\s*</returncode>|^returncode:\s*(-?\d+)"
                         r"|\[Command exited with code (-?\d+)\]", re.M)
_CODEX_CLOCK = ("Chunk ID: ", "Wall time: ")
"""The lines of Codex's output header whose values change from run to run."""
_CODEX_CLOCK_LINE = re.compile(rf"^({'|'.join(_CODEX_CLOCK)})\S.*$", re.M)
_LEADING_STATUS = re.compile(r"\AExit code (-?\d+)(?:\n|\Z)|\A" + "".join(rf"(?:{c}.*\n)?" for c in _CODEX_CLOCK)
                             + r"Process exited with code (-?\d+)(?:\n|\Z)(?:Original token count: .*\n)?(?:Output:\n?)?"
                             + r"|\A\[Command exited with code (-?\d+)\](?:\n|\Z)")
"""Claude Code's `Bash` (a failure's output opens with `Exit code N`), Codex's `exec_command` (its
output opens with a header holding `Process exited with code N`, then `Output:`) and Cline's
`run_commands` (a failure's result opens with `[Command exited with code N]`)."""


_REPORT_LINE = re.compile(r"^(Error|Exit Code|Signal|Background PIDs|Process Group PGID): (.*)$")
"""A line Gemini CLI's and Qwen Code's `run_shell_command` put after the command's output."""
_PROCESS_LINE = re.compile(r"^(Process Group PGID: |Background PIDs: )[\d, ]+$", re.M)
_UNTRUSTED = ("<untrusted_context>\n", "\n</untrusted_context>")
"""How Gemini CLI wraps a tool's result."""


_TRAILER = re.compile(r"\n?\[The command completed with exit code (-?\d+)\.[^\]\n]*\]"
                      r"(?:\n\[(?:Current working directory|Python interpreter|Command finished with exit code)[^\]\n]*\])*"
                      r"\s*\Z")
"""OpenHands' `terminal`: its output closes with `[The command completed with exit code N.]`, then the
working folder, the Python interpreter and `[Command finished with exit code N]`, each in brackets."""


def trailing_status(output: str) -> tuple[int, str] | None:
    """The exit status a trailer after the output reports (OpenHands' `[The command completed with exit
    code N.]` and the lines after it), and the output before it; None without such a trailer."""
    match = _TRAILER.search(output)
    return (int(match[1]), output[:match.start()]) if match else None


_CLOSING = re.compile(r"(?:\A|\n\n)Command exited with code (-?\d+)\Z")
"""Pi's `bash`: a failure's output closes with `Command exited with code N` after a blank line."""
_TALLY = re.compile(r"^=*\s*\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)\b.*$", re.M)
"""pytest's closing tally (`2 failed, 3 passed in 0.05s`, `===== 5 passed in 0.04s =====`)."""


def closing_status(output: str) -> tuple[int, str] | None:
    """The exit status a closing line after the output reports (Pi's `Command exited with code N`), and the
    output before it; None without such a line."""
    match = _CLOSING.search(output)
    return (int(match[1]), output[:match.start()]) if match else None


def pytest_status(output: str) -> int | None:
    """The exit status pytest's closing tally implies (1 with a failure or an error, else 0), for a test
    run's output whose wrapping tells none (OpenCode's `bash`, Pi's on success); None without a tally."""
    tallies = _TALLY.findall(output)
    if not tallies:
        return None
    return 1 if re.search(r"\d+ (?:failed|errors?)\b", tallies[-1]) else 0


def steady_header(output: str) -> str:
    """`output` with the values of Codex's header lines that change from run to run (its chunk id and
    wall time), and the process ids of Gemini CLI's and Qwen Code's report, as `<…>`."""
    output = _PROCESS_LINE.sub(lambda line: line[1] + "<…>", output)
    return _CODEX_CLOCK_LINE.sub(lambda line: line[1] + "<…>", output)


def shell_report(output: str) -> tuple[int | None, str] | None:
    """The exit status and the output of a `run_shell_command` report: Gemini CLI's (`Output: …`, then an
    `Exit Code: N` line only for a failure, `Process Group PGID: N`, all inside `<untrusted_context>`) and
    Qwen Code's (`Command: …`, `Directory: …`, `Output: …`, then `Error:`, `Exit Code:`, `Signal:` and
    `Process Group PGID:` lines, each `(none)` where it has nothing to say); None for any other output.
    The status is None where the report gives none (a command killed by a signal)."""
    text = output.removeprefix(_UNTRUSTED[0]).removesuffix(_UNTRUSTED[1])
    if text.startswith("Command: "):  # Qwen Code's header: the command (here-docs span lines), its folder
        _, found, rest = text.partition("\nDirectory: ")
        text = rest.partition("\n")[2] if found else text
    if not text.startswith("Output: "):
        return None
    lines = text.removeprefix("Output: ").split("\n")
    report: dict[str, str] = {}
    while len(lines) > 1 and (line := _REPORT_LINE.match(lines[-1])):
        report[line[1]] = line[2]
        lines.pop()
    if not report and text == output:
        return None
    body = "\n".join(lines)
    return _report_status(report), "" if body == "(empty)" else body


def _report_status(report: dict[str, str]) -> int | None:
    """`Exit Code: N`; without one (Gemini CLI's success), 0 unless an error or a signal is reported."""
    code = report.get("Exit Code", "")
    if re.fullmatch(r"-?\d+", code):
        return int(code)
    failed = any(report.get(key, "(none)") != "(none)" for key in ("Error", "Signal"))
    return None if failed or "Exit Code" in report else 0


def leading_status(output: str) -> tuple[int, str] | None:
    """The exit status a header before the output reports (Claude Code's `Exit code N`, Codex's
    `Process exited with code N` … `Output:`, Cline's `[Command exited with code N]`), and the output
    after it; None without such a header."""
    match = _LEADING_STATUS.match(output)
    return (int(match[1] or match[2] or match[3]), output[match.end():]) if match else None


def exit_status(output: str) -> int | None:
    """The exit status an agent's observation reports (mini-swe-agent's `<returncode>N</returncode>`, a
    `returncode: N` line, Claude Code's leading `Exit code N`, Codex's `Process exited with code N`
    header, Cline's `[Command exited with code N]`, Gemini CLI's and Qwen Code's `Exit Code: N` report,
    OpenHands' closing trailer, Pi's closing `Command exited with code N`, or ctxbench's own closing
    `[exit code N]`), if any."""
    leading = leading_status(output) or trailing_status(output) or closing_status(output)
    if leading is not None:
        return leading[0]
    report = shell_report(output)
    if report is not None:
        return report[0]
    match = _RETURNCODE.search(output)
    if match:
        return int(next(g for g in match.groups() if g is not None))
    return exit_code(output.rstrip())
