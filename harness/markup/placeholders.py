"""The bracketed markers that tools and strategies write into tool messages, and their readers.

Each marker is written by one function here and recognised by a pattern here, so what a strategy
leaves in the context and what the simulated model reads back cannot drift apart:

- the **exit marker** that closes a test run (`[exit code N]`, or `[timed out]`), written by the
  `run_tests` tool;
- the **omission marker** put where the middle of a long text was cut
  (`[… N characters omitted …]`), written through `ctxbench.harness.markup.textcut` by the `trimmer`,
  `budget_planner`'s cuts and the tools' output cap;
- the **placeholders** that stand for a whole tool output a strategy dropped while the call it
  answers stays in view: `observation_masking`'s masked output, `budget_planner`'s evicted output and
  `file_selector`'s hidden read. A call answered by a placeholder was made; its output is not shown.
"""

from __future__ import annotations

import re
from typing import Literal

__all__ = ["exit_marker", "exit_code", "omission", "is_omission", "masked_output", "without_masked_tokens",
           "evicted_output", "hidden_read", "Dropped", "dropped_output"]

_EXIT = re.compile(r"\[exit code (-?\d+)\]\s*$")
_OMISSION = re.compile(r"^\[… .*\bomitted\b.*\]$")


def exit_marker(code: int | None) -> str:
    """The line that closes a test run's output: `[exit code N]`, or `[timed out]` for None."""
    return "[timed out]" if code is None else f"[exit code {code}]"


def exit_code(output: str) -> int | None:
    """The code of the `[exit code N]` that closes `output`, if it ends with one."""
    m = _EXIT.search(output)
    return int(m.group(1)) if m else None


def omission(count: int, what: str) -> str:
    """The marker put where `count` `what` (e.g. "characters") were left out, on a line of its own."""
    return f"\n[… {count} {what} omitted …]\n"


def is_omission(line: str) -> bool:
    """`line` is an omission marker."""
    return _OMISSION.match(line) is not None


def masked_output(tool: str, args: str, chars: int, tokens: int) -> str:
    """`observation_masking`'s placeholder: which call (tool, arguments as text) and how much was dropped."""
    return (f"[output of {tool} {args} omitted: {chars:,} characters, {tokens:,} tokens; "
            f"call the tool again if you need it]")


_MASKED_SIZE = r"(omitted: [\d,]+ characters, )[\d,]+( tokens; )"
"""The size a masked output's placeholder gives (`masked_output`): its characters, then its tokens."""
_MASKED_TOKENS = re.compile(_MASKED_SIZE)


def without_masked_tokens(content: str) -> str:
    """`content` with the token count of every masked output's placeholder in it as 0: it counts the output
    as the agent got it, whose object addresses tokenize differently from run to run."""
    return _MASKED_TOKENS.sub(r"\g<1>0\g<2>", content)


def evicted_output(tool: str, turn: int, layer: str) -> str:
    """`budget_planner`'s placeholder for the output of `tool` in turn `turn`, evicted in `layer`."""
    return f"[{tool} output of turn {turn} evicted ({layer}); call the tool again if needed]"


def hidden_read(path: str | None, line_range: tuple[int, int] | None, turn: int) -> str:
    """`file_selector`'s placeholder for an earlier file read (its selection shows the relevant code)."""
    span = f" lines {line_range[0]}-{line_range[1]}" if line_range else ""
    return f"[read of {path}{span} in turn {turn}: hidden; the selection above shows relevant code, read again if needed]"


Dropped = Literal["masked", "evicted", "hidden"]
"""Which placeholder stands for a dropped output."""

_DROPPED: tuple[tuple[Dropped, re.Pattern[str]], ...] = (
    ("masked", re.compile(r"\[output of \S+ .* " + _MASKED_SIZE)),
    ("evicted", re.compile(r"\[\w* output of turn \d+ evicted \(\w+\); ")),
    ("hidden", re.compile(r"\[read of .* in turn \d+: hidden; ")),
)


def dropped_output(content: str) -> Dropped | None:
    """Which placeholder `content` (a whole tool message) is, or None when it is not one."""
    return next((kind for kind, pattern in _DROPPED if pattern.match(content)), None)
