"""How much counting a strategy does per build as a run grows.

Builds every registered strategy's context once on synthetic histories of 20, 40, 80 and 160 turns
(each turn reads a ~2 KB file excerpt or runs the tests, so the budget forces evictions) and prints,
per strategy and length, the `count_message` calls of one build and the calls per turn. A strategy
that keeps running totals does work linear in the turns: calls per turn stay flat as turns double.

Usage: python benchmarks/strategy_work.py [--window N]
"""

from __future__ import annotations

import argparse
import json

from ctxbench.harness.context import Budget
from ctxbench.harness.records import History, Observation, ToolCall, Turn
from ctxbench.harness.protocols import StaticRepo
from ctxbench.harness.tokens import TokenCounter
from ctxbench.strategies import StrategyServices, available_strategies, create_strategy

LENGTHS = (20, 40, 80, 160)


class CountingCounter(TokenCounter):
    """The experiment's counter, with a tally of `count_message` calls."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.message_calls = 0

    def count_message(self, message):  # type: ignore[override]
        self.message_calls += 1
        return super().count_message(message)


REPO = StaticRepo({f"pkg/mod{k}.py": "\n".join(f"value_{k}_{n} = compute({n})" for n in range(1, 200))
                   for k in range(17)})


def history(turns: int) -> History:
    out = []
    for i in range(turns):
        if i % 3 == 2:
            args, tool, kind = {}, "run_tests", "test_run"
            content = "\n".join(f"tests/test_mod{i}.py::test_{j} PASSED" for j in range(40)) + "\n[exit code 0]"
            path, lines = None, None
        else:
            args, tool, kind = {"path": f"pkg/mod{i % 17}.py"}, "read_file", "file_read"
            content = "\n".join(f"{n:5d}  value_{i}_{n} = compute({n}, scale={i})  # step" for n in range(1, 41))
            path, lines = f"pkg/mod{i % 17}.py", (1, 40)
        call = ToolCall(f"call_{i}", tool, json.dumps(args))
        obs = Observation(call.id, tool, tuple(sorted(args.items())), content, False, kind, i, path, lines)
        out.append(Turn(i, f"step {i}", (call,), (obs,)))
    return History("You fix bugs.", "The median of an even-length list is wrong.", tuple(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--window", type=int, default=16000)
    args = parser.parse_args()
    names = [n for n in available_strategies() if n != "summarizer"]  # summarizer calls a model
    print(f"{'strategy':<22} " + " ".join(f"{n:>16}" for n in LENGTHS) + "   (count_message calls per build / per turn)")
    for name in names:
        cells = []
        for turns in LENGTHS:
            counter = CountingCounter("cl100k_base")
            budget = Budget(args.window, 1024, 600, counter)
            strategy = create_strategy(name, {}, StrategyServices(repo=REPO))
            try:
                strategy.build(history(turns), budget)
            except Exception as exc:  # a strategy that refuses this history says so in its cell
                cells.append(f"{type(exc).__name__[:16]:>16}")
                continue
            cells.append(f"{counter.message_calls:>9} / {counter.message_calls / turns:>4.1f}")
        print(f"{name:<22} " + " ".join(cells))


if __name__ == "__main__":
    main()
