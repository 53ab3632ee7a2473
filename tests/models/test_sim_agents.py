"""The simulator speaking Claude Code's and Codex CLI's tools: the call it writes for the shell tool a
request offers, how it reads their outputs, how it answers their own compaction requests, and that a
summary they open with afterwards is memory. Conversations arrive through the wire formats as the
agents send them (`ctxbench.harness.wire.messages`, `.wire_responses`)."""

from __future__ import annotations

import json

import pytest

from ctxbench.harness.wire.conversation import history_from_messages, own_context, fingerprints
from ctxbench.harness.models.simbash import shell_call
from ctxbench.harness.markup.summaries import AGENT_SUMMARY_PROMPTS
from ctxbench.harness.wire.messages import MESSAGES
from ctxbench.harness.wire.responses import RESPONSES
from sim_agent_helpers import FAILING, PASSING, sim

BASH = {"name": "Bash", "description": "Run a command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}
EXEC = {"type": "function", "name": "exec_command", "description": "Runs a command.",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}, "yield_time_ms": {"type": "number"}}}}


def claude(task, *turns: tuple[str, str], system: str = "You are Claude Code.", extra: list | None = None) -> dict:
    """A Messages request as Claude Code sends it: reminders and the task in one user message, then each
    (command, result) as a Bash tool_use and its tool_result (a failure opens with `Exit code N`)."""
    messages: list[dict] = [{"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>\ngitStatus: clean\n</system-reminder>"},
        {"type": "text", "text": task.problem_statement}]}]
    for n, (command, result) in enumerate(turns):
        messages += [{"role": "assistant", "content": [{"type": "text", "text": "Next."}, {
                         "type": "tool_use", "id": f"toolu_{n}", "name": "Bash", "input": {"command": command}}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{n}",
                                                   "content": result, "is_error": result.startswith("Exit code")}]}]
    if extra:
        messages[-1]["content"] += extra
    return {"model": "sim-coder", "max_tokens": 2048, "system": [{"type": "text", "text": system}],
            "messages": messages, "tools": [BASH]}


def codex(task, *turns: tuple[str, int, str], tools: list | None = None, extra: list | None = None) -> dict:
    """A Responses request as Codex CLI sends it: developer instructions, its environment context and the
    task as user messages, then each (command, exit code, output) as an exec_command call and its output."""
    items: list[dict] = [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context>\n"
                                                         "<cwd>/tmp/run-7/repo</cwd></environment_context>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": task.problem_statement}]}]
    for n, (command, code, output) in enumerate(turns):
        items += [{"type": "function_call", "call_id": f"call_{n}", "name": "exec_command",
                   "arguments": json.dumps({"cmd": command})},
                  {"type": "function_call_output", "call_id": f"call_{n}",
                   "output": f"Chunk ID: a{n}\nWall time: 0.{n}1 seconds\nProcess exited with code {code}\n"
                             f"Original token count: 9\nOutput:\n{output}"}]
    return {"model": "sim-coder", "input": items + (extra or []), "tools": [EXEC] if tools is None else tools}


def answer(task, body: dict, wire=MESSAGES):
    request = wire.read(body)
    return sim(task).complete(request.messages, request.tools), request


def source(start: int, end: int) -> str:
    lines = open("tasksets/smoke/repos/calc/calc/stats.py").read().splitlines()
    return "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(start, min(end, len(lines)) + 1))


def test_the_call_is_written_for_the_shell_tool_offered():
    tools = lambda *fs: [{"type": "function", "function": f} for f in fs]  # noqa: E731
    assert shell_call(tools({"name": "Bash", "parameters": {"properties": {"command": {}}}}), "ls") == \
        ("Bash", {"command": "ls"})
    assert shell_call(tools({"name": "exec_command", "parameters": {"properties": {"cmd": {}, "yield_time_ms": {}}}}),
                      "ls") == ("exec_command", {"cmd": "ls", "yield_time_ms": 30_000})
    assert shell_call(tools({"name": "shell", "parameters": {"properties": {"command": {"type": "array"}}}}), "ls") \
        == ("shell", {"command": ["bash", "-lc", "ls"]})
    assert shell_call(tools({"name": "Read", "parameters": {}}, {"name": "Bash", "parameters": {}}), "ls")[0] == "Bash"


def test_claude_codes_failing_test_run_leads_to_the_file_and_the_fix_then_a_reply_without_a_tool_call(median):
    reply, _ = answer(median, claude(median, ("python -m pytest -q", "Exit code 1\n" + FAILING)))
    (call,) = reply.tool_calls
    assert call.name == "Bash" and "calc/stats.py" in json.loads(call.arguments)["command"]
    read = json.loads(call.arguments)["command"]
    start, end = (int(x) for x in read.split("'")[1].rstrip("p").split(","))
    reply, _ = answer(median, claude(median, ("python -m pytest -q", "Exit code 1\n" + FAILING), (read, source(start, end))))
    assert json.loads(reply.tool_calls[0].arguments)["command"].startswith("git apply <<'EOF'")
    fix = json.loads(reply.tool_calls[0].arguments)["command"]
    turns = [("python -m pytest -q", "Exit code 1\n" + FAILING), (read, source(start, end)),
             (fix, "(Bash completed with no output)"), ("python -m pytest -q", PASSING)]  # success: no exit line
    reply, _ = answer(median, claude(median, *turns))
    assert reply.tool_calls == () and reply.text  # Claude Code ends its run on a reply that calls no tool


