"""The extractive summary of turns: a small state folded turn by turn (pure, deterministic).

Folding is a left fold, so the digest of turns 0..m is the same whether it was built in one go or
continued from the digest of 0..k: incremental summaries stay a function of the history.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from ctxbench.harness.records import Observation, Turn

__all__ = ["Digest", "exit_code", "failure_lines", "merge_ranges"]

MAX_COMMANDS = 10
MAX_CALL_ERRORS = 3
LINE_CHARS = 200
EDIT_CHARS = 60

_EXIT = re.compile(r"\[exit code (-?\d+)\]\s*$")
_LOCATION = re.compile(r'^(?:\S+\.py:\d+|\s*File "[^"]+", line \d+)')
_SUMMARY = re.compile(r"^=+ .*\b(failed|error|errors|passed)\b.* =+$")


def exit_code(output: str) -> int | None:
    """The `[exit code N]` of a test run's last line, if any."""
    m = _EXIT.search(output)
    return int(m.group(1)) if m else None


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
    args = json.dumps(dict(obs.arguments), sort_keys=True, default=str)
    return f"{obs.tool}({args[:80]}{'…' if len(args) > 80 else ''})"


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
                outcome = f"exit code {code}" if code is not None else _first_line(obs.content)
            elif obs.kind == "listing" and not obs.is_error:
                outcome = f"{len(obs.content.splitlines())} entries"
            else:
                outcome = ("ERROR " if obs.is_error else "") + _first_line(obs.content)
                if obs.is_error or obs.kind == "error":
                    errors = (errors + [f"{where} {_call(obs)}: {_first_line(obs.content)}"])[-MAX_CALL_ERRORS:]
            commands = (commands + [f"{where}: {_call(obs)} -> {outcome}"])[-MAX_COMMANDS:]
        return replace(self, files_read=tuple(reads.items()),
                       files_modified=tuple((p, n, how) for p, (n, how) in edits.items()),
                       commands=tuple(commands), test_failure=failure, call_errors=tuple(errors))

    def kept_sections(self, task_statement: str) -> tuple[str, str, str]:
        """The sections never cut: the task goal, every file modified and how, the unresolved errors."""
        goal = f"Task goal: {_first_line(task_statement)}"
        modified = "Files modified:" + ("".join(
            f"\n- {p} ({n} edit{'s' if n > 1 else ''}; last {how})" for p, n, how in self.files_modified) or " none")
        unresolved = [f"- last test run: {ln}" for ln in self.test_failure] + [f"- {e}" for e in self.call_errors]
        return goal, modified, "\n".join(["Unresolved errors:", *(unresolved or ["- none"])])

    def render(self, task_statement: str, max_chars: int = 4000) -> tuple[str, int]:
        """The summary text, and how many entries of the bounded sections were left out.

        The task goal, the files modified and the unresolved errors are always whole. The files
        read and the commands are each bounded: they share what `max_chars` leaves after the kept
        sections, half each (the commands get what the files read leave unused), and drop their
        oldest entries first, saying how many.
        """
        goal, modified, unresolved = self.kept_sections(task_statement)
        fixed = "\n".join([goal, "Files read:", modified, "Commands run (oldest first):", unresolved])
        room = max(0, max_chars - len(fixed) - 2 * len("- (+999 files read earlier)\n"))
        reads = [f"- {p} (lines {', '.join(f'{a}-{b}' for a, b in r) or 'all'})" for p, r in self.files_read]
        kept_reads, left_reads = _fit(reads, room // 2)
        kept_cmds, left_cmds = _fit(list(self.commands), room - sum(len(e) + 1 for e in kept_reads))
        read_lines = ([f"- (+{left_reads} files read earlier)"] if left_reads else []) + kept_reads
        cmd_lines = ([f"- (+{left_cmds} earlier commands)"] if left_cmds else []) + [f"- {c}" for c in kept_cmds]
        out = [goal, "Files read:" + ("" if read_lines else " none"), *read_lines, modified,
               "Commands run (oldest first):", *(cmd_lines or ["- none"]), unresolved]
        return "\n".join(out), left_reads + left_cmds
