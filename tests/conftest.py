"""Shared fixtures: the built-in smoke taskset and a scripted model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.history import ToolCall
from harness.models.base import Completion, Usage

ROOT = Path(__file__).resolve().parent.parent


class ScriptedModel:
    """Replies from a fixed list of (tool name, arguments) steps; repeats the last one when exhausted.

    A step may also be an Exception instance, raised instead of replying.
    """

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
        name, args = step
        raw = args if isinstance(args, str) else json.dumps(args)
        return Completion(f"step {self.calls}", (ToolCall(f"call_{self.calls}", name, raw),), Usage(100, 10))


@pytest.fixture
def smoke_dir() -> Path:
    return ROOT / "tasksets" / "smoke"


@pytest.fixture
def experiment_file(tmp_path: Path):
    """Write an experiment YAML into tmp_path and return its path."""

    def make(**overrides: Any) -> Path:
        import yaml

        data = {"name": "t", "taskset": str(ROOT / "tasksets" / "smoke"), "strategies": [{"name": "baseline"}],
                "repeats": 1, "workers": 1, "sandbox": "none"}
        data.update(overrides)
        path = tmp_path / "exp.yaml"
        path.write_text(yaml.safe_dump(data))
        return path

    return make
