"""`ctxbench gateway` as a user starts it: a process on a free port, answering the `openai` SDK."""

from __future__ import annotations

import re
import signal
import socket
import subprocess
import sys

import openai
import pytest

from ctxbench.harness.records import TranscriptTurn
from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.harness.records.transcript import read_transcript


def gateway(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ctxbench", "gateway", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_the_gateway_answers_the_openai_sdk_with_one_transcript_turn_per_request(tmp_path):
    task = load_taskset(resolve_taskset_path("smoke")).tasks[0]
    process = gateway("--strategy", "observation_masking", "--provider", "sim", "--taskset", "smoke",
                      "--port", "0", "--transcripts", str(tmp_path / "gw"))
    try:
        line = process.stdout.readline()
        url = re.search(r"listening on (\S+)", line).group(1)
        client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
        messages = [{"role": "system", "content": "Fix the bug."}, {"role": "user", "content": task.problem_statement}]
        for _ in range(2):
            reply = client.chat.completions.create(model="sim-coder", messages=messages, tools=TOOL_SCHEMAS, seed=1)
            call = reply.choices[0].message.tool_calls[0]
            messages += [reply.choices[0].message.model_dump(exclude_none=True),
                         {"role": "tool", "tool_call_id": call.id, "content": "(no output)"}]
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert "stand-in for a model" in err
    assert process.returncode == 130 and err.rstrip().endswith("error: interrupted: the server stopped")
    (path,) = (tmp_path / "gw" / "observation_masking").glob("*.jsonl")
    turns = [r for r in read_transcript(path) if isinstance(r, TranscriptTurn)]
    assert [t.turn for t in turns] == [0, 1] and [t.request_messages for t in turns] == [2, 4]


@pytest.mark.parametrize("args, says", [
    (["--strategy", "observation_maskin", "--provider", "sim", "--taskset", "smoke"], "did you mean 'observation_masking'"),
    (["--strategy", "trimmer", "--params", "[1, 2]", "--provider", "sim", "--taskset", "smoke"], "--params"),
    (["--strategy", "baseline", "--provider", "sim"], "--taskset"),
    (["--strategy", "baseline", "--provider", "sim", "--taskset", "smoke", "--set", "repeats=2"], "only model.* keys"),
    (["--strategy", "baseline", "--provider", "sim", "--taskset", "no-such-taskset"], "no-such-taskset"),
])
def test_a_gateway_that_cannot_serve_says_why_in_one_line(args, says):
    process = gateway(*args, "--port", "0")
    out, err = process.communicate(timeout=120)
    assert process.returncode == 2, err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: ") and says in err
    assert out == ""


def test_a_taken_port_is_one_line_and_a_non_empty_transcripts_folder_is_refused(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        process = gateway("--strategy", "baseline", "--provider", "sim", "--taskset", "smoke", "--port", port)
        _, err = process.communicate(timeout=120)
    assert process.returncode == 2 and err.startswith(f"error: cannot bind 127.0.0.1:{port}") and err.count("\n") == 1
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "x.jsonl").write_text("{}\n")
    process = gateway("--strategy", "baseline", "--provider", "sim", "--taskset", "smoke", "--port", "0",
                      "--transcripts", str(tmp_path / "old"))
    _, err = process.communicate(timeout=120)
    assert process.returncode == 2 and "not an empty folder" in err
    assert [p.name for p in (tmp_path / "old").iterdir()] == ["x.jsonl"]
