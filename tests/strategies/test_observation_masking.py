"""`observation_masking`: the last M observations whole, older ones one placeholder line each."""

from __future__ import annotations

from ctxbench.harness.history import History
from ctxbench.strategies import create_strategy

from history_builders import (COUNTER, SYSTEM, TASK, make_budget, make_turn, obs, read_obs, run_obs,
                              scripted_history, search_obs)

BUDGET = make_budget()


def tool_contents(ctx) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in ctx.messages if m["role"] == "tool"}


def test_older_observations_become_a_placeholder_naming_tool_arguments_and_size() -> None:
    observations = [run_obs("t0", 0), search_obs("s1", 1), read_obs("r2", 2, "calc/report.py"),
                    read_obs("r3", 3, "calc/ops.py", 1, 12), read_obs("r4", 4, "calc/util_3.py")]
    history = History(SYSTEM, TASK, tuple(make_turn(i, f"step {i}", o) for i, o in enumerate(observations)))
    ctx = create_strategy("observation_masking", {"keep_recent": 2}).build(history, BUDGET)
    out = tool_contents(ctx)

    assert out["r3"] == observations[3].content and out["r4"] == observations[4].content
    for o in observations[:3]:
        line = out[o.call_id]
        assert "\n" not in line and o.tool in line
        assert f"{len(o.content):,} characters" in line
    assert '"path_arg": "calc/report.py"' in out["r2"] and '"query": "divide"' in out["s1"]
    assert [(a.kind, a.target) for a in ctx.ledger.actions] == [("masked", "t0"), ("masked", "s1"), ("masked", "r2")]
    for action, o in zip(ctx.ledger.actions, observations):
        assert action.tokens_before == COUNTER.count_message({"role": "tool", "tool_call_id": o.call_id,
                                                              "content": o.content})
        assert f"{action.tokens_before:,} tokens" in out[o.call_id]
        assert action.tokens_after < action.tokens_before
    assistant = [m for m in ctx.messages if m["role"] == "assistant"]
    assert [m["content"] for m in assistant] == [f"step {i}" for i in range(5)], "every call stays, with its result"


def test_errors_are_kept_when_asked() -> None:
    history = History(SYSTEM, TASK, tuple(make_turn(i, "", o) for i, o in enumerate([
        run_obs("t0", 0), obs("e1", "read_file", "error", "Error: file not found: calc/missing.py " + "x" * 400, 1,
                              is_error=True, path_arg="calc/missing.py"),
        read_obs("r2", 2, "calc/report.py"), read_obs("r3", 3, "calc/util_1.py")])))
    masked = tool_contents(create_strategy("observation_masking", {"keep_recent": 1}).build(history, BUDGET))
    assert masked["t0"].startswith("[output of run_tests") and masked["e1"].startswith("[output of read_file")
    kept = tool_contents(create_strategy("observation_masking", {"keep_recent": 1, "keep_errors": True,
                                                                 "keep_errors_recent": 1}).build(history, BUDGET))
    assert kept["e1"] == history.turns[1].observations[0].content
    assert kept["t0"].startswith("[output of run_tests"), "only the latest error is kept"
    assert kept["r2"].startswith("[output of read_file") and kept["r3"] == history.turns[3].observations[0].content


def test_masking_shrinks_a_long_history_and_never_lengthens_a_short_output() -> None:
    history = scripted_history(40)
    baseline = create_strategy("baseline").build(history, BUDGET)
    masked = create_strategy("observation_masking").build(history, BUDGET)
    assert COUNTER.count_messages(masked.messages) < COUNTER.count_messages(baseline.messages) / 3
    short = History(SYSTEM, TASK, (make_turn(0, "", obs("x", "edit_file", "edit", "edited", 0, path_arg="a.py")),
                                   make_turn(1, "", read_obs("r", 1, "calc/ops.py"))))
    ctx = create_strategy("observation_masking", {"keep_recent": 1}).build(short, BUDGET)
    assert tool_contents(ctx)["x"] == "edited" and not ctx.ledger.actions
