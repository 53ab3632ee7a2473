"""The extractive summary of turns: a small state folded turn by turn (pure, deterministic).

Folding is a left fold, so the digest of turns 0..m is the same whether it was built in one go or
continued from the digest of 0..k: incremental summaries stay a function of the history.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from ctxbench.harness.history import Observation, Turn

__all__ = ["Digest", "exit_code", "failure_lines"]

MAX_COMMANDS = 10
MAX_CALL_ERRORS = 3
MAX_PATHS = 25
LINE_CHARS = 200

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


@dataclass(frozen=True)
class Digest:
    """What the extractive summary keeps of the turns folded so far."""

    files_read: tuple[tuple[str, tuple[str, ...]], ...] = ()
    """(path, line ranges read), in order of first read."""
    files_modified: tuple[tuple[str, str], ...] = ()
    """(path, note on the latest successful edit), in order of first edit."""
    commands: tuple[str, ...] = ()
    """The last MAX_COMMANDS calls other than file reads, with their outcome."""
    test_failure: tuple[str, ...] = ()
    """Key lines of the latest test run, if it failed and no later run passed."""
    call_errors: tuple[str, ...] = ()
    """The last failed calls since the latest passing test run."""

    def fold(self, turn: Turn) -> Digest:
        """This digest extended by `turn`."""
        reads, edits = dict(self.files_read), dict(self.files_modified)
        commands, failure, errors = list(self.commands), self.test_failure, list(self.call_errors)
        for obs in turn.observations:
            where = f"turn {turn.index}"
            if obs.kind == "file_read" and not obs.is_error and obs.path:
                span = f"{obs.line_range[0]}-{obs.line_range[1]}" if obs.line_range else "all"
                reads[obs.path] = tuple(dict.fromkeys(reads.get(obs.path, ()) + (span,)))
                continue
            if obs.kind == "edit" and not obs.is_error and obs.path:
                edits[obs.path] = f"{where}: {_first_line(obs.content)}"
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
        return replace(self, files_read=tuple(reads.items()), files_modified=tuple(edits.items()),
                       commands=tuple(commands), test_failure=failure, call_errors=tuple(errors))

    def render(self, task_statement: str) -> str:
        """The summary text."""
        def listed(pairs: list[str]) -> str:
            more = f"; +{len(pairs) - MAX_PATHS} more" if len(pairs) > MAX_PATHS else ""
            return "; ".join(pairs[:MAX_PATHS]) + more if pairs else "none"

        out = [f"Task goal: {_first_line(task_statement)}",
               "Files read: " + listed([f"{p} ({', '.join(r)})" for p, r in self.files_read]),
               "Files modified: " + listed([f"{p} ({note})" for p, note in self.files_modified]),
               "Commands run (oldest first):"]
        out += [f"- {c}" for c in self.commands] or ["- none"]
        out.append("Unresolved errors:")
        unresolved = [f"- last test run: {ln}" for ln in self.test_failure] + [f"- {e}" for e in self.call_errors]
        out += unresolved or ["- none"]
        return "\n".join(out)
