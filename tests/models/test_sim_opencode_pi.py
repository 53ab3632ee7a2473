"""The simulator speaking OpenCode's and Pi's tools: the call it writes for their `bash`, how it reads
their outputs (OpenCode's plain output, Pi's closing `Command exited with code N`), that it ends their
runs with a reply calling no tool (mini-swe-agent's `bash` alone still submits with its command), and
OpenCode's title request. Requests arrive through the Chat Completions wire shaped as the agents send
them (copied from their requests to the gateway)."""

from __future__ import annotations

import json

import pytest

from ctxbench.harness.models.simbash import finishes_by_text, shell_call
from ctxbench.harness.wire.chat import CHAT
from ctxbench.harness.wire.conversation import fingerprints, history_from_messages, own_context
from ctxbench.harness.wire.shell_reading import closing_status, exit_status, pytest_status
from sim_agent_helpers import FAILING, PASSING, sim



def function(name: str, properties: dict, required: list[str]) -> dict:
    return {"type": "function", "function": {"name": name, "description": f"The {name} tool.", "parameters": {
        "type": "object", "properties": properties, "required": required}}}


STRING = {"type": "string"}
OPENCODE_TOOLS = [function("bash", {"command": STRING, "timeout": {"type": "integer"}, "workdir": STRING}, ["command"]),
                  function("edit", {"filePath": STRING, "oldString": STRING, "newString": STRING},
                           ["filePath", "oldString", "newString"]),
                  function("glob", {"pattern": STRING, "path": STRING}, ["pattern"]),
                  function("grep", {"pattern": STRING, "path": STRING, "include": STRING}, ["pattern"]),
                  function("read", {"filePath": STRING, "offset": {"type": "integer"}}, ["filePath"]),
                  function("todowrite", {"todos": {"type": "array"}}, ["todos"]),
                  function("write", {"content": STRING, "filePath": STRING}, ["content", "filePath"])]
PI_TOOLS = [function("read", {"path": STRING, "offset": {"type": "number"}, "limit": {"type": "number"}}, ["path"]),
            function("bash", {"command": STRING, "timeout": {"type": "number"}}, ["command"]),
            function("edit", {"path": STRING, "edits": {"type": "array"}}, ["path", "edits"]),
            function("write", {"path": STRING, "content": STRING}, ["path", "content"])]
MINI_TOOLS = [function("bash", {"command": STRING}, ["command"])]


def request(task, tools: list[dict], *turns: tuple[str, str], pi: bool = False) -> dict:
    """A Chat Completions request as OpenCode (the task quoted, a string) or Pi (the task as a list of text
    parts) sends it, each (command, output) a `bash` call and its tool message."""
    task_content: object = [{"type": "text", "text": task.problem_statement}] if pi else f'"{task.problem_statement}"'
    messages: list[dict] = [{"role": "system", "content": "You are opencode." if not pi else "You are pi."},
                            {"role": "user", "content": task_content}]
    for n, (command, output) in enumerate(turns):
        messages += [{"role": "assistant", "content": "Next.", "tool_calls": [{
                         "id": f"call_{n}", "type": "function",
                         "function": {"name": "bash", "arguments": json.dumps({"command": command})}}]},
                     {"role": "tool", "tool_call_id": f"call_{n}", "content": output}]
    return {"model": "sim-coder", "max_tokens": 4096, "messages": messages, "tools": tools, "tool_choice": "auto",
            "stream": True, "stream_options": {"include_usage": True}}


def answer(task, body: dict):
    read = CHAT.read(body)
    return sim(task).complete(read.messages, read.tools), read


def source(start: int, end: int) -> str:
    lines = open("tasksets/smoke/repos/calc/calc/stats.py").read().splitlines()
    return "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(start, min(end, len(lines)) + 1))


def test_a_bash_beside_the_agents_own_file_tools_finishes_by_text_a_bash_alone_by_command():
    assert finishes_by_text(OPENCODE_TOOLS) and finishes_by_text(PI_TOOLS)
    assert not finishes_by_text(MINI_TOOLS)  # mini-swe-agent submits with its echo
    swe_agent = [*MINI_TOOLS, function("str_replace_editor", {"command": STRING}, ["command"]),
                 function("submit", {}, [])]
    assert not finishes_by_text(swe_agent)
    assert shell_call(OPENCODE_TOOLS, "ls") == ("bash", {"command": "ls"})  # its one required field
    assert shell_call(PI_TOOLS, "ls") == ("bash", {"command": "ls"})


