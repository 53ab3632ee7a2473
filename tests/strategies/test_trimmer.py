"""`trimmer`: head + marker + tail, errors kept whole within the budget, else their root cause (003 §5.3, §8.3)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from ctxbench.harness.history import History
from ctxbench.strategies import StrategyError, create_strategy
from ctxbench.strategies.allocation import portion
from ctxbench.strategies.trimmer import carries_error, cut_middle

from history_builders import COUNTER, SYSTEM, TASK, make_budget, make_turn, obs, read_obs

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


PAYMENTS_TEST = '''import pytest


def settle(ledger, depth):
    if depth == 0:
        total = sum(ledger)
        assert total == 200, f"expected 200, got {total}"
        return total
    return settle(ledger, depth - 1)


@pytest.mark.parametrize("i", range(150))
def test_fine(i):
    assert i >= 0


def test_settle():
    for n in range(400):
        print(f"audit row {n}: account=acct-{n:04d} balance={n * 3} status=ok")
    assert settle([100], 12) == 200
'''


@pytest.fixture(scope="module")
def pytest_failure(tmp_path_factory) -> str:
    """A real pytest run: 150 passing tests, a failing assertion 13 frames deep, 400 lines of captured output."""
    folder = tmp_path_factory.mktemp("payments")
    (folder / "test_pay.py").write_text(PAYMENTS_TEST)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    run = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider", "-p", "no:randomly",
                          "test_pay.py"], cwd=folder, env=env, capture_output=True, text=True, check=False)
    assert run.returncode == 1, run.stdout + run.stderr
    return run.stdout + "[exit code 1]"


ROOT_CAUSE = ("E           AssertionError: expected 200, got 100", "E           assert 100 == 200",
              '>           assert total == 200, f"expected 200, got {total}"', "test_pay.py:7: AssertionError",
              "FAILED test_pay.py::test_settle - AssertionError: expected 200, got 100", "1 failed, 150 passed")


def test_an_error_that_fits_its_share_of_the_budget_is_kept_whole(pytest_failure) -> None:
    assert len(pytest_failure) > 30000 and all(line in pytest_failure for line in ROOT_CAUSE)
    medium = failing_run(200)
    history = history_with(obs("p", "run_tests", "test_run", pytest_failure, 0),
                           obs("m", "run_tests", "test_run", medium, 1),
                           obs("e", "read_file", "error", "x" * 3000, 2, is_error=True), read_obs("r", 3, "README.md"))
    ctx = create_strategy("trimmer", {"limit": 1000}).build(history, make_budget(window=64000))
    out = tool_contents(ctx)
    assert (out["p"], out["m"], out["e"]) == (pytest_failure, medium, "x" * 3000)
    assert not ctx.ledger.actions


def test_an_error_too_long_for_its_room_keeps_its_root_cause_lines(pytest_failure) -> None:
    budget = make_budget()
    history = history_with(obs("p", "run_tests", "test_run", pytest_failure, 0), read_obs("r", 1, "README.md"))
    ctx = create_strategy("trimmer", {"limit": 1000}).build(history, budget)
    room = (budget.available - COUNTER.count_message(history.task_message())) // 2
    kept = tool_contents(ctx)["p"]
    assert COUNTER.count(pytest_failure) > room >= COUNTER.count(kept) > room * 0.9, "the room, and no more"
    assert all(line in kept for line in ROOT_CAUSE)
    assert "lines omitted …]" in kept and "characters omitted" not in kept
    assert [(a.kind, a.target) for a in ctx.ledger.actions] == [("trimmed", "p")]
    assert "root-cause lines kept" in ctx.ledger.actions[0].reason
    assert "E           assert 100 == 200" not in cut_middle(pytest_failure, len(kept)), "a middle cut loses it"

    tight = create_strategy("trimmer", {"limit": 1000, "error_share": 0.02}).build(history, budget)
    few = tool_contents(tight)["p"]
    assert COUNTER.count(few) <= portion(budget.available - COUNTER.count_message(history.task_message()), 0.02)
    assert all(line in few for line in ROOT_CAUSE[:2] + ROOT_CAUSE[4:]), "the verdict and the assertion first"


def test_hard_cap_bounds_an_error_in_characters_too(pytest_failure) -> None:
    history = history_with(obs("p", "run_tests", "test_run", pytest_failure, 0), read_obs("r", 1, "README.md"))
    ctx = create_strategy("trimmer", {"limit": 1000, "hard_cap": 20000}).build(history, make_budget(window=64000))
    kept = tool_contents(ctx)["p"]
    assert len(kept) <= 20000 and all(line in kept for line in ROOT_CAUSE)


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