def test_codexs_outputs_are_read_inside_their_header(median):
    reply, request = answer(median, codex(median, ("python -m pytest -q", 1, FAILING)), RESPONSES)
    (call,) = reply.tool_calls
    command = json.loads(call.arguments)["cmd"]  # a read of a file the traceback names
    assert call.name == "exec_command" and command.startswith("nl -ba ") and "stats.py" in command
    history = history_from_messages(request.messages, (median.test_cmd,))
    (observation,) = history.turns[0].observations
    assert observation.kind == "test_run" and not observation.is_error  # a failing test run is content
    assert history.task_statement.endswith(median.problem_statement.strip())


def test_the_replies_do_not_depend_on_the_agents_working_folder(median):
    """Claude Code's system prompt names the run's folder (a pid and a random suffix: a few tokens more or
    less from run to run); the same conversation in another folder gets the same reply, whatever the seed,
    where the notice of the fix is drawn too."""
    read = "nl -ba calc/stats.py | sed -n '8,67p'"
    turns = [("python -m pytest -q", "Exit code 1\n" + FAILING), (read, source(8, 67))]
    folders = ("/tmp/r1", "/dev/shm/" + "ctxbench-run-7628.693246-calc-median-k9bha8n8/" * 12 + "repo")
    fixes = 0
    for seed in range(200):
        replies = set()
        for folder in folders:
            request = MESSAGES.read(claude(median, *turns, system="You are Claude Code.\n" * 1000 +
                                           f"Primary working directory: {folder}"))
            reply = sim(median, seed).complete(request.messages, request.tools)
            replies.add(repr((reply.text, reply.tool_calls)))  # the usage counts the folder's tokens
        assert len(replies) == 1, seed
        fixes += "git apply" in replies.pop()
    assert 0 < fixes < 200  # the notice is a draw: some seeds miss the fix in view


@pytest.mark.parametrize("agent", ["claude-code", "codex"])
def test_an_agents_compaction_request_gets_a_summary_in_its_form_that_reads_back_as_memory(median, agent):
    read = "nl -ba calc/stats.py | sed -n '8,67p'"
    prompt = AGENT_SUMMARY_PROMPTS[agent] + ". Summarize the conversation so far."
    if agent == "claude-code":
        body, wire = claude(median, ("python -m pytest -q", "Exit code 1\n" + FAILING), (read, source(8, 67)),
                            extra=[{"type": "text", "text": prompt}]), MESSAGES
    else:  # Codex asks without tools
        body, wire = codex(median, ("python -m pytest -q", 1, FAILING), (read, 0, source(8, 67)), tools=[],
                           extra=[{"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}]), RESPONSES
    request = wire.read(body)
    assert own_context(request.messages, fingerprints(request.messages), None) == "summary_request"
    summary, _ = answer(median, body, wire)
    assert summary.tool_calls == ()
    assert ("<summary>" in summary.text) == (agent == "claude-code")
    assert "- calc/stats.py (lines 8-67)" in summary.text and "run_tests({}) -> exit code 1" in summary.text
    # what the agent sends next: its history replaced by the summary (Claude Code keeps it in the first message)
    continued = {"model": "sim-coder", "max_tokens": 2048, "tools": [BASH], "messages": [{"role": "user", "content":
                 "This session is being continued from a previous conversation that ran out of context.\n\nSummary:\n"
                 + summary.text}]}
    before = fingerprints(request.messages)
    after = MESSAGES.read(continued)
    assert own_context(after.messages, fingerprints(after.messages), before) == "rewritten"
    reply = sim(median).complete(after.messages, after.tools)
    fresh = sim(median).complete(*(lambda r: (r.messages, r.tools))(MESSAGES.read(claude(median))))
    assert json.loads(fresh.tool_calls[0].arguments)["command"] == "python -m pytest -q"
    # it remembers the failing run: it does not start over by running the tests
    assert json.loads(reply.tool_calls[0].arguments)["command"] != "python -m pytest -q"


def test_what_claude_code_adds_after_its_tool_results_stays_with_the_turn(median):
    body = claude(median, ("python -m pytest -q", "Exit code 1\n" + FAILING),
                  extra=[{"type": "text", "text": "<system-reminder>The todo list is empty.</system-reminder>"}])
    request = MESSAGES.read(body)
    history = history_from_messages(request.messages, (median.test_cmd,))
    (turn,) = history.turns
    assert turn.notes == ("<system-reminder>The todo list is empty.</system-reminder>",)
    assert turn.observations[0].kind == "test_run"
    assert request.messages[-1] == {"role": "user", "content": turn.notes[0]}


def test_a_request_that_extends_the_previous_one_is_no_rewrite(median):
    first = MESSAGES.read(claude(median)).messages
    second = MESSAGES.read(claude(median, ("python -m pytest -q", "Exit code 1\n" + FAILING))).messages
    assert own_context(first, fingerprints(first), None) is None
    assert own_context(second, fingerprints(second), fingerprints(first)) is None
    assert own_context(second, fingerprints(second), fingerprints(second)) is None  # sent again
    assert own_context(first, fingerprints(first), fingerprints(second)) == "rewritten"


def test_a_masked_outputs_token_count_does_not_move_the_replies(median):
    """observation_masking's placeholder counts the tokens of the output the agent got, and an object
    address in a pytest output tokenizes differently from run to run: the same run with 570 or 571
    tokens masked gets the same replies."""
    from ctxbench.harness.markup.placeholders import masked_output

    read = "nl -ba calc/stats.py | sed -n '8,67p'"
    for seed in range(20):
        replies = set()
        for tokens in (570, 571):
            masked = masked_output("Bash", json.dumps({"command": "python -m pytest -q"}), 2253, tokens)
            request = MESSAGES.read(claude(median, ("python -m pytest -q", masked), (read, source(8, 67))))
            reply = sim(median, seed).complete(request.messages, request.tools)
            replies.add(repr((reply.text, reply.tool_calls)))
        assert len(replies) == 1, seed
