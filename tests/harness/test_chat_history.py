"""Other agents' conversations read as a History, and a strategy applied to them through the hook."""

from __future__ import annotations

import json

import pytest

from ctxbench.harness.chat import content_text, message_text, parse_arguments, read_arguments, read_opening
from ctxbench.harness.wire.conversation import fenced_command, history_from_messages
from ctxbench.strategies.hook import StrategyHook, apply_strategy

SOURCE = "\n".join(f"{n:6}\t{line}" for n, line in enumerate(["def median(xs):", "    xs = sorted(xs)",
                                                              "    return xs[len(xs) // 2]"], start=1))
FAILURE = "F\n" + "E   assert 2 == 2.5\n" * 40 + "1 failed in 0.05s"


def bash_call(call_id: str, command: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": "bash", "arguments": json.dumps({"command": command})}}


def tool_mode_conversation() -> list[dict]:
    """mini-swe-agent's tool-calling mode: one `bash` tool, observations with a return code."""
    return [
        {"role": "system", "content": "You are a helpful assistant that can interact with a computer."},
        {"role": "user", "content": "<pr_description>median of an even-length list is wrong</pr_description>"},
        {"role": "assistant", "content": "", "tool_calls": [bash_call("c1", "cd /testbed && python -m pytest -q")]},
        {"role": "tool", "tool_call_id": "c1", "content": f"<returncode>1</returncode>\n<output>\n{FAILURE}\n</output>"},
        {"role": "assistant", "content": "Read it.", "tool_calls": [bash_call("c2", "nl -ba calc/stats.py | sed -n '1,3p'")]},
        {"role": "tool", "tool_call_id": "c2", "content": f"<returncode>0</returncode>\n<output>\n{SOURCE}\n</output>"},
        {"role": "assistant", "content": "", "tool_calls": [bash_call("c3", "cat calc/missing.py")]},
        {"role": "tool", "tool_call_id": "c3", "content": "<returncode>1</returncode>\n<output>\ncat: calc/missing.py: "
                                                          "No such file or directory\n</output>"},
    ]


def text_mode_conversation() -> list[dict]:
    """mini-swe-agent's text mode: one fenced command per reply, the output in the next user message."""
    return [
        {"role": "system", "content": "Reply with exactly one bash block."},
        {"role": "user", "content": "Please solve this issue: median of an even-length list is wrong"},
        {"role": "assistant", "content": "THOUGHT: run the tests.\n\n```bash\npython -m pytest -q\n```"},
        {"role": "user", "content": f"<returncode>1</returncode>\n<output>\n{FAILURE}\n</output>"},
        {"role": "assistant", "content": "THOUGHT: look.\n\n```bash\ncat -n calc/stats.py\n```"},
        {"role": "user", "content": f"<returncode>0</returncode>\n<output>\n{SOURCE}\n</output>"},
        {"role": "assistant", "content": "THOUGHT: and again.\n\n```bash\npython -m pytest -q\n```"},
        {"role": "user", "content": f"<returncode>1</returncode>\n<output>\n{FAILURE}\n</output>"},
    ]


def test_a_bash_tool_conversation_reads_as_turns_with_what_each_command_did():
    history = history_from_messages(tool_mode_conversation())
    assert history.system_prompt.startswith("You are a helpful assistant")
    assert history.task_statement.startswith("<pr_description>")
    observations = [turn.observations[0] for turn in history.turns]
    assert [(o.kind, o.path, o.line_range, o.is_error) for o in observations] == [
        ("test_run", None, None, False),  # a failing test run is content, not a failed call
        ("file_read", "calc/stats.py", (1, 3), False),
        ("file_read", "calc/missing.py", None, True)]
    assert [o.call_id for o in observations] == ["c1", "c2", "c3"]


def test_a_text_mode_conversation_reads_as_turns_answered_by_user_messages():
    history = history_from_messages(text_mode_conversation())
    assert [t.tool_calls for t in history.turns] == [(), (), ()]
    assert [(o.kind, o.channel, o.path) for t in history.turns for o in t.observations] == [
        ("test_run", "user", None), ("file_read", "user", "calc/stats.py"), ("test_run", "user", None)]
    assert fenced_command(history.turns[1].text) == "cat -n calc/stats.py"


def test_baseline_through_the_hook_sends_back_exactly_what_the_agent_sent():
    for conversation in (tool_mode_conversation(), text_mode_conversation()):
        context = apply_strategy("baseline", conversation, context_window=128_000, max_output_tokens=1024)
        assert context.messages == conversation
        assert sum(context.ledger.components.values()) > 0


def test_masking_a_text_mode_agents_older_outputs_keeps_them_user_messages():
    conversation = text_mode_conversation()
    context = apply_strategy("observation_masking", conversation, params={"keep_recent": 1, "keep_errors": 0},
                             context_window=128_000, max_output_tokens=1024)
    roles = [m["role"] for m in context.messages]
    assert roles == [m["role"] for m in conversation]
    masked = [a for a in context.ledger.actions if a.kind == "masked"]
    assert [a.target for a in masked] == ["text-0", "text-1"]
    assert context.messages[3]["content"] != conversation[3]["content"]
    assert context.messages[-1] == conversation[-1]  # the latest output is kept whole
    assert context.ledger.components.get("files", 0) > 0  # the read of calc/stats.py is filed as a file


def test_a_hook_without_a_system_message_adds_none():
    conversation = text_mode_conversation()[1:]
    hook = StrategyHook("baseline", context_window=64_000, max_output_tokens=512)
    assert hook(conversation).messages == conversation


def test_every_format_s_text_parts_read_and_join_one_way():
    parts = [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {}}, {"type": "text", "text": "b"}]
    assert content_text(parts) == "a\nb" == message_text({"role": "user", "content": parts})
    responses = [{"type": "input_text", "text": "a"}, {"type": "output_text", "text": "b"}, {"type": "reasoning"}]
    assert content_text(responses, ("input_text", "output_text", "text")) == "a\nb"
    assert content_text(responses) == "" and content_text(None) == "" and content_text("as is") == "as is"


def test_tool_call_arguments_are_read_strictly_for_the_tools_and_leniently_for_a_conversation():
    assert parse_arguments("") == {} and parse_arguments('{"path": "a.py"}') == {"path": "a.py"}
    for bad in ("[1, 2]", "{not json"):
        with pytest.raises(ValueError):
            parse_arguments(bad)
        assert read_arguments(bad) == {}
    assert read_arguments({"command": "ls"}) == {"command": "ls"} and read_arguments(None) == {}


def test_an_opening_ends_at_the_first_reply_whatever_it_holds():
    codex = [{"role": "system", "content": "instructions"}, {"role": "developer", "content": "sandbox"},
             {"role": "user", "content": "environment"}, {"role": "user", "content": "the task"},
             {"role": "assistant", "content": "on it"}, {"role": "user", "content": "more"}]
    opening = read_opening(codex)
    assert (opening.end, opening.system, opening.user, opening.task_end) == (4, (0, 1), (2, 3), 3)
    history = history_from_messages(codex)
    assert (history.system_prompt, history.task_statement) == ("instructions\n\nsandbox", "environment\n\nthe task")
    no_system = read_opening([{"role": "user", "content": "the task"}, {"role": "user", "content": "a snippet"}])
    assert (no_system.end, no_system.system, no_system.task_end) == (2, (), 1)
