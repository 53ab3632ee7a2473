"""What the simulator sees in one request: calls, results, numbered file excerpts, remembered summaries.

`read_view` is the one reading of the messages; the simulator's rules ask the `View` what was done
(`done`), what was read (`remembered`), which test runs are in view and how they ended (`timeline`)
and what its searches found (`search_hits`).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from ctxbench.harness.chat import read_arguments, read_opening
from ctxbench.harness.models.simmemory import Memory, parse_memory
from ctxbench.harness.markup.placeholders import dropped_output, exit_code
from ctxbench.harness.markup.rendering import Excerpt, parse_excerpts
from ctxbench.harness.tokens import TokenCounter

__all__ = ["View", "TestRun", "read_view", "action_key", "contains", "is_test_path", "MEMORY_ORDER"]

_HIT = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+): (?P<text>.*)$", re.M)
MEMORY_ORDER = -10**6
"""Events a summary remembers come before every verbatim message (order = turn + this)."""
_EDITS = ("edit_file", "write_file")

TestRun = tuple[int, bool | None, str]
"""A test run in view: (order, passed, output); `passed` is None when its output is not shown."""


@dataclass
class View:
    """What the simulator can see in one request."""

    calls: dict[str, tuple[str, dict[str, Any], int]] = field(default_factory=dict)
    """tool-call id -> (tool, args, message index)."""
    results: dict[str, tuple[str, int]] = field(default_factory=dict)
    """tool-call id -> (content, message index)."""
    excerpts: list[tuple[int, Excerpt]] = field(default_factory=list)
    fresh: list[tuple[int, Excerpt]] = field(default_factory=list)
    """The excerpts no later edit of their file has made stale."""
    spans: list[tuple[int, int]] = field(default_factory=list)
    """Per message: (first token offset, tokens)."""
    contents: list[str] = field(default_factory=list)
    identities: list[str] = field(default_factory=list)
    """Per message: what makes it one view (its tool-call id, or its content)."""
    memory: Memory = field(default_factory=Memory)
    tokens: int = 0

    def position(self, index: int, needle: str) -> float:
        """Relative position in the whole context of `needle` inside message `index`."""
        start, size = self.spans[index]
        content = self.contents[index]
        at = content.find(needle)
        frac = (at / len(content)) if at >= 0 and content else 0.5
        return (start + size * frac) / self.tokens

    def shown(self, path: str, line: int) -> bool:
        """Line `line` of `path` is visible as a numbered line."""
        return any(e.path == path and e.start <= line <= e.end for _, e in self.fresh)

    def gaps(self) -> list[tuple[str, int, int, bool]]:
        """Ranges a visible file read left out at an omission marker: (path, first, last, ranged read)."""
        out = []
        for cid, (name, args, _) in self.calls.items():
            if name != "read_file" or cid not in self.results:
                continue
            index = self.results[cid][1]
            parts = [e for i, e in self.excerpts if i == index]
            ranged = "start_line" in args or "end_line" in args
            for a, b in zip(parts, parts[1:]):
                if a.path == b.path and b.start > a.end + 1:
                    out.append((a.path, a.end + 1, b.start - 1, ranged))
        return out

    def visible_result(self, cid: str) -> bool:
        """The call's result is in view as the tool gave it: not missing, and not a placeholder that
        stands for an output a strategy dropped (masked, evicted or hidden)."""
        content = self.results.get(cid, ("", 0))[0]
        return bool(content) and dropped_output(content) is None

    def remembered(self, path: str, line: int) -> bool:
        """Line `line` of `path` was read, as far as the context tells: visible, summarized, or
        asked for by a read whose output a placeholder now stands for."""
        if self.shown(path, line) or self.memory.read(path, line, line):
            return True
        for cid, (name, args, _) in self.calls.items():
            if name == "read_file" and args.get("path") == path and not self.visible_result(cid):
                if int(args.get("start_line") or 1) <= line <= int(args.get("end_line") or 10**9):
                    return True
        return False

    def done(self, name: str, args: dict[str, Any]) -> bool:
        """The action was taken: its call is in view, or a summary in view lists it."""
        key = action_key(name, args)
        if any(action_key(n, a) == key for n, a, _ in self.calls.values()):
            return True
        if name == "read_file":
            start, end = int(args.get("start_line") or 1), int(args.get("end_line") or 10**9)
            return self.memory.read(args.get("path", ""), start, end)
        return any(c.matches(name, args) for c in self.memory.calls)

    def failed(self, cid: str) -> bool:
        """The call's result is a tool error."""
        return self.results.get(cid, ("", 0))[0].startswith("error:")

    def timeline(self) -> tuple[int | None, list[TestRun]]:
        """The latest edit's order and every test run as (order, passed, output), oldest first.

        Verbatim calls are ordered by message index; what a summary remembers comes before them.
        `passed` is None for a run whose output a placeholder stands for: hidden, not failed.
        """
        edits = [i for cid, (n, _, i) in self.calls.items() if n in _EDITS and not self.failed(cid)]
        if self.memory.edits:
            edits.append(MEMORY_ORDER + (self.memory.last_edit_turn or 0))
        tests: list[TestRun] = [(MEMORY_ORDER + turn, passed, self.memory.errors)
                                for turn, passed in self.memory.test_runs()]
        for cid, (n, _, i) in self.calls.items():
            if n == "run_tests" and cid in self.results:
                content = self.results[cid][0]
                shown = self.visible_result(cid)
                tests.append((i, (exit_code(content) == 0) if shown else None, content if shown else ""))
        return (max(edits) if edits else None), sorted(tests, key=lambda t: t[0])

    def search_hits(self) -> list[tuple[str, int, str]]:
        """(path, line, text) of every search hit in view, oldest search first."""
        hits = []
        for cid, (name, _, _) in sorted(self.calls.items(), key=lambda kv: kv[1][2]):
            if name == "search" and cid in self.results:
                hits += [(m["path"], int(m["line"]), m["text"]) for m in _HIT.finditer(self.results[cid][0])]
        return hits

    def zero_hits(self, query: str) -> bool:
        """A search for `query` found nothing (in view, or as a summary remembers it)."""
        return any(n == "search" and a.get("query") == query and self.results.get(cid, ("",))[0].startswith("0 matches")
                   for cid, (n, a, _) in self.calls.items()) or \
            any(c.tool == "search" and c.matches("search", {"query": query}) and c.outcome.startswith("0 matches")
                for c in self.memory.calls)


