"""The root-cause lines of an error output too long to keep whole (design note 003 §3.4, §8.3).

A middle cut of a long test run loses what the agent needs to act on: the failing assertion with its
values, the last frames of the traceback, the verdict. `root_cause_excerpt` keeps whole lines by rank
instead, within a token room, and marks each run of lines it leaves out:

1. verdict lines: pytest's `E ` lines (the assertion and its values), exception lines
   (`AssertionError: ...`), `file:line:` locations, `FAILED`/`ERROR` lines, compiler `error:` lines,
   the summary line (`=== 1 failed, 150 passed ===`) and the exit code;
2. frame lines: the failing statement (`>`), `File "...", line N` headers, `Traceback` and section
   headers (`FAILURES`, `short test summary info`, `___ test_name ___`);
3. the lines next to those (the code around the failing statement);
4. everything else.

Inside a rank the later lines come first: the last frames and the tail carry the verdict.
"""

from __future__ import annotations

import re
from typing import Callable

from ctxbench.harness.markup.textcut import cut_middle, omission

__all__ = ["root_cause_excerpt"]

_VERDICT = re.compile(r"^E\s|^(FAILED|ERROR)\b|^[\w.]+(Error|Exception|Exit|Interrupt)\b|^\S+:\d+:(\d+:)? |\berror:"
                      r"|^=+ .*\b(failed|passed|errors?)\b.* =+$|^\[exit code \d+\]$")
_FRAME = re.compile(r"^>|^\s*File \".*\", line \d+|^Traceback \(most recent call last\)"
                    r"|^_{3,} .* _{3,}$|^=+ (FAILURES|ERRORS|short test summary info) =+$")
_NEAR = 2
"""Lines either side of a verdict or frame line that rank third."""
_LINE_CHARS = 1000
"""A single line longer than this is itself cut to head + tail, so one huge repr cannot crowd out the rest."""


def _ranks(lines: list[str]) -> list[int]:
    ranks = [0 if _VERDICT.search(line) else 1 if _FRAME.search(line) else 3 for line in lines]
    key = [i for i, r in enumerate(ranks) if r < 3]
    for i in key:
        for j in range(max(0, i - _NEAR), min(len(lines), i + _NEAR + 1)):
            ranks[j] = min(ranks[j], 2)
    return ranks


def _render(lines: list[str], kept: set[int]) -> str:
    out, gap = [], 0
    for i, line in enumerate(lines):
        if i not in kept:
            gap += 1
            continue
        if gap:
            out.append(omission(gap, "lines").strip("\n"))
            gap = 0
        out.append(line)
    if gap:
        out.append(omission(gap, "lines").strip("\n"))
    return "\n".join(out)


def root_cause_excerpt(text: str, room: int, count: Callable[[str], int], head_ratio: float = 0.5) -> str:
    """The highest-ranked whole lines of `text` that fit `room` tokens, in their order, gaps marked.

    Args:
        text: an error output (test run, traceback, build log).
        room: tokens the excerpt may take, as `count` measures it.
        count: the experiment's token counter (`TokenCounter.count`).
        head_ratio: head share when no single line fits and the text is cut to head + tail instead.
    """
    lines = [cut_middle(line, _LINE_CHARS) for line in text.split("\n")]
    ranks = _ranks(lines)
    marker = count(omission(len(lines), "lines"))
    kept: set[int] = set()
    used = 0
    for i in sorted(range(len(lines)), key=lambda i: (ranks[i], -i)):
        cost = count(lines[i]) + 1 + (0 if kept & {i - 1, i + 1} else marker)
        if used + cost <= room:
            kept.add(i)
            used += cost
    excerpt = _render(lines, kept)
    while kept and count(excerpt) > room:  # the estimate ran low: drop the lowest-ranked line kept
        kept.discard(max(kept, key=lambda i: (ranks[i], -i)))
        excerpt = _render(lines, kept)
    if not kept:
        return cut_middle(text, max(1, room * len(text) // max(1, count(text))), head_ratio)
    return excerpt
