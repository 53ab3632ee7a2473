"""Stable budgeted selection of complete items: pure functions over frozen records.

Two entry points, one rule (greedy over a stable ranking; an item that does not fit is skipped,
not the end of the scan; nothing is ever cut; the input is never mutated):

- `pack_snippets` (design note 000): snippets ranked by score, ties in input order.
- `select_candidates` (design note 004): candidates ranked by (protected, priority, freshness,
  stable id), dependency groups taken or left whole, protected groups first, an optional quota
  per source, duplicates left out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Generic, Literal, Sequence, TypeVar

__all__ = ["Snippet", "Candidate", "LeftOut", "Selection", "SelectionError", "ProtectedOverBudget",
           "pack_snippets", "select_candidates", "char_cost", "content_chars"]

LeftOutReason = Literal["over_budget", "duplicate", "file_quota"]
T = TypeVar("T")


class SelectionError(ValueError):
    """Invalid input: bad budget or score, duplicate or unknown id, a protected group over budget."""


class ProtectedOverBudget(SelectionError):
    """A protected group does not fit: refuse rather than drop it silently (004 §7)."""


@dataclass(frozen=True)
class Snippet:
    """A scored piece of text (000)."""

    id: str
    text: str
    score: float


@dataclass(frozen=True)
class Candidate:
    """An auditable context candidate (004)."""

    item_id: str
    """Stable id: the final tie-breaker, used for audit and replay."""
    content: str
    kind: str
    """task / evidence / memory / tool-call / tool-result / snippet ..."""
    priority: float = 0
    """Business priority (or relevance score); higher first."""
    dependencies: tuple[str, ...] = ()
    """Ids that must appear together with this one (the group is the connected component)."""
    protected: bool = False
    """Never dropped for budget: taken first, and a protected group that does not fit is an error."""
    freshness: int = 0
    """Version or recency; higher first among equal priorities."""
    source_ref: str | None = None
    """Where the original lives (a file path for snippets); the unit of the per-source quota."""


@dataclass(frozen=True)
class LeftOut:
    """A candidate that was not selected, and why."""

    id: str
    reason: LeftOutReason


@dataclass(frozen=True)
class Selection(Generic[T]):
    """What was chosen, in selection order."""

    selected: tuple[T, ...]
    used: int
    budget: int
    left_out: tuple[LeftOut, ...]

    @property
    def remaining(self) -> int:
        return self.budget - self.used

    @property
    def truncated(self) -> bool:
        """At least one candidate was left out (not: some text was cut)."""
        return bool(self.left_out)


def char_cost(text: str) -> int:
    """Cost of a snippet's text in characters (000's unit)."""
    return len(text)


def content_chars(candidate: Candidate) -> int:
    """Cost of a candidate in characters of its content."""
    return len(candidate.content)


def _check_budget(budget: object) -> int:
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        raise SelectionError(f"budget must be a non-negative integer, got {budget!r}")
    return budget


def pack_snippets(snippets: Sequence[Snippet], budget: int,
                  cost: Callable[[str], int] = char_cost) -> Selection[Snippet]:
    """Choose complete snippets by score (ties keep input order) within `budget` (000's packContext).

    Raises:
        SelectionError: `budget` is not a non-negative integer, or a score is not finite.
    """
    _check_budget(budget)
    for s in snippets:
        if not math.isfinite(s.score):
            raise SelectionError(f"snippet {s.id!r} has a non-finite score {s.score!r}")
    ranked = sorted(range(len(snippets)), key=lambda i: (-snippets[i].score, i))
    chosen, left_out, used = [], [], 0
    for i in ranked:
        c = cost(snippets[i].text)
        if used + c <= budget:
            chosen.append(snippets[i])
            used += c
        else:
            left_out.append(LeftOut(snippets[i].id, "over_budget"))
    return Selection(tuple(chosen), used, budget, tuple(left_out))


def _groups(candidates: Sequence[Candidate]) -> list[list[Candidate]]:
    """Connected components of the dependency graph, members ranked, groups ranked by best member."""
    by_id: dict[str, Candidate] = {}
    for c in candidates:
        if c.item_id in by_id:
            raise SelectionError(f"duplicate item_id {c.item_id!r}")
        by_id[c.item_id] = c
    parent = {i: i for i in by_id}

    def root(i: str) -> str:
        while parent[i] != i:
            i = parent[i]
        return i

    for c in candidates:
        for dep in c.dependencies:
            if dep not in by_id:
                raise SelectionError(f"candidate {c.item_id!r} depends on unknown id {dep!r}")
            a, b = sorted((root(c.item_id), root(dep)))
            parent[b] = a
    for c in candidates:
        if not math.isfinite(c.priority):
            raise SelectionError(f"candidate {c.item_id!r} has a non-finite priority {c.priority!r}")
    key = lambda c: (not c.protected, -c.priority, -c.freshness, c.item_id)  # noqa: E731
    members: dict[str, list[Candidate]] = {}
    for c in sorted(candidates, key=key):
        members.setdefault(root(c.item_id), []).append(c)
    return sorted(members.values(), key=lambda g: (not any(c.protected for c in g), key(g[0])))


def select_candidates(candidates: Sequence[Candidate], budget: int,
                      cost: Callable[[Candidate], int] = content_chars,
                      per_source_quota: int | None = None) -> Selection[Candidate]:
    """Choose whole dependency groups in ranking order within `budget` (004's selector).

    Protected groups come first and are never left out; the quota counts groups per `source_ref`
    (protected groups are exempt but use it up); a singleton whose content equals an already
    selected candidate's is a `duplicate`.

    Raises:
        SelectionError: bad budget, duplicate or unknown id, non-finite priority.
        ProtectedOverBudget: a protected group does not fit in what is left of the budget.
    """
    _check_budget(budget)
    chosen: list[Candidate] = []
    left_out: list[LeftOut] = []
    seen: set[str] = set()
    per_source: dict[str, int] = {}
    used = 0
    for group in _groups(candidates):
        protected = any(c.protected for c in group)
        sources = {c.source_ref for c in group if c.source_ref is not None}
        group_cost = sum(cost(c) for c in group)
        reason: LeftOutReason | None = None
        if len(group) == 1 and group[0].content in seen:
            reason = "duplicate"
        elif not protected and per_source_quota is not None and any(
                per_source.get(s, 0) >= per_source_quota for s in sources):
            reason = "file_quota"
        elif used + group_cost > budget:
            if protected:
                raise ProtectedOverBudget(
                    f"protected group {[c.item_id for c in group]} costs {group_cost}, only "
                    f"{budget - used} of {budget} left")
            reason = "over_budget"
        if reason is not None:
            left_out.extend(LeftOut(c.item_id, reason) for c in group)
            continue
        chosen.extend(group)
        used += group_cost
        seen.update(c.content for c in group)
        for s in sources:
            per_source[s] = per_source.get(s, 0) + 1
    return Selection(tuple(chosen), used, budget, tuple(left_out))
