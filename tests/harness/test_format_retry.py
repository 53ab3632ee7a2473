"""An agent that asks again after a reply it could not use is not replacing its history: mini-swe-agent
(2.4.6) drops a reply in the wrong format and sends its error feedback as one more user message, so its
next request is the previous one plus a user message (the task and that feedback, two user messages in a
row, when the first reply was the malformed one). Such a request is no `own_context: rewritten`, and
the run's `own_rewrites` does not count it; a history the agent does replace still is."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scripted import ScriptedModel

from ctxbench.harness.agents.route import AgentRoute
from ctxbench.harness.config import Limits
from ctxbench.harness.loop.agent import AgentOutcome
from ctxbench.harness.protocols import Completion
from ctxbench.harness.records import History, TranscriptHeader, TranscriptTurn, Usage
from ctxbench.harness.records.transcript import TranscriptWriter, read_transcript
from ctxbench.harness.wire import CHAT
from ctxbench.harness.wire.base import ModelRequest
from ctxbench.harness.wire.conversation import fingerprints, own_context
from ctxbench.strategies.hook import StrategyHook

BASH_TOOL = {"type": "function", "function": {"name": "bash", "description": "Execute a bash command",
             "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}
SYSTEM = {"role": "system", "content": "You are a helpful assistant that can interact with a computer."}
TASK = {"role": "user", "content": "<pr_description>\nmedian() of an even-length list is wrong.\n</pr_description>"}
TOOL_CALL_ERROR = (  # mini.yaml's format_error_template, as `mini` renders it for a reply without a tool call
    "Tool call error:\n\n<error>\nNo tool calls found in the response. Every response MUST include at least one "
    "tool call.\n</error>\n\nHere is general guidance on how to submit correct toolcalls:\n\nEvery response needs "
    "to use the 'bash' tool at least once to execute commands.\n\nCall the bash tool with your command as the "
    "argument:\n- Tool: bash\n- Arguments: {\"command\": \"your_command_here\"}\n\nIf you want to end the task, "
    "please issue the following command: `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`\nwithout any other command.")
TEXT_FORMAT_ERROR = (  # default.yaml's, for a text-mode reply without exactly one fenced action
    "Format error:\n\n<error>\nExpected exactly 1 action, found 0.\n</error>\n\nHere is general guidance on how "
    "to format your response:\n\nPlease always provide EXACTLY ONE action in triple backticks, found 0 actions.\n"
    "If you want to end the task, please issue the following command: `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT`"
    "\nwithout any other command.\nElse, please format your response exactly as follows:\n\n<response_example>\n"
    "Here are some thoughts about why you want to perform the action.\n\n```mswea_bash_command\n<action>\n```\n"
    "</response_example>")


def retry_requests(mode: str) -> list[list[dict[str, Any]]]:
    """mini-swe-agent's requests when its first two replies and a later one are in the wrong format."""
    error = {"role": "user", "content": TOOL_CALL_ERROR if mode == "tool calls" else TEXT_FORMAT_ERROR}
    if mode == "tool calls":
        turn = [{"role": "assistant", "content": "Let me look.", "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "bash",
                                                                      "arguments": json.dumps({"command": "ls"})}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": '{"returncode": 0, "output": "calc\\ntests\\n"}'}]
    else:
        turn = [{"role": "assistant", "content": "Let me look.\n\n```mswea_bash_command\nls\n```"},
                {"role": "user", "content": "<returncode>0</returncode>\n<output>\ncalc\ntests\n</output>"}]
    first = [SYSTEM, TASK]
    return [first, first + [error], first + [error, error], first + [error, error, *turn],
            first + [error, error, *turn, error]]


@pytest.mark.parametrize("mode", ["tool calls", "text"])
def test_a_format_retry_is_no_rewrite(mode):
    requests = retry_requests(mode)
    previous = None
    for messages in requests:
        sent = fingerprints(messages)
        assert own_context(messages, sent, previous) is None, len(messages)
        previous = sent
    compacted = [SYSTEM, {"role": "user", "content": "Summary of the conversation so far: ls shows calc, tests."}]
    assert own_context(compacted, fingerprints(compacted), previous) == "rewritten"
    dropped = requests[-1][:-2] + [requests[-1][-1]]  # a turn taken out: the history replaced, not extended
    assert own_context(dropped, fingerprints(dropped), previous) == "rewritten"


def test_a_runs_format_retries_are_not_its_own_rewrites(tmp_path: Path):
    """Through an external run's route, as `run_external` serves it: the retries are turns of their own,
    none counted as the agent's compaction; the one history it does replace is."""
    transcript = TranscriptWriter(tmp_path / "run.jsonl", TranscriptHeader(
        run_id="baseline/t/0", strategy="baseline", task_id="t", repeat=0, seed=0))
    model = ScriptedModel([Completion("I think the bug is in median.", (), Usage(300, 10))])
    hook = StrategyHook("baseline", context_window=16000, max_output_tokens=256)
    route = AgentRoute(hook, model, "sim", Limits(), 16000, transcript, AgentOutcome("finished", History("", "t")),
                       tmp_path / "stop")
    compacted = [SYSTEM, {"role": "user", "content": "Summary of the conversation so far: ls shows calc, tests."}]
    for messages in [*retry_requests("tool calls"), compacted]:
        reply = route.answer(ModelRequest(wire=CHAT, model="sim", messages=messages, tools=[BASH_TOOL]))
        assert isinstance(reply, Completion), reply
    route.flush()
    transcript.close()
    turns = [r for r in read_transcript(tmp_path / "run.jsonl") if isinstance(r, TranscriptTurn)]
    assert [t.own_context for t in turns] == [None] * 5 + ["rewritten"]
    assert route.outcome.own_rewrites == 1 and route.outcome.turns == 6
