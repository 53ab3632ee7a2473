"""A registered strategy applied to a plain OpenAI-format message list, for any agent loop.

This is the pre-model hook for people who keep their own loop (a LangGraph node, a home-grown
agent): before each model call, hand it the conversation and send what comes back.

    from ctxbench.strategies.hook import StrategyHook

    hook = StrategyHook("observation_masking", context_window=128_000, max_output_tokens=4096)
    context = hook(messages, tools)       # context.messages to send, context.ledger says what was done
    reply = client.chat.completions.create(model=..., messages=context.messages, tools=tools)

The messages are read as a History (`ctxbench.harness.wire.conversation`, which says what a strategy
can and cannot see that way); the system messages and the task come back as the agent wrote them.
"""

from __future__ import annotations

from typing import Any

from ctxbench.harness.wire.conversation import history_from_messages
from ctxbench.harness.config import ModelConfig
from ctxbench.harness.context import Budget, Context, fixed_tokens, well_formed
from ctxbench.harness.protocols import Strategy
from ctxbench.harness.records import History
from ctxbench.harness.tokens import TokenCounter
from ctxbench.strategies.registry import StrategyServices, create_strategy

__all__ = ["StrategyHook", "apply_strategy"]

DEFAULT_TOKENIZER: str = ModelConfig.model_fields["tokenizer"].default


class StrategyHook:
    """One strategy instance for one conversation (a strategy may keep state between requests, as in a run)."""

    def __init__(self, strategy: str | Strategy, params: dict[str, Any] | None = None, *, context_window: int,
                 max_output_tokens: int, tokenizer: str = DEFAULT_TOKENIZER, services: StrategyServices | None = None,
                 test_commands: tuple[tuple[str, ...], ...] = (), counter: TokenCounter | None = None) -> None:
        self.strategy: Strategy = (create_strategy(strategy, params, services) if isinstance(strategy, str)
                                   else strategy)
        self.context_window, self.max_output_tokens = context_window, max_output_tokens
        self.counter = counter or TokenCounter(tokenizer)  # a server lends its one counter (and count cache)
        self.test_commands = test_commands
        self.history: History | None = None
        """The History the last call read from its messages."""

    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> Context:
        """The context to send instead of `messages`, with the ledger of what the strategy did: a
        conversation a chat server accepts (`well_formed` repairs what a strategy left that one refuses,
        each repair in the ledger)."""
        history = self.history = history_from_messages(messages, self.test_commands)
        counter = self.counter.for_tools(tools or [])  # the agent's own tools, as the model sees them
        fixed = fixed_tokens(counter, history.system_prompt, tools or [])
        context = self.strategy.build(history, Budget(self.context_window, self.max_output_tokens, fixed, counter))
        if not history.system_prompt and context.messages[:1] == [history.system_message()]:
            context.messages = context.messages[1:]  # the agent sent none; ctxbench adds none
        context.messages = well_formed(context.messages, context.ledger, counter.count_message)
        return context


def apply_strategy(name: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None, *,
                   params: dict[str, Any] | None = None, context_window: int, max_output_tokens: int,
                   tokenizer: str = DEFAULT_TOKENIZER) -> Context:
    """`StrategyHook(name, ...)(messages, tools)` for one request: a fresh strategy instance each call."""
    return StrategyHook(name, params, context_window=context_window, max_output_tokens=max_output_tokens,
                        tokenizer=tokenizer)(messages, tools)