@pytest.mark.parametrize("agent", ["opencode", "pi"])
def test_a_failing_run_leads_to_the_fix_then_a_passing_run_to_a_reply_without_a_tool_call(median, agent):
    pi = agent == "pi"
    tools = PI_TOOLS if pi else OPENCODE_TOOLS
    failed = FAILING + ("\n\nCommand exited with code 1" if pi else "")  # OpenCode does not tell the status
    turns = [("python -m pytest -q", failed)]
    reply, _ = answer(median, request(median, tools, *turns, pi=pi))
    read = json.loads(reply.tool_calls[0].arguments)["command"]
    assert reply.tool_calls[0].name == "bash" and read.startswith("nl -ba calc/stats.py")
    start, end = (int(x) for x in read.split("'")[1].rstrip("p").split(","))
    turns.append((read, source(start, end)))
    reply, _ = answer(median, request(median, tools, *turns, pi=pi))
    fix = json.loads(reply.tool_calls[0].arguments)["command"]
    assert fix.startswith("git apply <<'EOF'")
    turns += [(fix, "(no output)"), ("python -m pytest -q", PASSING)]
    reply, _ = answer(median, request(median, tools, *turns, pi=pi))
    assert reply.tool_calls == () and reply.text == "The tests pass now."
    # the same conversation offering mini-swe-agent's one `bash` submits with its command instead
    reply, _ = answer(median, request(median, MINI_TOOLS, *turns, pi=pi))
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in json.loads(reply.tool_calls[0].arguments)["command"]


def test_a_wrapping_that_tells_no_status_leaves_a_test_runs_outcome_to_pytests_tally(median):
    """OpenCode's `bash` never says the exit status (nor Pi's on success): a run whose tally has failures
    is a failure the simulator goes on from, one that passed lets it finish."""
    fixed = [("python -m pytest -q", FAILING), ("nl -ba calc/stats.py | sed -n '26,85p'", source(26, 85))]
    reply, _ = answer(median, request(median, OPENCODE_TOOLS, *fixed))
    assert json.loads(reply.tool_calls[0].arguments)["command"].startswith("git apply")
    assert pytest_status(FAILING) == 1 and pytest_status(PASSING) == 0 and pytest_status("(no output)") is None
    assert pytest_status("===== 1 error in 0.1s =====") == 1


def test_pis_closing_status_is_read_and_cut_off():
    assert closing_status(FAILING + "\n\nCommand exited with code 1") == (1, FAILING)
    assert closing_status("Command exited with code 127") == (127, "")
    assert closing_status(PASSING) is None
    assert exit_status("bash: nosuch: command not found\n\nCommand exited with code 127") == 127


def test_pis_prompt_as_text_parts_is_read_as_its_text(median):
    read = CHAT.read(request(median, PI_TOOLS, ("python -m pytest -q", FAILING + "\n\nCommand exited with code 1"),
                             pi=True))
    assert read.messages[1]["content"] == median.problem_statement
    history = history_from_messages(read.messages, (median.test_cmd,))
    (observation,) = history.turns[0].observations
    assert observation.kind == "test_run" and history.task_statement == median.problem_statement
    reply = sim(median).complete(read.messages, read.tools)
    assert reply.tool_calls and reply.usage.prompt_tokens > 0


def test_opencodes_title_request_gets_a_short_title_and_is_no_part_of_the_conversation(median):
    title = {"model": "sim-coder", "max_tokens": 4096, "stream": True, "messages": [
        {"role": "system", "content": "You are a title generator. You output ONLY a thread title. Nothing else.\n"
                                      "Generate a brief title that would help the user find this conversation later."},
        {"role": "user", "content": "Generate a title for this conversation:\n"},
        {"role": "user", "content": f'"{median.problem_statement}"'}]}
    reply, read = answer(median, title)
    assert reply.tool_calls == () and "\n" not in reply.text and 0 < len(reply.text) <= 50
    assert reply.text.startswith("calc.median gives the wrong answer")
    first = CHAT.read(request(median, OPENCODE_TOOLS)).messages
    assert own_context(read.messages, fingerprints(read.messages), None) is None
    assert own_context(first, fingerprints(first), fingerprints(read.messages)) is None  # not a rewrite


