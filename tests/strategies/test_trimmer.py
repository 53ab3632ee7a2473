"""`trimmer`: head + marker + tail, errors kept whole up to a hard cap (003 §5.3, §8.3)."""

from __future__ import annotations

import pytest

from ctxbench.harness.history import History
from ctxbench.strategies import StrategyError, create_strategy
from ctxbench.strategies.trimmer import carries_error, cut_middle

from history_builders import SYSTEM, TASK, make_budget, make_turn, obs, read_obs

BUDGET = make_budget()


def test_cut_middle_keeps_head_and_tail() -> None:
    text = "H" * 100 + "M" * 1000 + "T" * 100
    out = cut_middle(text, 200, 0.5)
    assert out == "H" * 100 + "\n[… 1000 characters omitted …]\n" + "T" * 100
    assert cut_middle(text, 200, 0.25).startswith("H" * 50 + "\n[… 1000")
    assert cut_middle(text, 200, 0.25).endswith("M" * 50 + "T" * 100)
    assert cut_middle("short", 200) == "short"


def history_with(*observations) -> History:
    return History(SYSTEM, TASK, tuple(make_turn(i, "", o) for i, o in enumerate(observations)))


def tool_contents(ctx) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in ctx.messages if m["role"] == "tool"}


def test_long_plain_output_becomes_head_marker_tail() -> None:
    listing = "\n".join(f"pkg/module_{i:05d}.py" for i in range(1000))
    history = history_with(obs("l", "list_files", "listing", listing, 0), obs("s", "list_files", "listing", "a.py", 1))
    ctx = create_strategy("trimmer", {"limit": 1000, "head_ratio": 0.3}).build(history, BUDGET)
    out = tool_contents(ctx)
    assert out["l"].startswith(listing[:300])
    assert out["l"].endswith(listing[-700:])
    assert f"[… {len(listing) - 1000} characters omitted …]" in out["l"]
    assert out["s"] == "a.py"
    assert [(a.kind, a.target) for a in ctx.ledger.actions] == [("trimmed", "l")]
    assert ctx.ledger.actions[0].tokens_after < ctx.ledger.actions[0].tokens_before


def failing_run(lines: int) -> str:
    body = [f"tests/test_x.py::test_{i} PASSED" for i in range(lines)]
    return "\n".join(body + ["E       AssertionError: assert 3 == 4", "1 failed", "[exit code 1]"])


def test_error_output_is_kept_whole_up_to_the_hard_cap() -> None:
    medium, huge = failing_run(200), failing_run(2000)
    assert 1000 < len(medium) < 20000 < len(huge)
    history = history_with(obs("m", "run_tests", "test_run", medium, 0), obs("h", "run_tests", "test_run", huge, 1),
                           obs("e", "read_file", "error", "x" * 3000, 2, is_error=True))
    ctx = create_strategy("trimmer", {"limit": 1000, "hard_cap": 20000}).build(history, BUDGET)
    out = tool_contents(ctx)
    assert out["m"] == medium
    assert out["e"] == "x" * 3000
    assert len(out["h"]) < 20100 and out["h"].endswith("E       AssertionError: assert 3 == 4\n1 failed\n[exit code 1]")
    assert f"[… {len(huge) - 20000} characters omitted …]" in out["h"]
    assert [a.target for a in ctx.ledger.actions] == ["h"]


def test_without_preserve_errors_errors_are_cut_at_the_limit() -> None:
    history = history_with(obs("m", "run_tests", "test_run", failing_run(200), 0))
    ctx = create_strategy("trimmer", {"limit": 1000, "preserve_errors": False, "keep_recent": 0}).build(history, BUDGET)
    assert "characters omitted" in tool_contents(ctx)["m"]
    assert tool_contents(ctx)["m"].endswith("[exit code 1]")


def test_code_that_mentions_errors_is_not_an_error() -> None:
    read = read_obs("r", 0, "calc/report.py")
    assert not carries_error(read)
    ctx = create_strategy("trimmer", {"limit": 1000, "keep_recent": 0}).build(history_with(read), BUDGET)
    assert "characters omitted" in tool_contents(ctx)["r"]
    assert carries_error(obs("t", "run_tests", "test_run", "Traceback (most recent call last):", 0))
    assert carries_error(obs("t", "edit_file", "edit", "edit failed: no match", 0))


def test_params_are_validated() -> None:
    with pytest.raises(StrategyError, match="hard_cap"):
        create_strategy("trimmer", {"limit": 5000, "hard_cap": 100})
    with pytest.raises(StrategyError, match="limt: unknown parameter.*did you mean .limit."):
        create_strategy("trimmer", {"limt": 5000})


def test_the_latest_observation_is_never_cut_by_default() -> None:
    first, latest = read_obs("r0", 0, "calc/report.py"), read_obs("r1", 1, "README.md")
    assert len(first.content) > 1000 and len(latest.content) > 1000
    ctx = create_strategy("trimmer", {"limit": 1000}).build(history_with(first, latest), BUDGET)
    out = tool_contents(ctx)
    assert out["r1"] == latest.content
    assert "characters omitted" in out["r0"]
    assert [a.target for a in ctx.ledger.actions] == ["r0"]
    more = create_strategy("trimmer", {"limit": 1000, "keep_recent": 2}).build(history_with(first, latest), BUDGET)
    assert tool_contents(more) == {"r0": first.content, "r1": latest.content} and not more.ledger.actions
