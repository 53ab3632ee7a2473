"""`ctxbench gateway` in the Anthropic Messages and OpenAI Responses formats, as Claude Code and Codex CLI
call it: small agents on the official `anthropic` and `openai` SDKs, streamed, run the shell commands
the simulator answers with in a real workspace until it stops calling tools, and the task is resolved;
every request is a transcript turn with the strategy's ledger and the usage the client was given."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import anthropic
import openai
import pytest

from ctxbench.harness.records import TranscriptTurn
from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path
from ctxbench.harness.records.transcript import read_transcript
from ctxbench.harness.environments.workspace import Workspace

BASH = {"name": "Bash", "description": "Run a shell command.",
        "input_schema": {"type": "object", "properties": {"command": {"type": "string"},
                                                          "description": {"type": "string"}}, "required": ["command"]}}
EXEC_COMMAND = {"type": "function", "name": "exec_command", "description": "Runs a command.",
                "parameters": {"type": "object", "properties": {"cmd": {"type": "string"},
                                                                "yield_time_ms": {"type": "number"}},
                               "required": ["cmd"]}}


@pytest.fixture(scope="module")
def smoke():
    return load_taskset(resolve_taskset_path("smoke"))


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    """`ctxbench gateway` (observation masking, the simulator) on a free port: its root URL and transcripts."""
    transcripts = tmp_path_factory.mktemp("gw") / "transcripts"
    process = subprocess.Popen([sys.executable, "-m", "ctxbench", "gateway", "--strategy", "observation_masking",
                                "--params", "{keep_recent: 2}", "--provider", "sim", "--taskset", "smoke",
                                "--set", "model.context_window=64000", "--set", "model.max_output_tokens=2048",
                                "--port", "0", "--transcripts", str(transcripts)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = process.stdout.readline()
        url = re.search(r"listening on (\S+)/v1", line).group(1)
        yield url, transcripts
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(30)


def run(command: str, cwd: Path) -> tuple[int, str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


def claude_code_output(code: int, output: str) -> str:
    """A command's result as Claude Code's Bash tool reports it."""
    if code:
        return f"Exit code {code}\n{output}"
    return output or "(Bash completed with no output)"


def codex_output(code: int, output: str) -> str:
    """A command's result as Codex CLI's exec_command reports it."""
    return (f"Chunk ID: 1f2e3d\nWall time: 0.1234 seconds\nProcess exited with code {code}\n"
            f"Original token count: {len(output) // 4}\nOutput:\n{output}")


def turns_of(transcripts: Path, session: str) -> list[TranscriptTurn]:
    (path,) = [p for p in transcripts.rglob("*.jsonl") if p.stem == session]
    return [r for r in read_transcript(path) if isinstance(r, TranscriptTurn)]


def test_a_streaming_agent_on_the_anthropic_sdk_fixes_the_bug_through_the_gateway(gateway, smoke):
    url, transcripts = gateway
    task = smoke.tasks[1]
    client = anthropic.Anthropic(base_url=url, api_key="any", max_retries=0)
    messages: list[dict] = [{"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>The working folder is a git repository.</system-reminder>"},
        {"type": "text", "text": task.problem_statement, "cache_control": {"type": "ephemeral"}}]}]
    ws = Workspace.create(task, sys.executable)
    replies = []
    try:
        for _ in range(30):
            with client.messages.stream(model="sim-coder", max_tokens=2048, messages=messages, tools=[BASH],
                                        system=[{"type": "text", "text": "You are Claude Code.",
                                                 "cache_control": {"type": "ephemeral"}}],
                                        metadata={"user_id": json.dumps({"session_id": "claude-session"})}) as stream:
                reply = stream.get_final_message()
            replies.append(reply)
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in reply.content]})
            calls = [b for b in reply.content if b.type == "tool_use"]
            if not calls:
                break
            assert reply.stop_reason == "tool_use" and [b.name for b in calls] == ["Bash"]
            results = []
            for call in calls:
                code, output = run(call.input["command"], ws.root)
                results.append({"type": "tool_result", "tool_use_id": call.id, "is_error": bool(code),
                                "content": claude_code_output(code, output)})
            messages.append({"role": "user", "content": results})
        resolved = ws.evaluate(60).resolved
    finally:
        ws.cleanup()
    assert resolved and replies[-1].stop_reason == "end_turn" and len(replies) >= 3
    turns = turns_of(transcripts, "claude-session")
    assert [t.turn for t in turns] == list(range(len(replies)))
    assert [t.usage.prompt_tokens for t in turns] == [
        r.usage.input_tokens + r.usage.cache_read_input_tokens + r.usage.cache_creation_input_tokens for r in replies]
    assert [t.usage.completion_tokens for t in turns] == [r.usage.output_tokens for r in replies]
    assert any(r.usage.cache_read_input_tokens > 0 for r in replies)  # the simulator's prompt cache, reported
    assert [json.loads(c.arguments)["command"] for t in turns for c in t.tool_calls] == [
        b.input["command"] for r in replies for b in r.content if b.type == "tool_use"]
    assert any(a.kind == "masked" for t in turns for a in t.ledger.actions)


def test_a_streaming_agent_on_the_openai_responses_api_fixes_the_bug_through_the_gateway(gateway, smoke):
    url, transcripts = gateway
    task = smoke.tasks[2]
    client = openai.OpenAI(base_url=f"{url}/v1", api_key="any", max_retries=0)
    items: list[dict] = [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "You are Codex."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context/>"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": task.problem_statement}]}]
    ws = Workspace.create(task, sys.executable)
    replies = []
    try:
        for _ in range(30):
            with client.responses.stream(model="sim-coder", input=items, tools=[EXEC_COMMAND],
                                         prompt_cache_key="codex-session") as stream:
                reply = stream.get_final_response()
            replies.append(reply)
            items += [item.model_dump(exclude_none=True) for item in reply.output]
            calls = [item for item in reply.output if item.type == "function_call"]
            if not calls:
                break
            for call in calls:
                arguments = json.loads(call.arguments)
                assert call.name == "exec_command" and arguments["yield_time_ms"] == 30_000
                items.append({"type": "function_call_output", "call_id": call.call_id,
                              "output": codex_output(*run(arguments["cmd"], ws.root))})
        resolved = ws.evaluate(60).resolved
    finally:
        ws.cleanup()
    assert resolved and len(replies) >= 3
    assert replies[-1].output_text and not [i for i in replies[-1].output if i.type == "function_call"]
    turns = turns_of(transcripts, "codex-session")
    assert [t.turn for t in turns] == list(range(len(replies)))
    assert [(t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cached_tokens) for t in turns] == [
        (r.usage.input_tokens, r.usage.output_tokens, r.usage.input_tokens_details.cached_tokens) for r in replies]
    assert all(t.ledger.components.get("system", 0) > 0 for t in turns)


def test_plain_requests_get_a_whole_message_and_a_whole_response(gateway, smoke):
    url, _ = gateway
    statement = smoke.tasks[1].problem_statement
    message = anthropic.Anthropic(base_url=url, api_key="any", max_retries=0).messages.create(
        model="sim-coder", max_tokens=1024, messages=[{"role": "user", "content": statement}], tools=[BASH])
    (call,) = [b for b in message.content if b.type == "tool_use"]
    assert message.stop_reason == "tool_use" and call.name == "Bash" and call.input["command"]
    assert message.usage.input_tokens + message.usage.cache_read_input_tokens > 0 and message.usage.output_tokens > 0
    response = openai.OpenAI(base_url=f"{url}/v1", api_key="any", max_retries=0).responses.create(
        model="sim-coder", instructions="Fix the bug.", input=statement, tools=[EXEC_COMMAND])
    (function_call,) = [i for i in response.output if i.type == "function_call"]
    assert response.status == "completed" and json.loads(function_call.arguments)["cmd"]
    assert response.usage.input_tokens > 0 and response.usage.output_tokens > 0


def post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.parametrize("route, body, shape", [
    ("/v1/messages", {"model": "sim-coder", "messages": "fix it"}, "anthropic"),
    ("/v1/messages", {"model": "sim-coder", "input": [{"role": "user", "content": "fix it"}]}, "anthropic"),
    ("/v1/messages", b"{not json", "anthropic"),
    ("/v1/responses", {"model": "sim-coder", "messages": [{"role": "user", "content": "fix it"}]}, "openai"),
    ("/v1/responses", {"model": "sim-coder", "input": 42}, "openai"),
    ("/v1/chat/completions", {"model": "sim-coder", "input": "fix it"}, "openai"),
])
def test_a_request_in_none_of_the_formats_gets_the_error_of_the_format_its_route_claims(tmp_path, route, body, shape):
    transcripts = tmp_path / "transcripts"
    process = subprocess.Popen([sys.executable, "-m", "ctxbench", "gateway", "--strategy", "baseline", "--provider",
                                "sim", "--taskset", "smoke", "--port", "0", "--transcripts", str(transcripts)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = re.search(r"listening on (\S+)/v1", process.stdout.readline()).group(1)
        status, error = post(url + route, body if isinstance(body, bytes) else json.dumps(body).encode())
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(30)
    assert status == 400
    if shape == "anthropic":
        assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error" and error["error"]["message"]
    else:
        assert set(error["error"]) == {"message", "type", "param", "code"} and error["error"]["message"]
    assert not transcripts.exists() or not any(transcripts.rglob("*"))  # nothing recorded


def test_an_anthropic_upstream_gets_the_clients_cache_marks_on_the_messages_the_strategy_kept(smoke):
    """Claude Code through a gateway in front of an Anthropic endpoint (here ctxbench's simulator behind the
    Messages wire, recording what it receives): the blocks the agent marked with `cache_control` arrive marked."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from ctxbench.harness.endpoints.server import make_server, respond
    from ctxbench.harness.config import ModelConfig
    from ctxbench.harness.endpoints.gateway import Gateway
    from ctxbench.harness.endpoints.serve_sim import SimBackend
    from ctxbench.harness.wire.messages import MESSAGES

    received: list[dict] = []
    simulator = SimBackend(smoke, ModelConfig(context_window=64000))

    class Upstream(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            received.append(body)
            reply = respond(simulator, MESSAGES, body)
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.data)))
            self.end_headers()
            self.wfile.write(reply.data)

        def log_message(self, *args) -> None:
            pass

    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    model = ModelConfig(provider="anthropic", base_url=f"http://127.0.0.1:{upstream.server_address[1]}",
                        context_window=64000)
    gateway = make_server(Gateway("baseline", None, model), "127.0.0.1", 0)
    for server in (upstream, gateway):
        threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = anthropic.Anthropic(base_url=f"http://127.0.0.1:{gateway.server_address[1]}", api_key="any",
                                     max_retries=0)
        marked = {"type": "ephemeral"}
        first = client.messages.create(
            model="sim-coder", max_tokens=1024, tools=[BASH],
            system=[{"type": "text", "text": "You are Claude Code.", "cache_control": marked}],
            messages=[{"role": "user", "content": [{"type": "text", "text": smoke.tasks[1].problem_statement}]}])
        (call,) = [b for b in first.content if b.type == "tool_use"]
        client.messages.create(
            model="sim-coder", max_tokens=1024, tools=[BASH],
            system=[{"type": "text", "text": "You are Claude Code.", "cache_control": marked}],
            messages=[{"role": "user", "content": [{"type": "text", "text": smoke.tasks[1].problem_statement}]},
                      {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in first.content]},
                      {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "ok",
                                                    "cache_control": marked}]}])
    finally:
        for server in (gateway, upstream):
            server.shutdown()
            server.server_close()
    assert len(received) == 2
    assert received[0]["system"] == [{"type": "text", "text": "You are Claude Code.", "cache_control": marked}]
    assert "cache_control" not in json.dumps(received[0]["messages"])  # the agent marked no message there
    (result,) = [b for b in received[1]["messages"][-1]["content"] if b["type"] == "tool_result"]
    assert result["cache_control"] == marked and result["tool_use_id"] == call.id
    assert [t["name"] for t in received[1]["tools"]] == ["Bash"]
