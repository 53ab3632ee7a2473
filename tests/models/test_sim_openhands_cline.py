"""The simulator speaking OpenHands' and Cline's tools: the call it writes for their shell tools
(OpenHands' `terminal` with its required `security_risk`, Cline's `run_commands` with a list of command
lines), how it reads their outputs (OpenHands' trailer after the output, its terminal's tabs expanded;
Cline's JSON list of results), how each run ends (OpenHands' `finish` tool, Cline's reply without a tool
call), and how it answers their own compaction requests. Requests are shaped as the agents sent them
(OpenHands CLI 1.16.0, Cline 3.0.65), read through the Chat Completions wire."""

from __future__ import annotations

import json


from ctxbench.harness.models.simbash import shell_call
from ctxbench.harness.wire.chat import CHAT
from ctxbench.harness.wire.conversation import fingerprints, history_from_messages, own_context
from ctxbench.harness.wire.shell_reading import exit_status
from sim_agent_helpers import FAILING, PASSING, sim

RUN_COMMANDS = {"type": "function", "function": {"name": "run_commands", "description": "Run shell commands.",
                "parameters": {"type": "object", "properties": {"commands": {"type": "array", "items": {
                    "type": "string"}}}, "required": ["commands"], "additionalProperties": False}}}
CLINE_TOOLS = [{"type": "function", "function": {"name": n, "parameters": {"type": "object", "properties": {}}}}
               for n in ("read_files", "search_codebase")] + [RUN_COMMANDS]
TERMINAL = {"type": "function", "function": {"name": "terminal", "description": "Execute a bash command.",
            "parameters": {"type": "object", "properties": {
                "security_risk": {"type": "string", "enum": ["UNKNOWN", "LOW", "MEDIUM", "HIGH"]},
                "summary": {"type": "string"}, "command": {"type": "string"}, "is_input": {"type": "boolean"},
                "timeout": {"type": "number"}, "reset": {"type": "boolean"}},
                "required": ["command", "security_risk"]}}}
FINISH = {"type": "function", "function": {"name": "finish", "parameters": {"type": "object", "properties": {
    "summary": {"type": "string"}, "message": {"type": "string"}}, "required": ["message"]}}}
OPENHANDS_TOOLS = [TERMINAL, {"type": "function", "function": {"name": "file_editor", "parameters": {}}}, FINISH]
TESTS = "python -m pytest -q"
READ = "nl -ba calc/stats.py | sed -n '8,67p'"


def answer(task, body: dict):
    request = CHAT.read(body)
    return sim(task).complete(request.messages, request.tools), request


def source(start: int, end: int, tab: str = "\t") -> str:
    lines = open("tasksets/smoke/repos/calc/calc/stats.py").read().splitlines()
    return "\n".join(f"{n:6}{tab}{lines[n - 1]}".rstrip() for n in range(start, min(end, len(lines)) + 1))


# -- Cline ------------------------------------------------------------------------------------------

def cline_result(command: str, code: int, output: str) -> str:
    """`run_commands`' result: a JSON list, a failure's output after `[Command exited with code N]`."""
    if code:
        return json.dumps([{"query": command, "result": f"[Command exited with code {code}]\n{output}",
                            "error": f"Command exited with code {code}", "success": False}])
    return json.dumps([{"query": command, "result": output, "success": True}])


def cline(task, *turns: tuple[str, int, str]) -> dict:
    """A request as Cline sends it: its system prompt, the task, then each (command, exit code, output) as
    a `run_commands` call and its result (streamed, with usage)."""
    messages: list[dict] = [{"role": "system", "content": "You are Cline, an AI coding agent."},
                            {"role": "user", "content": task.problem_statement}]
    for n, (command, code, output) in enumerate(turns):
        messages += [{"role": "assistant", "content": "Next.", "tool_calls": [{"id": f"call_{n}", "type": "function",
                      "function": {"name": "run_commands", "arguments": json.dumps({"commands": [command]})}}]},
                     {"role": "tool", "tool_call_id": f"call_{n}", "content": cline_result(command, code, output)}]
    return {"model": "sim-coder", "messages": messages, "tools": CLINE_TOOLS, "tool_choice": "auto",
            "stream": True, "stream_options": {"include_usage": True}}


def test_the_call_is_written_for_cline_and_openhands_shell_tools():
    assert shell_call([RUN_COMMANDS], "ls") == ("run_commands", {"commands": ["ls"]})
    assert shell_call([TERMINAL, FINISH], "ls") == ("terminal", {"command": "ls", "security_risk": "LOW"})


