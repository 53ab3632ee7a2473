"""Every context is a conversation a chat server accepts: `conversation_problems` says what a server would
refuse, `well_formed` repairs it with each repair in the ledger, and the strategies that rebuild a turn
keep a reply without a tool call answered (llama.cpp's server took a trailing reply for a prefill, and
refused the next request: "Cannot have 2 or more assistant messages at the end of the list")."""

from __future__ import annotations

import pytest

from ctxbench.harness.context import MISSING_RESULT, conversation_problems, well_formed
from ctxbench.harness.history import NO_TOOL_CALL, History
from ctxbench.harness.records import ContextLedger
from ctxbench.strategies import available_strategies
from ctxbench.strategies.testing import COUNTER, SYSTEM, TASK, agent_turn, contract_services, make_budget, make_turn

SYS, USER = {"role": "system", "content": "s"}, {"role": "user", "content": "task"}


def reply(text: str = "thinking", *calls: str) -> dict:
    message: dict = {"role": "assistant", "content": text}
    if calls:
        message["tool_calls"] = [{"id": c, "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}
                                 for c in calls]
    return message


def result(call: str) -> dict:
    return {"role": "tool", "tool_call_id": call, "content": "ok"}


def test_a_conversation_a_server_accepts_has_no_problem():
    assert conversation_problems([SYS, USER, reply("", "a", "b"), result("a"), result("b"), reply(), USER]) == []


@pytest.mark.parametrize("messages, problem", [
    ([SYS, USER, reply()], "message 2: the last message is assistant, not user or tool"),
    ([SYS, USER, reply(), reply("", "a"), result("a")], "message 3: two assistant messages in a row"),
    ([SYS, USER, result("x")], "message 2: tool result x answers no call of the assistant message before it"),
    ([SYS, USER, reply("", "a", "b"), result("a"), USER], "message 2: tool call b has no result after it"),
    ([SYS, USER, reply("", "a"), USER, result("a")], "message 4: tool result a answers no call"),
])
def test_each_kind_of_refused_conversation_is_named(messages, problem):
    assert any(p.startswith(problem) for p in conversation_problems(messages)), conversation_problems(messages)


def test_well_formed_repairs_each_problem_and_records_it():
    ledger = ContextLedger()
    ledger.add("tool_output", 100)
    messages = [SYS, USER, reply("a plan"), reply("", "a", "b"), result("a"), result("zz"), reply("done")]
    fixed = well_formed(messages, ledger, COUNTER.count_message)
    assert conversation_problems(fixed) == []
    assert [m["role"] for m in fixed] == ["system", "user", "assistant", "user", "assistant", "tool", "tool",
                                          "assistant", "user"]
    assert fixed[3]["content"] == NO_TOOL_CALL and fixed[-1]["content"] == NO_TOOL_CALL
    assert fixed[6] == {"role": "tool", "tool_call_id": "b", "content": MISSING_RESULT}
    repairs = [(a.kind, a.target) for a in ledger.actions]
    assert repairs == [("repaired", "message:3"), ("repaired", "zz"), ("repaired", "b"), ("repaired", "message:6")]
    added = sum(COUNTER.count_message(m) for m in (fixed[3], fixed[6], fixed[8]))
    assert ledger.components["history"] == added
    assert ledger.components["tool_output"] == 100 - COUNTER.count_message(result("zz"))


def test_a_conversation_without_problems_comes_back_as_it_is():
    messages = [SYS, USER, reply("", "a"), result("a")]
    ledger = ContextLedger()
    assert well_formed(messages, ledger, COUNTER.count_message) is messages and ledger.actions == []


@pytest.mark.parametrize("name", sorted(available_strategies()))
def test_no_strategy_ends_a_context_with_a_reply_that_called_no_tool(name):
    """The last turn is a reply in prose (no call): every built-in strategy answers it with the reminder,
    as the builtin loop sends it, rather than ending the request with the reply."""
    turns = [agent_turn(i) for i in range(5)] + [make_turn(5, "I believe the fix is done.")]
    strategy = available_strategies()[name]
    context = strategy(strategy.Params(), contract_services()).build(History(SYSTEM, TASK, tuple(turns)), make_budget())
    assert conversation_problems(context.messages) == []
    assert context.messages[-2:] == [{"role": "assistant", "content": "I believe the fix is done."},
                                     {"role": "user", "content": NO_TOOL_CALL}]
