"""What a strategy hands to the model: messages plus a ledger of how they were made."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxbench.harness.records import Component, ContextLedger, StrategyAction
from ctxbench.harness.tokens import REPLY_PRIMING, TokenCounter

__all__ = ["Budget", "fixed_tokens", "Component", "StrategyAction", "ContextLedger", "Context", "ContextOverflow"]


class ContextOverflow(Exception):
    """The context cannot be made to fit (pinned content alone, or after every eviction)."""


@dataclass(frozen=True)
class Budget:
    """What a strategy may spend on one request."""

    context_window: int
    """The model's context window in tokens."""
    output_reserve: int
    """Tokens kept free for the reply (the model's max_output_tokens)."""
    fixed_tokens: int
    """Tokens of the fixed part every request carries: system prompt, tool schemas, request overhead."""
    counter: TokenCounter
    """The experiment's token counter."""

    @property
    def available(self) -> int:
        """Tokens left for the dynamic part (task, history, tool output...): window - reserve - fixed."""
        return self.context_window - self.output_reserve - self.fixed_tokens


def fixed_tokens(counter: TokenCounter, system_prompt: str, tools: list[dict[str, Any]]) -> int:
    """Tokens every request of a run carries whatever the strategy does: the system prompt, the tool
    schemas and the reply priming (`Budget.fixed_tokens`)."""
    return (counter.count_message({"role": "system", "content": system_prompt}) + counter.count_tools(tools)
            + REPLY_PRIMING)


@dataclass
class Context:
    """The chat messages to send (OpenAI format) and the ledger that explains them."""

    messages: list[dict[str, Any]]
    ledger: ContextLedger
