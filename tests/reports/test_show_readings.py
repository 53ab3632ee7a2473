"""`ctxbench show` reads a transcript as the model saw it: a JSON observation as its text, the context as
the whole prompt counted, messages sent again as what they are."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.records import (ContextLedger, ToolCall, TranscriptEnd, TranscriptHeader, TranscriptObservation,
                                      TranscriptTurn, Usage)
from ctxbench.harness.records.results_folder import transcript_path
from ctxbench.harness.records.transcript import TranscriptWriter, compress_transcript
from ctxbench.reports.readable import readable

RUN = "baseline/task-0/0"
REPLY = "THOUGHT: the test — «a» > «b» — fails.\n\n```bash\npytest -x\n```"
OUTPUT = 'FAILED tests/test_x.py::test_a - assert "a" > "b"\n1 failed in 0.01s'
OBSERVATION = json.dumps({"returncode": 1, "output": OUTPUT}, indent=2).replace(">", "\\u003e")
"""mini-swe-agent's observation: a JSON object, `>` escaped as its template's `tojson` does."""


def _turn(writer: TranscriptWriter, index: int, messages: list[dict], tokens: int, ledger: dict[str, int],
          call: str | None = None, observation: str = "", reply: str = "Run the tests.") -> TranscriptTurn:
    calls = [ToolCall(id=call, name="bash", arguments='{"command": "pytest"}')] if call else []
    observations = [TranscriptObservation(call_id=call, tool="bash", kind="test_run", is_error=False,
                                          content=observation, size=len(observation), tokens=40)] if call else []
    return TranscriptTurn(turn=index, messages=writer.message_hashes(messages), context_tokens=tokens,
                          fill=tokens / 16000, ledger=ContextLedger(dict(ledger)), reply=reply,
                          tool_calls=calls, observations=observations, usage=Usage(prompt_tokens=tokens))


def mini_run(tmp_path: Path, build) -> Path:
    """A run of an agent that sends JSON observations and, at its third request, the same call and result
    again word for word (no call ids: text-mode observations are user messages)."""
    folder = build.write_folder(tmp_path / "r", [build.run("baseline", "task-0", 0, True, turns=3)],
                                build.manifest(["baseline"]), transcripts=False)
    plain = transcript_path(folder, "baseline", "task-0", 0).with_suffix("")
    writer = TranscriptWriter(plain, TranscriptHeader(run_id=RUN, strategy="baseline", task_id="task-0", repeat=0,
                                                      seed=1))
    system, task = {"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Fix it."}
    asked = {"role": "assistant", "content": "Run the tests.\n```bash\npytest\n```"}
    seen = {"role": "user", "content": OBSERVATION}
    opening = [system, task]
    writer.turn(_turn(writer, 0, opening, 7_850, {"system": 10, "task": 20}, "c0", OBSERVATION))
    writer.turn(_turn(writer, 1, [*opening, asked, seen], 7_950, {"system": 10, "task": 20, "history": 100},
                      reply=REPLY))
    writer.turn(_turn(writer, 2, [*opening, asked, seen, asked, seen], 8_050,
                      {"system": 10, "task": 20, "history": 200}))
    writer.end(TranscriptEnd(stop="finished", turns=3))
    transcript_path(folder, "baseline", "task-0", 0).write_bytes(compress_transcript(plain.read_bytes()))
    plain.unlink()
    return folder


def show(folder: Path) -> str:
    result = CliRunner().invoke(cli, ["show", str(folder), RUN, "--full"])
    assert result.exit_code == 0, result.output
    return result.output


def test_a_json_observation_is_shown_as_the_text_it_holds(tmp_path, build):
    text = show(mini_run(tmp_path, build))
    assert "\\n" not in text and "\\u003e" not in text and '\\"' not in text
    assert f"returncode: 1\noutput:\n{OUTPUT}\n" in text
    assert "40 tokens (a JSON object, shown one field per line, its strings unescaped)" in text


def test_readable_leaves_other_text_as_it_is():
    for text in ("plain output\nline 2", '{"nested": {"a": 1}}', "{not json}", "[1, 2]", "{}"):
        assert readable(text) == (text, False)
    assert readable('{"returncode": 0, "output": "one line"}') == ("returncode: 0\noutput: one line", True)


def test_the_context_line_counts_the_whole_prompt_tool_schemas_included(tmp_path, build):
    text = show(mini_run(tmp_path, build))
    assert ("Context 7,850 tokens, the whole prompt as counted (49.1% of the window): system 10, task 20; "
            "tool schemas and request overhead 7,820.") in text
    assert "history 200; tool schemas and request overhead 7,820." in text


def test_messages_sent_again_word_for_word_count_as_new_not_as_kept(tmp_path, build):
    text = show(mini_run(tmp_path, build))
    assert "- 4 messages: 2 as in the previous request, 2 new\n" in text
    assert "- 6 messages: 4 as in the previous request, 2 new (2 of them word for word a message sent before)" in text
    assert "0 new" not in text
    assert text.count("- new, as sent before: ") == 2


def test_a_reply_is_shown_as_written(tmp_path, build):
    text = show(mini_run(tmp_path, build))
    assert '**Model**: "Run the tests." → `bash({"command": "pytest"})`' in text
    assert f"**Model** → no tool call; its text ({len(REPLY)} characters):\n\n````text\n{REPLY}\n````" in text
