"""Pinned notes derived deterministically from a history (design note 001, "the pinned list").

The task statement is pinned by being sent verbatim in every request. This module derives the
other three items of the minimal pinned set:

- *red-line constraints*: the sentences of the task statement that forbid or require something
  (`do not`, `don't`, `must`, `never`, `only`), repeated next to the history so they are not lost
  in the middle of a long context;
- *current plan*: the latest non-empty assistant text, shown only when its turn is older than
  the recent turns (a recent turn shows it verbatim anyway), cut to `PLAN_CHARS`;
- *key references*: paths named in the task statement and paths successfully edited, one line
  each with a note (the latest edit's one-line confirmation).
"""

from __future__ import annotations

import re

from ctxbench.harness.records import History

__all__ = ["PLAN_CHARS", "task_paths", "constraints", "key_references", "current_plan", "pinned_notes"]

PLAN_CHARS = 600
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.(?:py|pyi|js|jsx|ts|tsx|go|rs|java|rb|c|h|cc|cpp|hpp"
                   r"|toml|cfg|ini|yaml|yml|json|md|txt|rst))\b")

_RED_LINE = re.compile(r"\b(do not|don't|must|never|only)\b", re.IGNORECASE)
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")


def constraints(task_statement: str) -> list[str]:
    """Sentences of the task statement that state a red line, in order."""
    return [s.strip() for s in _SENTENCE.split(task_statement) if _RED_LINE.search(s)]


def task_paths(task_statement: str) -> list[str]:
    """File paths named in the task statement, in order of first mention."""
    return list(dict.fromkeys(_PATH.findall(task_statement)))


def key_references(history: History) -> list[str]:
    """`path — note` lines: task-named paths first, then edited paths in order of first edit."""
    notes = {p: ["named in the task statement"] for p in task_paths(history.task_statement)}
    edited: dict[str, str] = {}
    for turn in history.turns:
        for obs in turn.observations:
            if obs.kind == "edit" and not obs.is_error and obs.path:
                first = (obs.content.strip().splitlines() or [""])[0][:160]
                edited[obs.path] = f"edited in turn {turn.index}: {first}"
    for path, note in edited.items():
        notes.setdefault(path, []).append(note)
    return [f"{path} — {'; '.join(n)}" for path, n in notes.items()]


def current_plan(history: History, keep_recent: int) -> str:
    """The latest non-empty assistant text if its turn is not among the recent ones, else ''."""
    for position in range(len(history.turns) - 1, -1, -1):
        text = history.turns[position].text.strip()
        if text:
            if position >= len(history.turns) - keep_recent:
                return ""
            return f"(turn {history.turns[position].index}) {text[:PLAN_CHARS]}"
    return ""


def pinned_notes(history: History, keep_recent: int) -> str:
    """The pinned message's content, or '' when there is nothing to pin."""
    plan, refs = current_plan(history, keep_recent), key_references(history)
    parts = ["Constraints (from the task):\n" + "\n".join(f"- {c}" for c in red)
             for red in [constraints(history.task_statement)] if red]
    if plan:
        parts.append(f"Current plan {plan}")
    if refs:
        parts.append("Key references:\n" + "\n".join(f"- {r}" for r in refs))
    return "Pinned notes (kept in every request):\n" + "\n".join(parts) if parts else ""
