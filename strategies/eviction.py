"""The eviction order of design note 001, defined over observation kinds and turn age.

Turn positions count from 0; the *age* of turn `i` in a history of `n` turns is `n - 1 - i`. The
last `keep_recent` turns are *recent* and never appear below. Layers, in eviction order (cheapest
to re-fetch first), each listed oldest first:

1. `stale_tool_output` — single tool outputs (any kind but `edit`) of older turns that are
   *stale*: at least `stale_after` turns old, or superseded by a later turn — a `test_run` by a
   later `test_run`; a `file_read` by a later read or edit of the same path; a `search`,
   `listing` or `error` by a later call of the same tool with the same arguments. Evicting one
   replaces its content by a one-line note: the call stays answered.
2. `finished_subtask_history` — whole older turns up to and including the last older turn with a
   successful `edit` (that work has landed in the workspace; the edited paths stay pinned as key
   references).
3. `early_exploration` — whole older turns after those that hold no *current snapshot*.
4. `environment_snapshots` — the remaining older turns: those that hold a current snapshot, i.e.
   a successful `file_read` or `listing` that is not stale (re-fetchable workspace state).

A whole turn is one unit: its assistant message and all its tool results go together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Sequence

from ctxbench.harness.records import Observation, Turn

__all__ = ["Layer", "EVICTION_ORDER", "EvictionItem", "is_stale", "eviction_plan"]

Layer = Literal["stale_tool_output", "finished_subtask_history", "early_exploration", "environment_snapshots"]
EVICTION_ORDER: tuple[Layer, ...] = ("stale_tool_output", "finished_subtask_history",
                                     "early_exploration", "environment_snapshots")


@dataclass(frozen=True)
class EvictionItem:
    """One thing that may be reduced: a single tool output (`call_id` set) or a whole turn."""

    layer: Layer
    turn: int
    """Position of the turn in the history."""
    call_id: str | None = None


def _supersedes(later: Observation, obs: Observation) -> bool:
    if obs.kind == "test_run":
        return later.kind == "test_run"
    if obs.kind == "file_read":
        return later.kind in ("file_read", "edit") and later.path == obs.path and not later.is_error
    return obs.kind in ("search", "listing", "error") and (later.tool, later.arguments) == (obs.tool, obs.arguments)


def is_stale(turns: Sequence[Turn], position: int, obs: Observation, stale_after: int) -> bool:
    """True when `obs` (of the turn at `position`) is old or superseded by a later turn."""
    if len(turns) - 1 - position >= stale_after:
        return True
    return any(_supersedes(o, obs) for t in turns[position + 1:] for o in t.observations)


def _is_snapshot(turns: Sequence[Turn], position: int, obs: Observation, stale_after: int) -> bool:
    return (obs.kind in ("file_read", "listing") and not obs.is_error
            and not is_stale(turns, position, obs, stale_after))


def eviction_plan(turns: Sequence[Turn], keep_recent: int, stale_after: int) -> list[EvictionItem]:
    """Every evictable item of `turns`, in eviction order (layer, then oldest first)."""
    older = range(max(0, len(turns) - keep_recent))
    items = [EvictionItem("stale_tool_output", i, o.call_id) for i in older for o in turns[i].observations
             if o.kind != "edit" and is_stale(turns, i, o, stale_after)]
    edits = [i for i in older if any(o.kind == "edit" and not o.is_error for o in turns[i].observations)]
    finished = range(edits[-1] + 1 if edits else 0)
    items += [EvictionItem("finished_subtask_history", i) for i in finished]
    rest = [i for i in older if i not in finished]
    snap = {i for i in rest if any(_is_snapshot(turns, i, o, stale_after) for o in turns[i].observations)}
    items += [EvictionItem("early_exploration", i) for i in rest if i not in snap]
    items += [EvictionItem("environment_snapshots", i) for i in rest if i in snap]
    return items