def test_pis_compaction_request_gets_a_summary_in_its_sections_that_reads_back_as_memory(median):
    """Pi asks with a system prompt of its own and the turns as text (`simpi`); after it, it sends the summary
    in a user message, then the turns it kept."""
    conversation = ("<conversation>\n[User]: " + median.problem_statement + "\n\n[Assistant]: Let me run the tests."
                    "\n\n[Assistant tool calls]: bash(command=\"python -m pytest -q\")\n\n[Tool result]: " + FAILING
                    + "\n\nCommand exited with code 1\n\n[Assistant tool calls]: bash(command="
                    + json.dumps("nl -ba calc/stats.py | sed -n '8,67p'") + ")\n\n[Tool result]: " + source(8, 67)
                    + "\n</conversation>\n\nThe messages above are a conversation to summarize.")
    body = {"model": "sim-coder", "stream": True, "messages": [
        {"role": "system", "content": "You are a context summarization assistant. Your task is to read a conversation "
                                      "between a user and an AI coding assistant, then produce a structured summary."},
        {"role": "user", "content": [{"type": "text", "text": conversation}]}]}
    summary, read = answer(median, body)
    assert own_context(read.messages, fingerprints(read.messages), None) == "summary_request"
    assert summary.tool_calls == () and summary.text.startswith("## Goal\n")
    assert "- calc/stats.py (lines 8-67)" in summary.text and "run_tests({}) -> exit code 1" in summary.text
    kept = {"role": "user", "content": [{"type": "text", "text": "The conversation history before this point was "
                                         "compacted into the following summary:\n\n<summary>\n"
                                         f"{summary.text}\n</summary>"}]}
    after = request(median, PI_TOOLS, pi=True)
    after["messages"][1:] = [kept]
    reply, _ = answer(median, after)
    fresh, _ = answer(median, request(median, PI_TOOLS, pi=True))
    assert json.loads(fresh.tool_calls[0].arguments)["command"] == "python -m pytest -q"
    # it remembers the failing run and the lines it read: it does not start over
    assert json.loads(reply.tool_calls[0].arguments)["command"] != "python -m pytest -q"


def test_opencodes_compaction_request_gets_a_summary_it_keeps_as_a_reply_read_back_as_memory(median):
    """OpenCode asks without tools, the turns as text (one `[Assistant tool call]: bash({…})` per call), then
    sends the summary back as the reply to its own `What did we do so far?`, the summarized turns gone."""
    conversation = ("Here is the conversation so far:\n\n<conversation>\n[User]: " + median.problem_statement
                    + "\n\n\n[Assistant]: Let me run the tests.\n[Assistant tool call]: bash("
                    + json.dumps({"command": "python -m pytest -q"}) + ")\n[Tool result]: " + FAILING
                    + "\n\n[Assistant]: Reading.\n[Assistant tool call]: bash("
                    + json.dumps({"command": "nl -ba calc/stats.py | sed -n '8,67p'"}) + ")\n[Tool result]: "
                    + source(8, 67) + "\n</conversation>\n\nCreate a new anchored summary from the conversation "
                    "history in the <conversation> tags above so another coding agent can continue the work.")
    body = {"model": "sim-coder", "stream": True, "messages": [
        {"role": "system", "content": "You are a context summarization agent. You are given a conversation between "
                                      "a user and an agent. Your goal is to produce a structured summary."},
        {"role": "user", "content": conversation}]}
    summary, read = answer(median, body)
    assert own_context(read.messages, fingerprints(read.messages), None) == "summary_request"
    assert summary.tool_calls == () and summary.text.startswith("## Objective\n")
    assert "- calc/stats.py (lines 8-67)" in summary.text and "run_tests({}) -> exit code 1" in summary.text
    after = request(median, OPENCODE_TOOLS)
    after["messages"][1:] = [{"role": "user", "content": "What did we do so far?"},
                             {"role": "assistant", "content": summary.text},
                             {"role": "user", "content": "Continue if you have next steps, or stop and ask for "
                                                         "clarification if you are unsure how to proceed."}]
    assert own_context(CHAT.read(after).messages, fingerprints(CHAT.read(after).messages),
                       fingerprints(read.messages)) == "rewritten"
    reply, _ = answer(median, after)
    forgot = json.loads(json.dumps(after))
    forgot["messages"][2]["content"] = "We looked around."
    unaware, _ = answer(median, forgot)
    fresh, _ = answer(median, request(median, OPENCODE_TOOLS))
    assert json.loads(fresh.tool_calls[0].arguments)["command"] == "python -m pytest -q"
    # the reply holding the summary is memory: it remembers the failing run, it does not start over
    command = json.loads(reply.tool_calls[0].arguments)["command"]
    assert command != "python -m pytest -q" and command != json.loads(unaware.tool_calls[0].arguments)["command"]


def test_the_file_a_cut_output_is_spilled_to_does_not_move_the_replies(median):
    """Pi names a fresh file for the whole of an output it cut (`Full output: /tmp/pi-bash-….log`): the same
    run in two arms must get the same replies, whatever the seed."""
    cut = FAILING + "\n\n[Showing lines 1-12 of 12. Full output: /tmp/pi-bash-{}.log]\n\nCommand exited with code 1"
    for seed in range(20):
        replies = set()
        for name in ("caef39b7c00e210a", "e9fa29e322798cf6"):
            read = CHAT.read(request(median, PI_TOOLS, ("python -m pytest -q", cut.format(name)),
                                     ("nl -ba calc/stats.py | sed -n '8,67p'", source(8, 67)), pi=True))
            reply = sim(median, seed).complete(read.messages, read.tools)
            replies.add(repr((reply.text, reply.tool_calls, reply.usage.prompt_tokens)))
        assert len(replies) == 1, seed
