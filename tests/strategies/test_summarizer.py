"""`summarizer` (003 §5.2): the last K turns verbatim, one summary right after the task, folded incrementally."""

from __future__ import annotations

import pytest

from ctxbench.harness.context import ContextOverflow
from ctxbench.harness.history import turn_messages
from ctxbench.strategies import StrategyError, StrategyServices, create_strategy
from ctxbench.strategies.summarizer import SUMMARIZE_PROMPT

from history_builders import (EchoSummaryModel, SYSTEM, TASK, make_budget, make_turn, obs, read_obs, run_obs,
                              scripted_history, with_turns)
from ctxbench.harness.history import History

BUDGET = make_budget()
SMALL = {"history_share": 0.15}  # summarizing starts once the turns exceed ~2,200 tokens


def test_under_budget_the_history_is_verbatim() -> None:
    history = scripted_history(5)
    ctx = create_strategy("summarizer").build(history, BUDGET)
    assert ctx.messages == create_strategy("baseline").build(history, BUDGET).messages
    assert ctx.ledger.actions == []


def test_over_budget_keeps_task_summary_and_last_k_turns() -> None:
    history = scripted_history(24)
    ctx = create_strategy("summarizer", {**SMALL, "keep_recent": 3}).build(history, BUDGET)
    assert ctx.messages[1] == history.task_message()
    summary = ctx.messages[2]
    assert summary["role"] == "user" and summary["content"].startswith("Summary of turns 0-20 ")
    verbatim = [m for t in history.turns[-3:] for m in turn_messages(t)]
    assert ctx.messages[3:] == verbatim
    assert [a.target for a in ctx.ledger.actions if a.kind == "summarized"] == [f"turn:{i}" for i in range(21)]
    assert ctx.ledger.components["summary"] > 0


def test_extractive_summary_holds_goal_files_edits_commands_and_errors() -> None:
    ctx = create_strategy("summarizer", SMALL).build(scripted_history(24), BUDGET)
    text = ctx.messages[2]["content"]
    assert "Task goal: divide() in calc/ops.py crashes with ZeroDivisionError" in text
    assert "Files read:\n- calc/util_2.py (lines 1-" in text and "- calc/ops.py (lines 1-19)" in text
    assert "list_files({\"path_arg\": \".\"}) -> 29 entries" in text
    assert "Files modified:\n- calc/util_4.py (1 edit; last turn 4: Edited calc/util_4.py: replaced 1 occurrence)" in text
    assert "run_tests({}) -> exit code 1" in text
    assert "- last test run: E       ZeroDivisionError: division by zero" in text
    assert "- last test run: calc/ops.py:12: ZeroDivisionError" in text
    assert "read_file" in text and "file not found: calc/nope.py" in text


def test_a_passing_test_run_resolves_the_errors() -> None:
    history = scripted_history(20)
    fixed = make_turn(20, "Rerun.", obs("ok", "run_tests", "test_run", "3 passed\n[exit code 0]", 20))
    history = with_turns(history, [*history.turns, fixed, *scripted_history(25).turns[21:25]])
    text = create_strategy("summarizer", {**SMALL, "keep_recent": 4}).build(history, BUDGET).messages[2]["content"]
    assert "Unresolved errors:\n- none" in text
    assert "run_tests({}) -> exit code 0" in text


def test_incremental_summary_equals_a_fresh_one() -> None:
    history = scripted_history(30)
    incremental = create_strategy("summarizer", SMALL)
    for n in range(31):
        ctx = incremental.build(with_turns(history, list(history.turns[:n])), BUDGET)
    assert ctx.messages == create_strategy("summarizer", SMALL).build(history, BUDGET).messages


