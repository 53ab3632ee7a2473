"""The budget allocation table (design note 003 §5.1, 001 §1): pure arithmetic, no tokens counted.

    >>> plan_context_budget(128000, 30000)
    {'dynamic_budget': 85200, 'key_files': 29820, 'history': 21300, 'tool_output': 25560, 'extra': 8520}
"""

from __future__ import annotations

from typing import Mapping

__all__ = ["DEFAULT_RESERVE_RATIO", "DEFAULT_SHARES", "portion", "plan_context_budget"]

DEFAULT_RESERVE_RATIO = 0.10
"""Safety margin, as a share of the whole window, taken before anything is allocated."""

DEFAULT_SHARES: Mapping[str, float] = {"key_files": 0.35, "history": 0.25, "tool_output": 0.30, "extra": 0.10}
"""Per-component caps as shares of the dynamic budget (003 §5.1)."""

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
