"""What the tests of the simulator speaking an agent's tools share: a test run's output failing and
passing on the smoke task `calc-median-even-length`, and a simulator for a task."""

from __future__ import annotations

from ctxbench.harness.config import SimParams
from ctxbench.harness.models.sim import SimModel
from ctxbench.harness.tokens import TokenCounter

COUNTER = TokenCounter("cl100k_base")
FAILING = ("..FF.\n=================================== FAILURES ===================================\n"
           "    def test_median_two_values():\n>       assert median([10, 20]) == 15\n\ntests/test_stats.py:31: \n"
           "    def median(data):\n>       return (values[mid] + values[mid + 1]) / 2\n"
           "E       IndexError: list index out of range\n\ncalc/stats.py:38: IndexError\n"
           "2 failed, 3 passed in 0.05s\n")
"""pytest's output on the task before its fix."""
PASSING = ".....\n5 passed in 0.04s\n"
"""pytest's output on the task once fixed."""


def sim(task, seed: int = 0) -> SimModel:
    """The simulator for `task`, with a 64k window and 2,048 output tokens."""
    return SimModel(SimParams(), task.patch, COUNTER, 64000, 2048, seed, test_cmd=task.test_cmd,
                    statement=task.problem_statement)
