"""The gateway tells conversations apart by their content: many clients interleaved, replies lost and
asked for again, clients named alike."""

from __future__ import annotations

import json
import socket
import threading
import time
from pathlib import Path

import openai
import pytest
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.config import load_config
from ctxbench.harness.endpoints.gateway import Gateway
from ctxbench.harness.endpoints.server import make_server
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.harness.records import TranscriptHeader, TranscriptTurn
from ctxbench.harness.records.transcript import read_transcript
from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path

ROOT = Path(__file__).resolve().parents[2]
TURNS, PER_TASK, LOST = 5, 6, 4


@pytest.fixture
def served(tmp_path):
    """A gateway on a free loopback port: its URL and transcript folder."""
    smoke = load_taskset(resolve_taskset_path("smoke"))
    model = load_config(ROOT / "experiments" / "quickstart.yaml").model
    server = make_server(Gateway("observation_masking", {"keep_recent": 1}, model, smoke, tmp_path / "gw"),
                         "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield smoke, server.server_address[1], tmp_path / "gw"
    server.shutdown()
    server.server_close()


def transcripts(folder: Path, turns: int | None = None) -> dict[str, tuple[TranscriptHeader, list[TranscriptTurn]]]:
    """The transcripts by file name; with `turns`, once they hold that many in all (or 30 s have passed)."""
    deadline = time.monotonic() + 30
    while True:
        found = _read_all(folder)
        if turns is None or sum(len(t) for _, t in found.values()) >= turns or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


def _read_all(folder: Path) -> dict[str, tuple[TranscriptHeader, list[TranscriptTurn]]]:
    out = {}
    for path in folder.rglob("*.jsonl"):
        records = list(read_transcript(path))
        out[path.name] = (records[0], [r for r in records if isinstance(r, TranscriptTurn)])
    return out


def lose_reply(port: int, body: dict) -> None:
    """Sends a streamed request and goes away before the reply: it waits until the gateway closes."""
    data = json.dumps({**body, "stream": True}).encode()
    with socket.create_connection(("127.0.0.1", port), timeout=60) as conn:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_CORK, 1)  # the request and its end arrive together
        conn.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\n"
                     + f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
        conn.shutdown(socket.SHUT_WR)
        got = b""
        while chunk := conn.recv(65536):
            got += chunk
    assert got == b"", got[:200]  # nothing was sent to a client that had gone


def test_thirty_interleaved_clients_each_get_their_own_transcript_and_a_resent_request_is_no_new_turn(served):
    smoke, port, folder = served
    url = f"http://127.0.0.1:{port}/v1"
    tasks = smoke.tasks[:5]
    clients = [(tasks[i // PER_TASK], 100 + i) for i in range(len(tasks) * PER_TASK)]
    losers = {100 + PER_TASK * t for t in range(LOST)}  # one client of each of four tasks loses a reply
    barrier = threading.Barrier(len(clients))
    got: dict[int, list[dict]] = {}
    errors: list[BaseException] = []

    def client(task, seed: int) -> None:
        try:
            sdk = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
            messages = [{"role": "system", "content": "Fix the bug."},
                        {"role": "user", "content": task.problem_statement}]
            replies = got.setdefault(seed, [])
            for turn in range(TURNS):
                barrier.wait(timeout=120)  # every client's turn n is in flight at once
                request = dict(model="sim-coder", messages=messages, tools=TOOL_SCHEMAS, seed=seed)
                if seed in losers and turn == 2:
                    lose_reply(port, request)
                reply = sdk.chat.completions.create(**request).choices[0].message.model_dump(exclude_none=True)
                replies.append(reply)
                messages = messages + [reply] + [{"role": "tool", "tool_call_id": c["id"], "content": "(no output)"}
                                                 for c in reply.get("tool_calls") or []]
                if not reply.get("tool_calls"):
                    messages.append({"role": "user", "content": "Go on."})
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=client, args=c) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors, errors[0]

    found = transcripts(folder, len(clients) * TURNS)
    assert len(found) == len(clients)
    by_seed = {header.seed: (header, turns) for header, turns in found.values()}
    assert sorted(by_seed) == [seed for _, seed in clients]
    for task, seed in clients:
        header, turns = by_seed[seed]
        assert header.task_id == task.id
        assert [t.turn for t in turns] == list(range(TURNS)), (seed, [t.turn for t in turns])
        assert [[c.id for c in t.tool_calls] for t in turns] == \
            [[c["id"] for c in r.get("tool_calls") or []] for r in got[seed]]
        assert [t.delivered for t in turns] == [turn != 2 or seed not in losers for turn in range(TURNS)]
    assert sum(len(turns) for _, turns in found.values()) == len(clients) * TURNS  # no duplicate turn


def test_a_resent_first_request_is_answered_from_the_record(served):
    smoke, port, folder = served
    request = dict(model="sim-coder", messages=[{"role": "user", "content": smoke.tasks[0].problem_statement}],
                   tools=TOOL_SCHEMAS, seed=7)
    lose_reply(port, request)
    sdk = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
    reply = sdk.chat.completions.create(**request).choices[0].message
    ((_, turns),) = transcripts(folder, 1).values()
    assert len(turns) == 1 and not turns[0].delivered
    assert [c.id for c in turns[0].tool_calls] == [c.id for c in reply.tool_calls]


def test_conversations_named_alike_stay_apart(served):
    smoke, port, folder = served
    sdk = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
    for name in ("run/1", "run_1", "run/1"):
        sdk.chat.completions.create(model="sim-coder", user=name, tools=TOOL_SCHEMAS,
                                    messages=[{"role": "user", "content": smoke.tasks[0].problem_statement}])
    found = transcripts(folder, 3)
    assert sorted(found) == ["run_1-2.jsonl", "run_1.jsonl"]
    assert sorted(header.run_id for header, _ in found.values()) == ["run/1", "run_1"]


def test_ctxbench_show_prints_a_gateway_conversation_turn_by_turn(served):
    smoke, port, folder = served
    lose_reply(port, dict(model="sim-coder", messages=[{"role": "user", "content": smoke.tasks[1].problem_statement}],
                          tools=TOOL_SCHEMAS, seed=5))
    sdk = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
    messages = [{"role": "user", "content": smoke.tasks[0].problem_statement}]
    for _ in range(2):
        reply = sdk.chat.completions.create(model="sim-coder", user="run/1", tools=TOOL_SCHEMAS, messages=messages)
        message = reply.choices[0].message.model_dump(exclude_none=True)
        messages += [message, *({"role": "tool", "tool_call_id": c["id"], "content": "(no output)"}
                                for c in message.get("tool_calls") or [])]
    transcripts(folder, 3)
    listed = CliRunner().invoke(cli, ["show", str(folder)])
    assert listed.exit_code == 0, listed.output
    assert f"observation_masking/run_1  task {smoke.tasks[0].id}  2 turns" in listed.output
    assert "2 gateway conversations" in listed.output
    shown = CliRunner().invoke(cli, ["show", str(folder), "observation_masking/run_1"])
    assert shown.exit_code == 0, shown.output
    assert "# Run run/1" in shown.output and "A gateway conversation" in shown.output
    assert shown.output.count("## Turn ") == 2 and "no end record" not in shown.output
    (lost,) = [k for k in transcripts(folder) if k != "run_1.jsonl"]
    shown = CliRunner().invoke(cli, ["show", str(folder), f"observation_masking/{lost.removesuffix('.jsonl')}"])
    assert "not delivered" in shown.output
    missing = CliRunner().invoke(cli, ["show", str(folder), "observation_masking/run_2"])
    assert missing.exit_code == 2 and "did you mean" in missing.output