def test_model_mode_folds_the_previous_summary_into_the_next() -> None:
    model = EchoSummaryModel()
    strategy = create_strategy("summarizer", {**SMALL, "mode": "model"}, StrategyServices(model=model))
    history = scripted_history(30)
    built = {}
    for n in range(31):
        before = len(model.calls)
        built[n] = (strategy.build(with_turns(history, list(history.turns[:n])), BUDGET), len(model.calls) - before)
    triggered = [n for n in built if built[n][1]]
    first = triggered[0]
    assert all(calls == 1 for n, (_, calls) in built.items() if n in triggered)
    assert triggered == list(range(first, 31)), "one call per turn once summarizing started"
    messages, tools = model.calls[0]
    assert tools == [] and messages[0]["role"] == "system" and "summarize" in messages[0]["content"]
    assert messages[0]["content"] == SUMMARIZE_PROMPT
    assert "Previous summary:" not in messages[1]["content"]
    later = model.calls[1][0][1]["content"]
    assert later.startswith("Previous summary:\nFolded turns 0,")
    assert later.count("assistant:") == 1, "a later call folds exactly one more turn"
    last_ctx = built[30][0]
    assert last_ctx.messages[2]["content"].startswith("Summary of turns 0-25 ")
    usage = (50 + len(model.calls[-1][0][1]["content"]) // 10, 20)
    assert (last_ctx.ledger.strategy_prompt_tokens, last_ctx.ledger.strategy_completion_tokens) == usage
    fresh_model = EchoSummaryModel()
    fresh = create_strategy("summarizer", {**SMALL, "mode": "model"}, StrategyServices(model=fresh_model))
    assert fresh.build(history, BUDGET).messages == last_ctx.messages
    assert len(fresh_model.calls) == len(model.calls)


def test_model_mode_needs_a_model() -> None:
    with pytest.raises(StrategyError, match="needs a model"):
        create_strategy("summarizer", {"mode": "model"})


def test_recent_turns_that_do_not_fit_overflow() -> None:
    history = scripted_history(6)
    huge = make_turn(6, "", obs("big", "list_files", "listing", "\n".join(f"f{i}.py" for i in range(30000)), 6))
    with pytest.raises(ContextOverflow, match="last 4 turns"):
        create_strategy("summarizer").build(with_turns(history, [*history.turns, huge]), BUDGET)


def many_file_history(n_files: int = 14, rounds: int = 4) -> History:
    """Each round reads every util file in two overlapping ranges and edits it, then runs the failing tests."""
    turns, i = [], 0
    for r in range(rounds):
        for k in range(n_files):
            path = f"calc/util_{k}.py"
            turns.append(make_turn(i, "", read_obs(f"a{i}", i, path, 1 + r, 20 + r), read_obs(f"b{i}", i, path, 15, 30 + r)))
            i += 1
            turns.append(make_turn(i, "Edit.", obs(f"e{i}", "edit_file", "edit", f"edited {path}: replaced 1 lines with 2 lines",
                                                   i, path=path, old_text=f"CONSTANT_{k} = {k}",
                                                   new_text=f"CONSTANT_{k} = {k}  # round {r}")))
            i += 1
        turns.append(make_turn(i, "Test.", run_obs(f"t{i}", i)))
        i += 1
    turns += [make_turn(i + j, "Test again.", run_obs(f"t{i + j}", i + j)) for j in range(4)]
    return History(SYSTEM, TASK, tuple(turns))


def test_a_long_many_file_history_keeps_task_every_modified_file_and_the_errors() -> None:
    history = many_file_history()
    ctx = create_strategy("summarizer", {**SMALL, "max_summary_chars": 2500}).build(history, BUDGET)
    text = ctx.messages[2]["content"]
    assert "Task goal: divide() in calc/ops.py crashes with ZeroDivisionError" in text
    modified = text[text.index("Files modified:"):text.index("Commands run")]
    for k in range(14):
        assert f'- calc/util_{k}.py (4 edits; last turn ' in modified, k
    assert '"CONSTANT_13 = 13" -> "CONSTANT_13 = 13  # round 3"' in modified
    assert "- last test run: E       ZeroDivisionError: division by zero" in text
    reads = text[text.index("Files read:"):text.index("Files modified:")]
    assert "files read earlier)" in reads, "the files read are bounded, oldest first out"
    for line in reads.splitlines()[2:]:
        assert line.count("lines") == 1 and ", " not in line.split("lines")[1], f"ranges merged: {line}"
    assert "(lines 1-33)" in reads
    assert len(text.split("\n", 1)[1]) <= 2500, "the bounded sections fill what the kept ones leave"
    assert [a.reason for a in ctx.ledger.actions if a.target == "summary"] == [
        "summary over max_summary_chars=2500: " + next(a.reason for a in ctx.ledger.actions if a.target == "summary").split(": ", 1)[1]]


def test_model_mode_cannot_lose_the_kept_sections() -> None:
    history = many_file_history(rounds=2)
    strategy = create_strategy("summarizer", {**SMALL, "mode": "model", "max_summary_chars": 600},
                               StrategyServices(model=EchoSummaryModel()))
    text = strategy.build(history, BUDGET).messages[2]["content"]
    assert "Folded turns" in text
    for k in range(14):
        assert f"- calc/util_{k}.py (2 edits; last turn " in text
    assert "Unresolved errors:\n- last test run: E       ZeroDivisionError" in text
