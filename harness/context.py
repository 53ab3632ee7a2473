"""What a strategy hands to the model: messages plus a ledger of how they were made."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ctxbench.harness.tokens import TokenCounter

__all__ = ["Budget", "Component", "StrategyAction", "ContextLedger", "Context", "ContextOverflow"]

Component = Literal["system", "task", "pinned", "history", "tool_output", "files", "summary"]
ActionKind = Literal["trimmed", "masked", "evicted", "summarized", "injected", "selected", "skipped"]


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


@dataclass(frozen=True)
class StrategyAction:
    """One thing a strategy did to the history this turn."""

    kind: ActionKind
    target: str
    """Id of what it acted on: a tool-call id, `turn:N`, a snippet id."""
    reason: str
    tokens_before: int = 0
    tokens_after: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "target": self.target, "reason": self.reason,
                "tokens_before": self.tokens_before, "tokens_after": self.tokens_after}


@dataclass
class ContextLedger:
    """Tokens per component, the strategy's actions, and tokens it spent on model calls."""

    components: dict[str, int] = field(default_factory=dict)
    actions: list[StrategyAction] = field(default_factory=list)
    strategy_prompt_tokens: int = 0
    strategy_completion_tokens: int = 0

    def add(self, component: Component, tokens: int) -> None:
        self.components[component] = self.components.get(component, 0) + tokens

    def act(self, kind: ActionKind, target: str, reason: str, before: int = 0, after: int = 0) -> None:
        self.actions.append(StrategyAction(kind, target, reason, before, after))

    @property
    def strategy_tokens(self) -> int:
        return self.strategy_prompt_tokens + self.strategy_completion_tokens

    def as_dict(self) -> dict[str, Any]:
        return {"components": dict(self.components), "actions": [a.as_dict() for a in self.actions],
                "strategy_tokens": self.strategy_tokens}


@dataclass
class Context:
    """The chat messages to send (OpenAI format) and the ledger that explains them."""

    messages: list[dict[str, Any]]
    ledger: ContextLedger