def test_clines_results_are_read_inside_their_json_list(median):
    reply, request = answer(median, cline(median, (TESTS, 1, FAILING)))
    (call,) = reply.tool_calls
    (command,) = json.loads(call.arguments)["commands"]
    assert call.name == "run_commands" and command.startswith("nl -ba ") and "stats.py" in command
    history = history_from_messages(request.messages, (median.test_cmd,))
    (observation,) = history.turns[0].observations
    assert observation.kind == "test_run" and observation.tool == "run_commands"
    assert exit_status(cline_result("grep -rn x .", 1, "")) == 1
    search = history_from_messages(CHAT.read(cline(median, ("grep -rn nothing .", 1, ""))).messages).turns[0]
    assert search.observations[0].kind == "search" and search.observations[0].is_error


def test_cline_is_led_to_the_fix_and_ends_with_a_reply_that_calls_no_tool(median):
    turns = [(TESTS, 1, FAILING), (READ, 0, source(8, 67))]
    reply, _ = answer(median, cline(median, *turns))
    (fix,) = json.loads(reply.tool_calls[0].arguments)["commands"]
    assert fix.startswith("git apply <<'EOF'")
    reply, _ = answer(median, cline(median, *turns, (fix, 0, ""), (TESTS, 0, PASSING)))
    assert reply.tool_calls == () and reply.text


def cline_compaction(task, *turns: tuple[str, str]) -> dict:
    """Cline's compaction request (`--compaction agentic`): its own system prompt, one user message with
    its instructions and the conversation as text, no tools."""
    lines = [f'[User]: <user_input mode="act">{task.problem_statement}</user_input>', ""]
    for command, result in turns:
        lines += ["[Bot]: Next.", f"[Bot tool calls]: run_commands(commands={json.dumps([command])})", "",
                  f"[Tool result]: {result}", ""]
    text = ("Summarize this session for continuation. Be concise and factual.\n\n## Goal\nOne sentence: what is "
            "being built or fixed.\n\n## Files\nRead: none\nEdited: none\n\nConversation:\n" + "\n".join(lines))
    return {"model": "sim-coder", "max_tokens": 8192, "stream": True, "stream_options": {"include_usage": True},
            "messages": [{"role": "system", "content": "Summarize the provided coding session into a concise "
                          "continuation note with detailed next steps."}, {"role": "user", "content": text}]}


def test_clines_compaction_gets_a_summary_in_its_sections_that_reads_back_as_memory(median):
    body = cline_compaction(median, (TESTS, cline_result(TESTS, 1, FAILING)), (READ, cline_result(READ, 0, source(8, 67))))
    request = CHAT.read(body)
    assert own_context(request.messages, fingerprints(request.messages), None) == "summary_request"
    summary, _ = answer(median, body)
    assert summary.tool_calls == () and summary.text.startswith("## Goal\n" + median.problem_statement.strip())
    assert "- calc/stats.py (lines 8-67)" in summary.text and "run_tests({}) -> exit code 1" in summary.text
    # what Cline sends next: the summary in place of the task and the turns it folded
    continued = {"model": "sim-coder", "tools": CLINE_TOOLS, "messages": [
        {"role": "system", "content": "You are Cline, an AI coding agent."},
        {"role": "user", "content": f"Context summary:\n\n{summary.text}\n\n## Files\nRead:\n- none\nModified:\n- none"}]}
    reply, _ = answer(median, continued)
    fresh, _ = answer(median, cline(median))
    assert json.loads(fresh.tool_calls[0].arguments)["commands"] == [TESTS]
    assert json.loads(reply.tool_calls[0].arguments)["commands"] != [TESTS]  # it remembers the failing run


def test_calls_whose_results_cline_leaves_out_of_its_compaction_request_are_not_remembered(median):
    """Cline 3.0.65 sends each `[Tool result]: ` empty: nothing is known of what the calls did."""
    summary, _ = answer(median, cline_compaction(median, (TESTS, ""), (READ, "")))
    assert "Files read: none" in summary.text and "run_tests" not in summary.text


# -- OpenHands --------------------------------------------------------------------------------------

