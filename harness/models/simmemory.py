"""What the simulator remembers from a summary it is shown, and the summaries it writes itself.

A summary (the `summarizer` strategy's digest, or a summary the simulator wrote in `model` mode)
is memory, not evidence: the files it says were read count as read, the commands it lists as run,
the files it says were modified as edits made, and its latest test outcome as the latest test
run. It never shows code, so it never lets a hunk be written.

Both summary formats are read by their section headings (`Files read`, `Files modified`,
`Commands run`, `Unresolved errors`); either layout of an entry is accepted, one per line
(`- path (lines 1-60, 80-90)`) or several on one line (`path (1-60); path (all)`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from ctxbench.harness.chat import read_arguments
from ctxbench.harness.markup.placeholders import exit_code
from ctxbench.harness.markup.rendering import parse_excerpts
from ctxbench.harness.markup.summaries import (CALL_ARGS_CHARS, COMMAND_ENTRY, EDIT_COUNT, FOLDED_CALL, FOLDED_TURN,
                                        LINE_RANGE, MAX_COMMANDS, MODIFIED_ENTRY, READ_ENTRY, SECTION, TURN, WHOLE_FILE,
                                        command_entry, heading, modified_entry, outcome_passed, read_entry,
                                        split_fold_request, test_outcome)

__all__ = ["Memory", "RememberedCall", "parse_memory", "summarize_request"]


@dataclass(frozen=True)
class RememberedCall:
    """One call a summary lists: tool, its JSON arguments (possibly cut short), turn and outcome."""

    tool: str
    args: str
    cut: bool
    turn: int | None
    outcome: str

    def call(self) -> str:
        """The call as a summary lists it: `tool(args)`, with `…` when the arguments were cut."""
        return f"{self.tool}({self.args}{'…' if self.cut else ''})"

    def matches(self, tool: str, args: dict) -> bool:
        text = json.dumps(args, sort_keys=True, default=str)
        return tool == self.tool and (text.startswith(self.args) if self.cut else text == self.args)


@dataclass
class Memory:
    """What a summary says was done."""

    reads: dict[str, list[tuple[int, int]]] = field(default_factory=dict)
    """path -> line ranges read."""
    edits: dict[str, int] = field(default_factory=dict)
    """path -> successful edits made to it."""
    last_edit_turn: int | None = None
    calls: list[RememberedCall] = field(default_factory=list)
    """Calls other than file reads, oldest first."""
    errors: str = ""
    """The unresolved errors, as the summary words them (test failure lines keep file:line)."""

    def __bool__(self) -> bool:
        return bool(self.reads or self.edits or self.calls or self.errors)

    def read(self, path: str, start: int, end: int) -> bool:
        """True when lines start..end of `path` are remembered as read."""
        return any(a <= start and end <= b for a, b in self.reads.get(path, ()))

    def test_runs(self) -> list[tuple[int, bool]]:
        """(turn, passed) of every remembered test run (turn -1 when the summary gives none)."""
        return [(c.turn if c.turn is not None else -1, outcome_passed(c.outcome))
                for c in self.calls if c.tool == "run_tests"]

    def merge(self, other: Memory) -> None:
        for path, ranges in other.reads.items():
            self.reads.setdefault(path, []).extend(ranges)
        for path, n in other.edits.items():
            self.edits[path] = max(self.edits.get(path, 0), n)
        if other.last_edit_turn is not None:
            self.last_edit_turn = max(self.last_edit_turn or 0, other.last_edit_turn)
        self.calls += other.calls
        self.errors = (self.errors + "\n" + other.errors).strip()

    def render(self) -> str:
        """A summary in the digest's layout (what `parse_memory` reads back)."""
        out = [heading("Files read", not self.reads)]
        out += [read_entry(p, _merged(r)) for p, r in self.reads.items()]
        out.append(heading("Files modified", not self.edits))
        last = None if self.last_edit_turn is None else f"turn {self.last_edit_turn}"
        out += [modified_entry(p, n, last) for p, n in self.edits.items()]
        out.append(heading("Commands run"))
        out += [f"- {command_entry(c.turn, c.call(), c.outcome)}" for c in self.calls[-MAX_COMMANDS:]] or ["- none"]
        out.append(heading("Unresolved errors"))
        out += [f"- {ln}" for ln in self.errors.splitlines() if ln.strip()] or ["- none"]
        return "\n".join(out)


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for a, b in sorted(ranges):
        if out and a <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def parse_memory(text: str) -> Memory:
    """The memory in a summary's text (empty when it has none of the sections)."""
    mem = Memory()
    heads = list(SECTION.finditer(text))
    for k, head in enumerate(heads):
        body = text[head.end():heads[k + 1].start() if k + 1 < len(heads) else len(text)]
        name = head.group(1)
        if name == "Files read":
            for entry in READ_ENTRY.finditer(body):
                spans = [(int(a), int(b)) for a, b in LINE_RANGE.findall(entry.group(2))]
                if "all" in entry.group(2):
                    spans.append((1, WHOLE_FILE))
                mem.reads.setdefault(entry.group(1), []).extend(spans)
        elif name == "Files modified":
            for line in re.split(r"\n|; (?=[\w./-]+\.\w+ \()", body):
                modified = MODIFIED_ENTRY.search(line)
                if not modified:
                    continue
                n = EDIT_COUNT.search(modified.group(2))
                mem.edits[modified.group(1)] = mem.edits.get(modified.group(1), 0) + (int(n.group(1)) if n else 1)
                turns = [int(t) for t in TURN.findall(line)]
                if turns:
                    mem.last_edit_turn = max([mem.last_edit_turn or 0, *turns])
        elif name == "Commands run":
            for c in COMMAND_ENTRY.finditer(body):
                if c["tool"] != "read_file":
                    mem.calls.append(RememberedCall(c["tool"], c["args"], bool(c["cut"]),
                                                    int(c["turn"]) if c["turn"] else None, c["outcome"]))
        elif name in ("Unresolved errors", "Last errors"):
            lines = [ln.strip().lstrip("- ").strip() for ln in body.strip().splitlines()]
            mem.errors = "\n".join(ln for ln in lines if ln and ln != "none")
    return mem


