"""The simulator reads what each strategy leaves in the context as what it is.

One history (a failing test run, a read, the fix, a passing run, four more reads, a listing) is
built by every built-in strategy with parameters that make it act; the simulator's reading of the
resulting messages must then agree with the history: a test run whose output a placeholder hides
is a run with an unknown outcome (never a failed one), a read whose output a placeholder hides is a
read it made, a summary is its memory, and a cut output is read on both sides of the cut.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxbench.harness.history import History, Observation, ToolCall, Turn
from ctxbench.harness.models.simview import read_view
from ctxbench.harness.markup.placeholders import (dropped_output, evicted_output, exit_code, exit_marker, hidden_read,
                                           is_omission, masked_output, omission)
from ctxbench.harness.markup.rendering import render_excerpt
from ctxbench.harness.markup.textcut import cut_middle
from ctxbench.strategies import available_strategies
from ctxbench.strategies.registry import StrategyServices
from ctxbench.strategies.testing import COUNTER, REPO, SYSTEM, TASK, make_budget, run_output

PARAMS: dict[str, dict[str, Any]] = {
    "baseline": {},
    "observation_masking": {"keep_recent": 1},
    "trimmer": {"limit": 400, "keep_recent": 0, "preserve_errors": False},
    "budget_planner": {"keep_recent": 1, "stale_after": 2},
    "file_selector": {},
    "summarizer": {"keep_recent": 1, "history_share": 0.05},
}
"""Per built-in strategy: parameters under which it acts on the history below (window 4,000)."""
ACTS = {"baseline": set(), "observation_masking": {"masked"}, "trimmer": {"trimmed"},
        "budget_planner": {"evicted"}, "file_selector": {"evicted"}, "summarizer": {"summarized"}}
"""What each one must have done, so that no case passes by leaving the history alone."""


def _obs(cid: str, turn: int, tool: str, kind: Any, content: str, where: str | None = None,
         lines: tuple[int, int] | None = None, **args: Any) -> Observation:
    return Observation(cid, tool, tuple(sorted(args.items())), content, False, kind, turn, where, lines)


def _read(cid: str, turn: int, path: str, start: int, end: int) -> Observation:
    lines = REPO.read(path).splitlines()
    return _obs(cid, turn, "read_file", "file_read", render_excerpt(path, lines[start - 1:end], start, len(lines)),
                path, (start, end), path=path, start_line=start, end_line=end)


def history() -> History:
    fix = {"old_text": "    return a / b", "new_text": "    if b == 0:\n        return None\n    return a / b"}
    observations = [
        _obs("run0", 0, "run_tests", "test_run", run_output(True)),
        _read("read1", 1, "calc/ops.py", 1, 10),
        _obs("edit2", 2, "edit_file", "edit", "edited calc/ops.py: replaced 1 lines with 3 lines", "calc/ops.py",
             path="calc/ops.py", **fix),
        _obs("run3", 3, "run_tests", "test_run", run_output(False)),
        *[_read(f"read{4 + k}", 4 + k, f"calc/util_{k}.py", 1, 40) for k in range(4)],
        _obs("ls8", 8, "list_files", "listing", "\n".join(REPO.paths())),
    ]
    turns = [Turn(i, f"step {i}", (ToolCall(o.call_id, o.tool, json.dumps(dict(o.arguments), sort_keys=True)),), (o,))
             for i, o in enumerate(observations)]
    return History(SYSTEM, TASK, tuple(turns))


class Reading:
    """The simulator's reading of one request: its view, its test runs, what it remembers reading."""

    def __init__(self, messages: list[dict[str, Any]]) -> None:
        self.view = read_view(messages, COUNTER)
        _, self.tests = self.view.timeline()

    def test_run(self, obs: Observation) -> tuple[bool, bool | None]:
        """(the run is known, its outcome: True passed, False failed, None hidden)."""
        if obs.call_id in self.view.calls:
            order = self.view.calls[obs.call_id][2]
            return True, next(passed for at, passed, _ in self.tests if at == order)
        remembered = [passed for turn, passed in self.view.memory.test_runs() if turn == obs.turn]
        return bool(remembered), (remembered[0] if remembered else None)

    def read_made(self, obs: Observation) -> bool:
        """Every line of the read is remembered, or lies in a cut the simulator will read again."""
        assert obs.path and obs.line_range
        gaps = [(a, b) for p, a, b, _ in self.view.gaps() if p == obs.path]
        return all(self.view.remembered(obs.path, n) or any(a <= n <= b for a, b in gaps)
                   for n in range(obs.line_range[0], obs.line_range[1] + 1))

    def known(self, obs: Observation) -> bool:
        return obs.call_id in self.view.calls or bool(self.view.memory)


def test_every_built_in_strategy_has_a_case():
    builtins = {n for n, cls in available_strategies().items() if cls.__module__.startswith("ctxbench.strategies.")}
    assert builtins == set(PARAMS) == set(ACTS)


@pytest.mark.parametrize("name", sorted(PARAMS))
def test_the_simulator_reads_each_strategys_placeholders_as_what_they_are(name: str):
    cls = available_strategies()[name]
    strategy = cls(cls.Params(**PARAMS[name]), StrategyServices(repo=REPO))
    h = history()
    context = strategy.build(h, make_budget(4000, 500))
    assert ACTS[name] <= {a.kind for a in context.ledger.actions}
    reading = Reading(context.messages)
    hidden = {a.target for a in context.ledger.actions if a.kind in ("masked", "evicted")}
    runs = reads = 0
    for obs in (o for t in h.turns for o in t.observations):
        if obs.kind == "test_run":
            known, passed = reading.test_run(obs)
            if not known:
                continue
            runs += 1
            if obs.call_id in hidden:
                assert passed is None, f"{obs.call_id}: a hidden run's outcome is unknown"
            else:
                assert passed is (exit_code(obs.content) == 0), f"{obs.call_id}: read as {passed}"
        elif obs.kind == "file_read" and reading.known(obs):
            reads += 1
            assert reading.read_made(obs), f"{obs.call_id}: a read it made"
    assert runs >= 1 and reads >= 1


def test_each_placeholder_is_recognised_as_the_kind_it_is():
    assert dropped_output(masked_output("run_tests", "{}", 5000, 1200)) == "masked"
    assert dropped_output(evicted_output("run_tests", 3, "stale_tool_output")) == "evicted"
    assert dropped_output(hidden_read("calc/ops.py", (1, 19), 2)) == "hidden"
    assert dropped_output(hidden_read("calc/ops.py", None, 2)) == "hidden"
    assert dropped_output(run_output(False)) is None
    assert dropped_output(render_excerpt("calc/ops.py", ["x = 1"], 1, 1)) is None


def test_the_exit_and_omission_markers_read_back():
    assert exit_code(f"3 passed\n{exit_marker(0)}\n") == 0
    assert exit_code(f"1 failed\n{exit_marker(2)}") == 2
    assert exit_code(f"slow\n{exit_marker(None)}") is None
    assert exit_code(f"{exit_marker(0)}\nmore output") is None, "only a closing marker counts"
    assert is_omission(omission(1234, "characters").strip())
    cut = cut_middle("a" * 500 + "\n" + "b" * 500, 100)
    assert [line for line in cut.split("\n") if is_omission(line)] == ["[… 901 characters omitted …]"]
