"""A scripted model for tests: no mocks of our parts, a model whose replies are fixed in advance."""

from __future__ import annotations

import json
from typing import Any

from ctxbench.harness.history import ToolCall
from ctxbench.harness.protocols import Completion, Usage


class ScriptedModel:
    """Replies from a fixed list of steps; repeats the last one when exhausted.

    A step is (tool name, raw or dict arguments), a Completion returned as is, or an Exception
    instance raised instead of replying.
    """

    takes_cache_marks = False

    def __init__(self, steps: list[Any]) -> None:
        self.steps = list(steps)
        self.calls = 0
        self.seen: list[list[dict[str, Any]]] = []

    def complete(self, messages, tools) -> Completion:
        self.seen.append(messages)
        step = self.steps[min(self.calls, len(self.steps) - 1)]
        self.calls += 1
        if isinstance(step, Exception):
            raise step
        if isinstance(step, Completion):
            return step
        name, args = step
        raw = args if isinstance(args, str) else json.dumps(args)
        return Completion(f"step {self.calls}", (ToolCall(f"call_{self.calls}", name, raw),), Usage(100, 10))
