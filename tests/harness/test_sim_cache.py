"""The simulator's prompt-cache accounting: cached tokens like a provider's, falling when early context changes."""

from __future__ import annotations

from ctxbench.harness.config import SimParams
from ctxbench.harness.models.sim import PromptCache, SimModel
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.strategies import create_strategy
from ctxbench.strategies.testing import COUNTER, make_budget, scripted_history, with_turns


def test_a_repeated_prefix_is_cached_in_blocks_from_the_minimum() -> None:
    cache = PromptCache(block=128, minimum=1024)
    system = {"role": "system", "content": "rule " * 1200}
    first = [system, {"role": "user", "content": "the task"}]
    assert cache.cached(COUNTER, first, []) == 0, "nothing was sent before"
    longer = [*first, {"role": "assistant", "content": "a reply"}]
    shared = COUNTER.count_message(first[0]) + COUNTER.count_message(first[1])
    assert cache.cached(COUNTER, longer, []) == shared // 128 * 128 > 1024
    other = [system, {"role": "user", "content": "another task"}]
    assert cache.cached(COUNTER, other, []) == COUNTER.count_message(system) // 128 * 128
    assert PromptCache().cached(COUNTER, [{"role": "user", "content": "short"}] * 2, []) == 0
    small = PromptCache()
    small.cached(COUNTER, [{"role": "user", "content": "short"}], [])
    assert small.cached(COUNTER, [{"role": "user", "content": "short"}] * 2, []) == 0, "under the 1,024 minimum"


def _cached_per_turn(strategy_name: str, params: dict, turns: int = 40) -> list[int]:
    history, budget = scripted_history(turns), make_budget()
    strategy, cache = create_strategy(strategy_name, params), PromptCache()
    out = []
    for n in range(turns + 1):
        messages = strategy.build(with_turns(history, list(history.turns[:n])), budget).messages
        out.append(cache.cached(COUNTER, messages, TOOL_SCHEMAS))
    return out


def test_appending_keeps_the_cache_and_re_summarizing_drops_it() -> None:
    baseline = _cached_per_turn("baseline", {})
    assert all(b >= a for a, b in zip(baseline[1:], baseline[2:])), "an appended history only grows the cached prefix"
    assert baseline[-1] > 10_000
    summarized = _cached_per_turn("summarizer", {"history_share": 0.15})
    start = next(n for n in range(1, len(summarized)) if summarized[n] < summarized[n - 1])
    assert summarized[:start] == baseline[:start] and summarized[start - 1] > 1024
    history = scripted_history(1)
    head = COUNTER.count_tools(TOOL_SCHEMAS) + sum(COUNTER.count_message(m) for m in
                                                   (history.system_message(), history.task_message()))
    assert all(c <= head for c in summarized[start:]), \
        "the summary right after the task changes every turn: only the prefix before it stays cached"


def test_the_simulator_reports_cached_tokens_in_its_usage(smoke_dir) -> None:
    from ctxbench.harness.tasks.taskset import load_taskset

    task = load_taskset(smoke_dir).tasks[0]
    sim = SimModel(SimParams(), task.patch, COUNTER, 16000, 512, seed=0)
    messages = [{"role": "system", "content": "rule " * 1200}, {"role": "user", "content": task.problem_statement}]
    first = sim.complete(messages, TOOL_SCHEMAS)
    assert first.usage.cached_tokens == 0
    call = first.tool_calls[0]
    turn = [{"role": "assistant", "content": first.text, "tool_calls": [
        {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}]},
        {"role": "tool", "tool_call_id": call.id, "content": "ok"}]
    second = sim.complete(messages + turn, TOOL_SCHEMAS)
    assert 1024 <= second.usage.cached_tokens <= second.usage.prompt_tokens
    assert second.usage.cached_tokens == (COUNTER.count_tools(TOOL_SCHEMAS) + sum(
        COUNTER.count_message(m) for m in messages)) // 128 * 128
