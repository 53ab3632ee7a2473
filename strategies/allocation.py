"""The budget allocation table (design note 003 §5.1, 001 §1): pure arithmetic, no tokens counted.

    >>> plan_context_budget(128000, 30000)
    {'dynamic_budget': 85200, 'key_files': 29820, 'history': 21300, 'tool_output': 25560, 'extra': 8520}

`TABLES` holds the two tables `budget_planner` can use by name: 003's shares (the default) and 001's
illustrative table for a 128k-window agent, with one set of shares per task phase.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Mapping

__all__ = ["DEFAULT_RESERVE_RATIO", "DEFAULT_SHARES", "AllocationTable", "Phase", "TABLES", "TableName", "portion",
           "plan_context_budget"]

DEFAULT_RESERVE_RATIO = 0.10
"""Safety margin, as a share of the whole window, taken before anything is allocated."""

DEFAULT_SHARES: Mapping[str, float] = {"key_files": 0.35, "history": 0.25, "tool_output": 0.30, "extra": 0.10}
"""Per-component caps as shares of the dynamic budget (003 §5.1)."""

Phase = Literal["explore", "edit"]
"""The task phase a table can switch on: `explore` (reading, searching) until the first edit, `edit` after."""

TableName = Literal["003", "001"]


@dataclass(frozen=True)
class AllocationTable:
    """What comes off the window first, how the rest is shared per task phase, and when compression starts."""

    reserve_ratio: float
    """Safety margin, as a share of the window."""
    reply_share: float
    """The reply's reserve is at least this share of the window (the model's max_output_tokens if larger)."""
    shares: Mapping[Phase, Mapping[str, float]]
    """Per-component caps as shares of the dynamic budget, per task phase."""
    high_water: float
    """Share of the dynamic budget at which compression starts."""


TABLES: Mapping[TableName, AllocationTable] = {
    "003": AllocationTable(DEFAULT_RESERVE_RATIO, 0.0, {"explore": DEFAULT_SHARES, "edit": DEFAULT_SHARES}, 1.0),
    "001": AllocationTable(0.0, 0.20, {
        "explore": {"key_files": 0.45, "history": 0.20, "tool_output": 0.25, "extra": 0.10},
        "edit": {"key_files": 0.25, "history": 0.20, "tool_output": 0.45, "extra": 0.10}}, 0.80),
}
"""003 §5.1: a 10% margin and 35/25/30/10, one table throughout, compression only at the limit.
001 §1 (illustrative figures for a 128k window): the resident layer (instructions ~4%, tools ~10%:
measured, `fixed_tokens`) and a reply reserve of 20% come off first, leaving about two thirds; of that,
material (file reads and tool output) takes 70%, memory (the agent's messages) 20%, the task and pinned
notes 10%; material leans to file reads while exploring and to tool output (tests) once editing; at 80%
of the dynamic budget compression starts."""

_PPM = 1_000_000


def portion(tokens: int, share: float) -> int:
    """`share` of `tokens`, rounded down, computed in integers (so 0.35 of 85200 is 29820, not 29819)."""
    return tokens * round(share * _PPM) // _PPM


def plan_context_budget(total_tokens: int, fixed_tokens: int, output_reserve: int = 0,
                        reserve_ratio: float = DEFAULT_RESERVE_RATIO,
                        shares: Mapping[str, float] = DEFAULT_SHARES) -> dict[str, int]:
    """Split a context window into a dynamic budget and per-component caps.

    The output reserve and the safety margin (`reserve_ratio` of the window) are taken first; the
    fixed part (system prompt, tool schemas) next; what is left is the dynamic budget, divided by
    `shares`.

    Args:
        total_tokens: the model's context window.
        fixed_tokens: tokens every request carries (system prompt, tool schemas).
        output_reserve: tokens kept for the reply (003 folds it into the margin; 0 reproduces 003).
        reserve_ratio: safety margin as a share of `total_tokens`.
        shares: component name -> share of the dynamic budget; the shares sum to at most 1.

    Returns:
        `{"dynamic_budget": ..., <component>: cap, ...}` in the order of `shares`.

    Raises:
        ValueError: a negative or non-integer token figure, a share outside [0, 1], shares summing
            above 1, or a fixed part (plus reserves) that does not fit the window.
    """
    for name, value in (("total_tokens", total_tokens), ("fixed_tokens", fixed_tokens),
                        ("output_reserve", output_reserve)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    for name, share in {"reserve_ratio": reserve_ratio, **shares}.items():
        if not 0 <= share <= 1:
            raise ValueError(f"share {name!r} must lie in [0, 1], got {share!r}")
    if sum(round(s * _PPM) for s in shares.values()) > _PPM:
        raise ValueError(f"component shares sum above 1: {dict(shares)}")
    dynamic = total_tokens - output_reserve - portion(total_tokens, reserve_ratio) - fixed_tokens
    if dynamic < 0:
        raise ValueError(
            f"the fixed part ({fixed_tokens} tokens) does not fit: window {total_tokens} - output reserve "
            f"{output_reserve} - safety margin {portion(total_tokens, reserve_ratio)} leaves "
            f"{total_tokens - output_reserve - portion(total_tokens, reserve_ratio)}; shorten the system "
            f"prompt or tool schemas, or use a larger window")
    return {"dynamic_budget": dynamic, **{name: portion(dynamic, s) for name, s in shares.items()}}
