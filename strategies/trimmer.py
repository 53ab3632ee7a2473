"""`trimmer`: long tool outputs become head + marker + tail; error output is kept whole within the budget."""

from __future__ import annotations

import re
from typing import Callable, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ctxbench.harness.context import Budget, Context
from ctxbench.harness.history import append_turn, tool_component, tool_message
from ctxbench.harness.records import ContextLedger, History, Observation
from ctxbench.harness.markup.textcut import cut_middle
from ctxbench.strategies.allocation import portion
from ctxbench.strategies.registry import StrategyServices, register_strategy
from ctxbench.strategies.root_cause import root_cause_excerpt

__all__ = ["Trimmer", "cut_middle", "carries_error", "tool_component"]

_ERROR_WORDS = re.compile(r"Traceback|AssertionError|\berror\b|\bfailed\b", re.IGNORECASE)
_REPO_TEXT_KINDS = ("file_read", "search", "listing")


def carries_error(obs: Observation) -> bool:
    """True for failed calls, and for tool output (not repository text) that reports an error.

    Repository text (file reads, search hits, listings) is excluded from the keyword test: code
    that mentions `ValueError` or `failed` is not a failure.
    """
    if obs.is_error or obs.kind == "error":
        return True
    return obs.kind not in _REPO_TEXT_KINDS and bool(_ERROR_WORDS.search(obs.content))


@register_strategy("trimmer")
class Trimmer:
    """Every turn kept; each tool output over `limit` characters cut to head + marker + tail.

    The last `keep_recent` observations are never cut (by default the latest: the file the agent
    has just read is what it asked to see).
    Output that carries an error (see `carries_error`) is kept whole when `preserve_errors` is set
    and it takes at most `error_share` of the dynamic budget (`budget.available` less the task
    statement; and at most `hard_cap` characters when that is set); a longer one keeps its root-cause
    lines (`ctxbench.strategies.root_cause`) within that room instead of a middle cut. The budget is
    not enforced: this strategy changes only the size of single outputs.
    """

    enforces_budget: ClassVar[bool] = False

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        limit: int = Field(6000, ge=1, description="Characters a tool output may keep before it is cut.")
        head_ratio: float = Field(0.5, ge=0, le=1, description="Share of the kept characters taken from the head; the rest comes from the tail.")
        preserve_errors: bool = Field(True, description="Keep outputs that carry an error whole within error_share of the budget; a longer one keeps its root-cause lines.")
        error_share: float = Field(0.5, gt=0, le=1, description="Share of the dynamic budget (budget.available less the task statement) one error output may take whole.")
        hard_cap: int | None = Field(None, ge=1, description="Characters an error output may keep at most, on top of error_share (none: the budget alone bounds it).")
        keep_recent: int = Field(1, ge=0, description="Most recent tool observations never cut.")

        @model_validator(mode="after")
        def _cap_above_limit(self) -> "Trimmer.Params":
            if self.hard_cap is not None and self.hard_cap < self.limit:
                raise ValueError(f"hard_cap ({self.hard_cap}) must be at least limit ({self.limit})")
            return self

    def __init__(self, params: Params, services: StrategyServices | None = None) -> None:
        self.params = params

    def trimmed(self, obs: Observation, error_room: int, count: Callable[[str], int]) -> tuple[str, str]:
        """The content to send for `obs` and why (empty reason: unchanged); an error output may take
        `error_room` tokens."""
        p, text = self.params, obs.content
        if not (p.preserve_errors and carries_error(obs)):
            content = cut_middle(text, p.limit, p.head_ratio)
            return content, (f"output over limit={p.limit} chars" if content != text else "")
        tokens = count(text)
        if p.hard_cap is not None and len(text) > p.hard_cap:
            error_room = min(error_room, tokens * p.hard_cap // len(text))
        if tokens <= error_room:
            return text, ""
        why = f"error output of {tokens} tokens over its room of {error_room}: root-cause lines kept"
        return root_cause_excerpt(text, error_room, count, p.head_ratio), why

    def build(self, history: History, budget: Budget) -> Context:
        ledger = ContextLedger()
        count = budget.counter.count_message
        recent = [o.call_id for t in history.turns for o in t.observations]
        spared = set(recent[len(recent) - self.params.keep_recent:]) if self.params.keep_recent else set()
        messages = [history.system_message(), history.task_message()]
        ledger.add("system", count(messages[0]))
        ledger.add("task", count(messages[1]))
        error_room = portion(max(0, budget.available - count(messages[1])), self.params.error_share)
        for turn in history.turns:
            replaced = {}
            for obs in turn.observations:
                if obs.call_id in spared:
                    continue
                content, why = self.trimmed(obs, error_room, budget.counter.count)
                if why:
                    replaced[obs.call_id] = content
                    ledger.act("trimmed", obs.call_id, why, count(tool_message(obs)), count(tool_message(obs, content)))
            append_turn(messages, ledger, turn, count, replaced)
        return Context(messages, ledger)
