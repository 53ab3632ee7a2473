"""`observation_masking`: the last M tool observations whole, older ones replaced by a one-line placeholder.

The simple strategy of SWE-agent and OpenHands ("The Complexity Trap", Lindenbauer et al. 2025):
every assistant message and tool call stays; only the content of old tool results is dropped,
and the placeholder says which call it answered and how much was dropped, so the agent can call
the tool again if it needs the content back.
"""

from __future__ import annotations

import json
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ctxbench.harness.context import Budget, Context, ContextLedger
from ctxbench.harness.history import History, Observation, append_turn, tool_message
from ctxbench.harness.markup.placeholders import masked_output
from ctxbench.strategies.registry import StrategyServices, register_strategy
from ctxbench.strategies.trimmer import carries_error

__all__ = ["ObservationMasking", "placeholder"]

ARGS_CHARS = 120


def placeholder(obs: Observation, tokens: int) -> str:
    """The one line that stands for a masked observation: tool, arguments and the size dropped."""
    args = json.dumps(obs.args, sort_keys=True, default=str)
    if len(args) > ARGS_CHARS:
        args = args[:ARGS_CHARS] + "…"
    return masked_output(obs.tool, args, len(obs.content), tokens)


@register_strategy("observation_masking")
class ObservationMasking:
    """The last `keep_recent` tool observations whole; each older one becomes a one-line placeholder.

    Assistant messages and tool calls are all kept, so a tool call and its (masked) result stay one
    unit. Observations shorter than their placeholder are never masked. With `keep_errors`, an
    observation that carries an error (`ctxbench.strategies.trimmer.carries_error`) is kept whole
    while it is among the last `keep_errors_recent` error observations. The budget is not enforced.
    """

    enforces_budget: ClassVar[bool] = False

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid", frozen=True)

        keep_recent: int = Field(3, ge=1, description="Most recent tool observations sent whole (M).")
        keep_errors: bool = Field(False, description="Also keep older observations that carry an error whole.")
        keep_errors_recent: int = Field(2, ge=1, description="With keep_errors: how many of the latest error observations are kept.")

    def __init__(self, params: Params, services: StrategyServices | None = None) -> None:
        self.params = params

    def build(self, history: History, budget: Budget) -> Context:
        p, ledger, count = self.params, ContextLedger(), budget.counter.count_message
        all_obs = [o for turn in history.turns for o in turn.observations]
        keep = {o.call_id for o in all_obs[-p.keep_recent:]}
        if p.keep_errors:
            keep |= {o.call_id for o in [o for o in all_obs if carries_error(o)][-p.keep_errors_recent:]}
        messages = [history.system_message(), history.task_message()]
        ledger.add("system", count(messages[0]))
        ledger.add("task", count(messages[1]))
        for turn in history.turns:
            masked = {}
            for obs in turn.observations:
                if obs.call_id in keep:
                    continue
                tokens = count(tool_message(obs))
                text = placeholder(obs, tokens)
                if count(tool_message(obs, text)) < tokens:
                    masked[obs.call_id] = text
                    ledger.act("masked", obs.call_id, f"observation older than the last {p.keep_recent}",
                               tokens, count(tool_message(obs, text)))
            append_turn(messages, ledger, turn, count, masked)
        return Context(messages, ledger)