def summarize_request(text: str) -> Memory:
    """The memory of a summarizing request: its previous summary, folded with the turns it shows.

    The request lists turns as `Turn N assistant: …` and each call as
    `  call tool({args}) -> [kind]` followed by the (possibly cut) output.
    """
    previous, turns = split_fold_request(text)
    mem = parse_memory(previous) if previous is not None else Memory()
    marks = sorted([(m.start(), "turn", m) for m in FOLDED_TURN.finditer(turns)] +
                   [(m.start(), "call", m) for m in FOLDED_CALL.finditer(turns)], key=lambda x: x[0])
    turn = None
    for k, (at, what, m) in enumerate(marks):
        if what == "turn":
            turn = int(m["turn"])
            continue
        end = marks[k + 1][0] if k + 1 < len(marks) else len(turns)
        body = turns[m.end():end].strip("\n")
        args = read_arguments(m["args"])
        tool, failed = m["tool"], bool(m["error"])
        if tool == "read_file" and not failed:
            excerpts = parse_excerpts(body)
            path = excerpts[0].path if excerpts else args.get("path")
            if isinstance(path, str):
                spans = [(e.start, e.end) for e in excerpts] or [(1, WHOLE_FILE)]
                mem.reads.setdefault(path, []).extend(spans)
            continue
        if tool in ("edit_file", "write_file") and not failed and isinstance(args.get("path"), str):
            mem.edits[args["path"]] = mem.edits.get(args["path"], 0) + 1
            mem.last_edit_turn = turn
        code = exit_code(body)
        if tool == "run_tests":
            outcome = test_outcome(code) if code is not None else (body.splitlines() or [""])[0][:200]
            failures = [ln.strip() for ln in body.splitlines()
                        if ln.startswith("E ") or re.match(r"^\S+\.py:\d+", ln)]
            mem.errors = "" if code == 0 else "\n".join(failures[-6:])
        else:
            outcome = ("ERROR " if failed else "") + (body.splitlines() or [""])[0][:200]
        text_args = json.dumps(args, sort_keys=True, default=str)
        cut = len(text_args) > CALL_ARGS_CHARS
        mem.calls.append(RememberedCall(tool, text_args[:CALL_ARGS_CHARS], cut, turn, outcome))
    return mem