def terminal_output(output: str, code: int) -> str:
    """`terminal`'s observation: the output (tabs expanded, trailing blanks dropped, as its terminal shows
    them), then its trailer with the exit code, the working folder and the interpreter."""
    shown = "\n".join(line.replace("\t", "  ").rstrip() for line in output.split("\n")).strip()
    return (f"{shown}\n[The command completed with exit code {code}.]\n[Current working directory: /tmp/r7/repo]\n"
            f"[Python interpreter: /tmp/r7/agent/bin/python]\n[Command finished with exit code {code}]")


def openhands(task, *turns: tuple[str, int, str]) -> dict:
    """A request as OpenHands sends it (litellm, not streamed): content as lists of text parts, each
    (command, exit code, output) as a `terminal` call with its `security_risk` and its observation."""
    text = lambda t: [{"type": "text", "text": t}]  # noqa: E731
    messages: list[dict] = [{"role": "system", "content": text("You are OpenHands agent.")},
                            {"role": "user", "content": text(task.problem_statement)}]
    for n, (command, code, output) in enumerate(turns):
        messages += [{"role": "assistant", "content": text("Next."), "tool_calls": [{"id": f"call_{n}", "type": "function",
                      "function": {"name": "terminal", "arguments": json.dumps({"command": command,
                                                                                "security_risk": "LOW"})}}]},
                     {"role": "tool", "tool_call_id": f"call_{n}", "content": text(terminal_output(output, code))}]
    return {"model": "sim-coder", "messages": messages, "tools": OPENHANDS_TOOLS, "reasoning_effort": "high",
            "prompt_cache_key": "744e2c4c-e79a-420e-b7ba-6e2194b88c39"}


def test_openhands_outputs_are_read_before_their_trailer(median):
    reply, request = answer(median, openhands(median, (TESTS, 1, FAILING)))
    (call,) = reply.tool_calls
    arguments = json.loads(call.arguments)
    assert call.name == "terminal" and arguments["security_risk"] == "LOW"
    assert arguments["command"].startswith("nl -ba ") and "stats.py" in arguments["command"]
    history = history_from_messages(request.messages, (median.test_cmd,))
    assert history.turns[0].observations[0].kind == "test_run"
    assert exit_status(terminal_output("", 1)) == 1 and exit_status(terminal_output("ok", 0)) == 0


def test_openhands_is_led_to_the_fix_through_its_terminals_lines_and_ends_with_its_finish_tool(median):
    turns = [(TESTS, 1, FAILING), (READ, 0, source(8, 67))]
    reply, _ = answer(median, openhands(median, *turns))
    fix = json.loads(reply.tool_calls[0].arguments)["command"]
    assert fix.startswith("git apply <<'EOF'")  # the numbered lines, their tabs expanded, showed the code
    reply, _ = answer(median, openhands(median, *turns, (fix, 0, ""), (TESTS, 0, PASSING)))
    (call,) = reply.tool_calls
    assert call.name == "finish" and json.loads(call.arguments) == {"message": reply.text}


def test_openhands_condensation_request_gets_a_summary_it_goes_on_from(median):
    """Its condenser asks in one user message, the events as text without their commands: nothing is
    known of what the calls did, so the summary holds the task and no calls; the agent goes on from the
    events it kept after it."""
    prompt = ("You are maintaining a context-aware state summary for an interactive agent.\nYou will be given a "
              "list of events corresponding to actions taken by the agent, which will include previous summaries."
              "\n\n<EVENT>\nActionEvent (agent)\n  Thought: Let me run the tests.\n  Action: TerminalAction\n"
              f"</EVENT>\n\n<EVENT>\nObservationEvent (environment)\n  Tool: terminal\n  Result: "
              f"{terminal_output(FAILING, 1)}\n</EVENT>\n\n\nNow summarize the events using the rules above.")
    body = {"model": "sim-coder", "reasoning_effort": "high", "messages": [{"role": "user", "content": [
        {"type": "text", "text": prompt}]}]}
    request = CHAT.read(body)
    assert own_context(request.messages, fingerprints(request.messages), None) == "summary_request"
    summary, _ = answer(median, body)
    assert summary.tool_calls == () and median.problem_statement.strip() in summary.text
    assert "Files read: none" in summary.text and "run_tests" not in summary.text
    # what it sends next: the summary as a user message after the task, then the events it kept
    continued = openhands(median, (READ, 0, source(8, 67)))
    continued["messages"].insert(2, {"role": "user", "content": [{"type": "text", "text": summary.text}]})
    reply, _ = answer(median, continued)
    assert json.loads(reply.tool_calls[0].arguments)["command"].startswith("git apply")