def read_view(messages: list[dict[str, Any]], counter: TokenCounter, sizes: list[int] | None = None) -> View:
    """The view of a request's messages; `sizes` are their tokens where they stand for other messages
    (the bash dialect's commands read as native calls), else they are counted."""
    v = View()
    sizes = sizes if sizes is not None else [counter.count_message(m) for m in messages]
    v.tokens = sum(sizes) or 1
    acc = 0
    after_task = read_opening(messages).task_end
    for i, (m, size) in enumerate(zip(messages, sizes)):
        content = m.get("content") or ""
        v.spans.append((acc, size))
        v.contents.append(content)
        v.identities.append(m.get("tool_call_id") or hashlib.sha256(content.encode()).hexdigest()[:16])
        acc += size
        for c in m.get("tool_calls") or ():
            v.calls[c["id"]] = (c["function"]["name"], read_arguments(c["function"]["arguments"]), i)
        if m.get("role") == "tool":
            v.results[m.get("tool_call_id", "")] = (content, i)
        if m.get("role") in ("tool", "user") and "| " in content:
            v.excerpts.extend((i, e) for e in parse_excerpts(content))
        if m.get("role") == "user" and i >= after_task:
            v.memory.merge(parse_memory(content))
    edits = [(i, str(args.get("path")), str(args.get("old_text", args.get("content", ""))).split("\n"))
             for cid, (name, args, i) in v.calls.items() if name in _EDITS and not v.failed(cid)]
    v.fresh = [(i, part) for i, e in v.excerpts
               for part in _without_edited(e, [old for k, path, old in edits if path == e.path and k > i])]
    return v


def action_key(name: str, args: dict[str, Any]) -> str:
    return name + json.dumps(args, sort_keys=True)


def contains(e: Excerpt, lines: tuple[str, ...]) -> bool:
    """`lines` appear, consecutively, in the excerpt."""
    if not lines:
        return False
    n = len(lines)
    body = e.lines
    first = lines[0]
    for i in range(len(body) - n + 1):
        if body[i] == first and body[i:i + n] == lines:
            return True
    return False


def _without_edited(e: Excerpt, olds: list[list[str]]) -> list[Excerpt]:
    """`e` split around the lines that a later edit replaced (they no longer show the file)."""
    if not olds:
        return [e]
    stale: set[int] = set()
    for old in olds:
        n = len(old)
        for k in range(len(e.lines) - n + 1):
            if list(e.lines[k:k + n]) == old:
                stale.update(range(k, k + n))
    parts: list[Excerpt] = []
    run: list[str] = []
    for k, line in enumerate(e.lines):
        if k in stale:
            if run:
                parts.append(Excerpt(e.path, e.start + k - len(run), tuple(run), e.total))
            run = []
        else:
            run.append(line)
    if run:
        parts.append(Excerpt(e.path, e.start + len(e.lines) - len(run), tuple(run), e.total))
    return parts


def is_test_path(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return path.startswith("tests/") or "/tests/" in path or name.startswith("test_") or name == "conftest.py"
