"""`ctxbench gateway` in the Gemini API format, as Gemini CLI calls it: an agent on the official
`google-genai` SDK, streamed, runs the shell commands the simulator answers with in a real workspace
until it stops calling tools, and the task is resolved; a plain request with ctxbench's own tools and its
function response are two turns of one conversation; every request is a transcript turn with the usage
the client was given, and a malformed one gets Google's error shape and records nothing. Then the
reading and writing of the format itself."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from google import genai
from google.genai import errors, types

from ctxbench.harness.config import ModelConfig
from ctxbench.harness.endpoints.serve_sim import SimBackend
from ctxbench.harness.endpoints.server import make_server, make_unix_server
from ctxbench.harness.environments.workspace import Workspace
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.harness.protocols import Completion
from ctxbench.harness.records import ToolCall, TranscriptMessage, TranscriptTurn, Usage
from ctxbench.harness.records.transcript import read_transcript
from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path
from ctxbench.harness.wire import GEMINI, Refusal, wire_for
from ctxbench.harness.wire.gemini import TEXT_CHUNK_CHARS, json_schema, stream_events

RUN_SHELL_COMMAND = types.FunctionDeclaration(
    name="run_shell_command", description="Runs a shell command.",
    parameters=types.Schema(type="OBJECT", required=["command"], properties={
        "command": types.Schema(type="STRING", description="The command."),
        "dir_path": types.Schema(type="STRING", nullable=True)}))
"""Gemini CLI's shell tool, declared in Gemini's schema dialect."""
OWN_TOOLS = types.Tool(function_declarations=[
    types.FunctionDeclaration(name=t["function"]["name"], description=t["function"]["description"],
                              parameters_json_schema=t["function"]["parameters"]) for t in TOOL_SCHEMAS])
"""ctxbench's own tools, declared with JSON schema."""
NO_AUTOMATIC_CALLS = types.AutomaticFunctionCallingConfig(disable=True)


@pytest.fixture(scope="module")
def smoke():
    return load_taskset(resolve_taskset_path("smoke"))


def start_gateway(transcripts: Path) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([sys.executable, "-m", "ctxbench", "gateway", "--strategy", "observation_masking",
                                "--params", "{keep_recent: 2}", "--provider", "sim", "--taskset", "smoke",
                                "--set", "model.context_window=64000", "--set", "model.max_output_tokens=2048",
                                "--port", "0", "--transcripts", str(transcripts)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return process, re.search(r"listening on (\S+)/v1", process.stdout.readline()).group(1)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    """`ctxbench gateway` (observation masking, the simulator) on a free port: its root URL and transcripts."""
    transcripts = tmp_path_factory.mktemp("gw") / "transcripts"
    process, url = start_gateway(transcripts)
    try:
        yield url, transcripts
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(30)


def client(url: str, version: str = "v1beta") -> genai.Client:
    return genai.Client(api_key="any", http_options=types.HttpOptions(base_url=url, api_version=version))


def run(command: str, cwd: Path) -> tuple[int, str]:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout + done.stderr


def turns_by_opening(transcripts: Path, statement: str) -> list[TranscriptTurn]:
    """The turns of the one conversation whose task is `statement`."""
    (records,) = [r for r in map(list, map(read_transcript, transcripts.rglob("*.jsonl")))
                  if any(isinstance(m, TranscriptMessage) and statement in str(m.message.get("content")) for m in r)]
    return [r for r in records if isinstance(r, TranscriptTurn)]


def calls_of(response: types.GenerateContentResponse) -> list[types.FunctionCall]:
    return [p.function_call for p in response.candidates[0].content.parts if p.function_call]


def test_a_streaming_agent_on_the_google_genai_sdk_fixes_the_bug_through_the_gateway(gateway, smoke):
    url, transcripts = gateway
    task = smoke.tasks[1]
    config = types.GenerateContentConfig(system_instruction="You are Gemini CLI.\n" * 300, tools=[
        types.Tool(function_declarations=[RUN_SHELL_COMMAND])], automatic_function_calling=NO_AUTOMATIC_CALLS)
    contents = [types.Content(role="user", parts=[types.Part(text="<session_context>a git repository"
                                                                  "</session_context>"),
                                                  types.Part(text=task.problem_statement)])]
    gemini = client(url)
    ws = Workspace.create(task, sys.executable)
    replies: list[types.GenerateContentResponse] = []
    try:
        for _ in range(30):
            chunks = list(gemini.models.generate_content_stream(model="sim-coder", contents=contents, config=config))
            parts = [p for c in chunks for p in c.candidates[0].content.parts]
            replies.append(chunks[-1])
            contents.append(types.Content(role="model", parts=parts))
            calls = [p.function_call for p in parts if p.function_call]
            if not calls:  # it ends the run on a reply that calls no tool, as Gemini CLI's runs end
                break
            assert [c.name for c in calls] == ["run_shell_command"] and chunks[-1].candidates[0].finish_reason == "STOP"
            results = []
            for call in calls:  # answered as Gemini CLI does: by id and name, the output under `output`
                code, output = run(call.args["command"], ws.root)
                results.append(types.Part(function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response={"output": output or "(empty)"})))
            contents.append(types.Content(role="user", parts=results))
        resolved = ws.evaluate(60).resolved
    finally:
        ws.cleanup()
    assert resolved and len(replies) >= 3 and calls == [] and contents[-1].parts[0].text
    turns = turns_by_opening(transcripts, task.problem_statement)
    assert [t.turn for t in turns] == list(range(len(replies)))  # one conversation, a turn per request
    assert [(t.usage.prompt_tokens, t.usage.completion_tokens, t.usage.cached_tokens) for t in turns] == [
        (r.usage_metadata.prompt_token_count, r.usage_metadata.candidates_token_count,
         r.usage_metadata.cached_content_token_count) for r in replies]
    assert all(r.usage_metadata.total_token_count == r.usage_metadata.prompt_token_count
               + r.usage_metadata.candidates_token_count for r in replies)
    assert any(r.usage_metadata.cached_content_token_count > 0 for r in replies)  # the simulator's prompt cache
    sent = [p.function_call for c in contents if c.role == "model" for p in c.parts if p.function_call]
    assert [(c.id, json.loads(c.arguments)) for t in turns for c in t.tool_calls] == [(c.id, c.args) for c in sent]
    assert all(t.ledger.components.get("system", 0) > 0 for t in turns)
    assert any(a.kind == "masked" for t in turns for a in t.ledger.actions)


def test_a_plain_request_and_its_function_response_are_two_turns_of_one_conversation(gateway, smoke):
    url, transcripts = gateway
    task = smoke.tasks[0]
    config = types.GenerateContentConfig(system_instruction="Fix the bug.", tools=[OWN_TOOLS], seed=1,
                                         max_output_tokens=1024, automatic_function_calling=NO_AUTOMATIC_CALLS)
    contents = [types.Content(role="user", parts=[types.Part(text=task.problem_statement)])]
    gemini, replies = client(url, "v1"), []
    for _ in range(2):
        reply = gemini.models.generate_content(model="sim-coder", contents=contents, config=config)
        (call,) = calls_of(reply)
        assert call.name in {t["function"]["name"] for t in TOOL_SCHEMAS} and call.id
        replies.append(reply)
        # as the SDK's own helper writes a result: no id, paired with its call by name and order
        model = types.Content(role="model", parts=[types.Part(function_call=types.FunctionCall(name=call.name,
                                                                                               args=call.args))])
        contents += [model, types.Content(role="user", parts=[
            types.Part.from_function_response(name=call.name, response={"output": "(no output)"})])]
    turns = turns_by_opening(transcripts, task.problem_statement)
    assert [t.turn for t in turns] == [0, 1] and [t.request_messages for t in turns] == [2, 4]
    assert [(t.usage.prompt_tokens, t.usage.completion_tokens) for t in turns] == [
        (r.usage_metadata.prompt_token_count, r.usage_metadata.candidates_token_count) for r in replies]
    assert [r.candidates[0].finish_reason for r in replies] == ["STOP", "STOP"]
    assert [r.model_version for r in replies] == ["sim-coder", "sim-coder"] and all(r.response_id for r in replies)


def test_the_model_is_listed_and_described_as_gemini_clients_ask(gateway):
    url, _ = gateway
    for version in ("v1beta", "v1"):
        gemini = client(url, version)
        assert [m.name for m in gemini.models.list()] == ["models/sim-coder"]
        model = gemini.models.get(model="sim-coder")
        assert model.name == "models/sim-coder" and "generateContent" in model.supported_actions
    gemini = client(url)
    with pytest.raises(errors.ClientError) as refused:
        gemini.models.get(model="gemini-2.5-pro")
    assert refused.value.code == 404 and refused.value.status == "NOT_FOUND"
    with pytest.raises(errors.ClientError) as refused:
        gemini.models.generate_content(model="gemini-2.5-pro", contents="hi")
    assert refused.value.code == 404 and refused.value.status == "NOT_FOUND" and "sim-coder" in refused.value.message


@pytest.fixture(scope="module")
def idle_gateway(tmp_path_factory):
    """A gateway that is sent only malformed requests: its root URL and (empty) transcripts folder."""
    transcripts = tmp_path_factory.mktemp("idle") / "transcripts"
    process, url = start_gateway(transcripts)
    try:
        yield url, transcripts
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(30)


def post(url: str, body: bytes) -> tuple[int, dict]:
    request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


GENERATE = "/v1beta/models/sim-coder:generateContent"
HELLO = [{"role": "user", "parts": [{"text": "hello"}]}]


@pytest.mark.parametrize("route, body, status, says", [
    (GENERATE, b"{not json", 400, "not valid JSON"),
    (GENERATE, {"model": "sim-coder", "messages": [{"role": "user", "content": "fix it"}]}, 400, "contents"),
    (GENERATE, {"contents": "fix it"}, 400, "contents"),
    (GENERATE, {"contents": []}, 400, "contents"),
    (GENERATE, {"contents": [{"role": "assistant", "parts": [{"text": "hi"}]}]}, 400, "role"),
    (GENERATE, {"contents": [{"role": "user", "parts": []}]}, 400, "parts"),
    (GENERATE, {"contents": [{"role": "user", "parts": [{"text": 42}]}]}, 400, "text"),
    (GENERATE, {"contents": [{"role": "model", "parts": [{"functionCall": {"args": {}}}]}]}, 400, "functionCall"),
    (GENERATE, {"contents": HELLO, "generationConfig": {"maxOutputTokens": "many"}}, 400, "maxOutputTokens"),
    (GENERATE, {"contents": HELLO, "generationConfig": {"temperature": "hot"}}, 400, "temperature"),
    (GENERATE, {"contents": HELLO, "tools": [{"functionDeclarations": [{"description": "no name"}]}]}, 400, "tools"),
    (GENERATE, {"contents": HELLO, "systemInstruction": 42}, 400, "systemInstruction"),
    ("/v1beta/models/sim-coder:streamGenerateContent", {"contents": HELLO}, 400, "alt=sse"),
    ("/v1beta/models/gemini-2.5-pro:generateContent", {"contents": HELLO}, 404, "sim-coder"),
    ("/v1beta/models/sim-coder:countTokens", {"contents": HELLO}, 404, "no route"),
])
def test_a_malformed_request_gets_google_s_error_shape_and_nothing_is_recorded(idle_gateway, route, body, status,
                                                                               says):
    url, transcripts = idle_gateway
    code, error = post(url + route, body if isinstance(body, bytes) else json.dumps(body).encode())
    statuses = {400: "INVALID_ARGUMENT", 404: "NOT_FOUND"}
    assert code == status and set(error) == {"error"} and set(error["error"]) == {"code", "message", "status"}
    assert error["error"]["code"] == status and error["error"]["status"] == statuses[status]
    assert says in error["error"]["message"]
    assert not transcripts.exists() or not any(transcripts.rglob("*"))  # nothing recorded


def unix_request(path: Path, head: str, body: bytes = b"") -> tuple[int, dict]:
    with socket.socket(socket.AF_UNIX) as conn:
        conn.settimeout(30)
        conn.connect(str(path))
        conn.sendall(head.encode() + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
        data = b""
        while chunk := conn.recv(65536):
            data += chunk
    header, _, rest = data.partition(b"\r\n\r\n")
    return int(header.split()[1]), json.loads(rest)


def test_a_run_s_route_takes_its_token_where_gemini_clients_send_a_key(tmp_path, smoke):
    socket_path = tmp_path / "route.sock"
    server = make_unix_server(SimBackend(smoke, ModelConfig()), socket_path, token="run-token")
    threading.Thread(target=server.serve_forever, daemon=True).start()
    body = json.dumps({"contents": [{"role": "user", "parts": [{"text": smoke.tasks[0].problem_statement}]}],
                       "tools": [OWN_TOOLS.model_dump(mode="json", by_alias=True, exclude_none=True)]}).encode()
    try:
        answers = {how: unix_request(socket_path, f"POST {target} HTTP/1.1\r\nHost: x\r\n{header}", body)
                   for how, target, header in [
                       ("x-goog-api-key", GENERATE, "x-goog-api-key: run-token\r\n"),
                       ("?key=", GENERATE + "?key=run-token", ""),
                       ("a wrong key", GENERATE, "x-goog-api-key: another\r\n"),
                       ("no key", GENERATE + "?key=", "")]}
        listed = unix_request(socket_path, "GET /v1beta/models HTTP/1.1\r\nHost: x\r\n")
        unlisted = unix_request(socket_path, "GET /v1beta/models HTTP/1.1\r\nHost: x\r\nx-goog-api-key: no\r\n")
        listed_by_query = unix_request(socket_path, "GET /v1beta/models/sim-coder?key=run-token HTTP/1.1\r\nHost: x\r\n")
    finally:
        server.shutdown()
        server.server_close()
    for how in ("x-goog-api-key", "?key="):
        status, reply = answers[how]
        assert status == 200 and reply["candidates"][0]["content"]["parts"], how
    for how in ("a wrong key", "no key"):
        status, reply = answers[how]
        assert status == 401 and reply["error"]["status"] == "UNAUTHENTICATED" and reply["error"]["code"] == 401, how
    assert listed[0] == 401 and unlisted[0] == 401 and listed_by_query[0] == 200
    assert listed_by_query[1]["name"] == "models/sim-coder"


def test_bytes_that_are_no_request_get_google_s_error_shape(smoke):
    server = make_server(SimBackend(smoke, ModelConfig()))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
            conn.sendall(f"POST {GENERATE} HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n".encode())
            data = b""
            while chunk := conn.recv(65536):  # the server closes the connection after it
                data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        unknown = post(f"http://127.0.0.1:{port}/v1beta/cachedContents", b"{}")
    finally:
        server.shutdown()
        server.server_close()
    assert head.split()[1] == b"400" and json.loads(rest)["error"]["status"] == "INVALID_ARGUMENT"
    assert unknown[0] == 404 and unknown[1]["error"]["status"] == "NOT_FOUND"


# The format itself: reading a request, writing a reply.

def read(body: dict, route: str = GENERATE):
    request = GEMINI.read(body, route)
    assert not isinstance(request, Refusal), request
    return request


def test_the_routes_carry_the_model_and_the_streaming():
    assert wire_for("/v1beta/models/sim-coder:generateContent?key=k") is GEMINI
    assert wire_for("/v1/models/org%2Fmodel:streamGenerateContent?alt=sse") is GEMINI
    assert wire_for("/v1beta/models/sim-coder:countTokens") is None and wire_for("/v1/models") is None
    plain = read({"contents": HELLO})
    streamed = read({"contents": HELLO}, "/v1/models/org%2Fmodel:streamGenerateContent?alt=sse")
    assert (plain.model, plain.stream, plain.wire) == ("sim-coder", False, "gemini")
    assert (streamed.model, streamed.stream) == ("org/model", True)


def test_calls_get_ids_from_their_position_and_responses_pair_with_them_by_id_then_by_name_and_order():
    request = read({
        "systemInstruction": {"role": "user", "parts": [{"text": "Be brief."}, {"text": "Use tools."}]},
        "contents": [
            {"role": "user", "parts": [{"text": "fix"}, {"text": "the bug"}]},
            {"role": "model", "parts": [{"text": "Reading", "thought": True}, {"text": "Let me "}, {"text": "look."},
                                        {"functionCall": {"name": "read_file", "args": {"path": "a.py"}}},
                                        {"functionCall": {"name": "read_file", "args": {"path": "b.py"}}},
                                        {"functionCall": {"id": "own-7", "name": "search", "args": {"query": "x"}}}]},
            {"role": "user", "parts": [
                {"functionResponse": {"name": "search", "id": "own-7", "response": {"output": "hits"}}},
                {"functionResponse": {"id": "cli-random-1", "name": "read_file", "response": {"output": "A"}}},
                {"functionResponse": {"name": "read_file", "response": {"error": "no such file"}}},
                {"text": "<reminder/>"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "run_tests"}}]},
            {"role": "user", "parts": {"functionResponse": {"name": "run_tests", "response": {"passed": 3}}}}]})
    assert request.messages == [
        {"role": "system", "content": "Be brief.\nUse tools."},
        {"role": "user", "content": "fix\nthe bug"},
        {"role": "assistant", "content": "Let me look.", "tool_calls": [
            {"id": "call_1_3", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}},
            {"id": "call_1_4", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "b.py"}'}},
            {"id": "own-7", "type": "function", "function": {"name": "search", "arguments": '{"query": "x"}'}}]},
        {"role": "tool", "tool_call_id": "own-7", "content": "hits"},
        {"role": "tool", "tool_call_id": "call_1_3", "content": "A"},
        {"role": "tool", "tool_call_id": "call_1_4", "content": "no such file", "is_error": True},
        {"role": "user", "content": "<reminder/>"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_3_0", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "call_3_0", "content": '{"passed": 3}'}]
    longer = read({"contents": [*json.loads(json.dumps(request_body_contents())),
                                {"role": "model", "parts": [{"text": "done"}]}]})
    assert longer.messages[:3] == read({"contents": request_body_contents()}).messages  # ids stay as it grows


def request_body_contents() -> list[dict]:
    return [{"role": "user", "parts": [{"text": "fix"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "read_file", "args": {"path": "a.py"}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "A"}}}]}]


def test_gemini_schemas_become_json_schema_and_json_schemas_pass_as_they_are():
    gemini = {"type": "OBJECT", "required": ["command"], "propertyOrdering": ["command", "n"], "properties": {
        "command": {"type": "STRING", "description": "The command.", "example": "ls"},
        "n": {"type": "INTEGER", "nullable": True, "minimum": 1, "format": "int32"},
        "paths": {"type": "ARRAY", "items": {"type": "STRING", "enum": ["a", "b"]}, "min_items": "1",
                  "maxItems": 3},
        "either": {"anyOf": [{"type": "STRING"}, {"$ref": "#/defs/Thing"}, {"ref": "#/defs/Thing"}]}},
        "defs": {"Thing": {"type": "OBJECT", "properties": {}}}}
    assert json_schema(gemini) == {"type": "object", "required": ["command"], "properties": {
        "command": {"type": "string", "description": "The command.", "examples": ["ls"]},
        "n": {"type": ["integer", "null"], "minimum": 1, "format": "int32"},
        "paths": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1, "maxItems": 3},
        "either": {"anyOf": [{"type": "string"}, {"$ref": "#/defs/Thing"}, {"$ref": "#/$defs/Thing"}]}},
        "$defs": {"Thing": {"type": "object", "properties": {}}}}
    own = TOOL_SCHEMAS[0]["function"]
    request = read({"contents": HELLO, "tools": [
        {"functionDeclarations": [{"name": "shell", "description": "Run.", "parameters": gemini},
                                  {"name": own["name"], "description": own["description"],
                                   "parameters_json_schema": own["parameters"]},
                                  {"name": "nothing"}]},
        {"googleSearch": {}}]})
    assert request.tools == [
        {"type": "function", "function": {"name": "shell", "description": "Run.", "parameters": json_schema(gemini)}},
        {"type": "function", "function": own},
        {"type": "function", "function": {"name": "nothing", "description": "",
                                          "parameters": {"type": "object", "properties": {}}}}]


def test_the_tool_config_and_generation_config_are_read():
    tools = [{"function_declarations": [{"name": n} for n in ("a", "b", "c")]}]
    only = read({"contents": HELLO, "tools": tools, "tool_config": {"function_calling_config": {
        "mode": "ANY", "allowed_function_names": ["b"]}}, "generation_config": {"max_output_tokens": "300",
                                                                                "seed": 7, "temperature": 0.2}})
    assert [t["function"]["name"] for t in only.tools] == ["b"]
    assert (only.max_output_tokens, only.seed) == (300, 7)
    none = read({"contents": HELLO, "tools": tools, "toolConfig": {"functionCallingConfig": {"mode": "NONE"}}})
    assert none.tools == [] and (none.max_output_tokens, none.seed) == (None, None)


def completion(text: str = "", calls: int = 0, **usage: int) -> Completion:
    return Completion(text, tuple(ToolCall(f"call_{n}", "run_shell_command", json.dumps({"command": f"ls {n}"}))
                                  for n in range(calls)), Usage(**usage))


def test_a_reply_is_a_generate_content_response_with_gemini_s_usage():
    request = read({"contents": HELLO, "generationConfig": {"maxOutputTokens": 50}})
    reply = GEMINI.reply(request, completion("Let me look.", 2, prompt_tokens=120, completion_tokens=30,
                                             cached_tokens=100, reasoning_tokens=10))
    body = json.loads(reply.data)
    assert reply.status == 200 and reply.content_type == "application/json"
    assert body["candidates"] == [{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
        {"text": "Let me look."},
        {"functionCall": {"id": "call_0", "name": "run_shell_command", "args": {"command": "ls 0"}}},
        {"functionCall": {"id": "call_1", "name": "run_shell_command", "args": {"command": "ls 1"}}}]}}]
    assert body["usageMetadata"] == {"promptTokenCount": 120, "candidatesTokenCount": 20, "thoughtsTokenCount": 10,
                                     "totalTokenCount": 150, "cachedContentTokenCount": 100}
    assert body["modelVersion"] == "sim-coder" and body["responseId"]
    parsed = types.GenerateContentResponse.model_validate(body)
    assert parsed.usage_metadata.cached_content_token_count == 100 and len(parsed.function_calls) == 2
    cut = json.loads(GEMINI.reply(request, completion("x" * 200, completion_tokens=50)).data)
    assert cut["candidates"][0]["finishReason"] == "MAX_TOKENS"


def test_a_streamed_reply_sends_the_text_in_chunks_and_the_calls_and_usage_last():
    request = read({"contents": HELLO}, "/v1beta/models/sim-coder:streamGenerateContent?alt=sse")
    text = "".join(f"line {n}\n" for n in range(100))
    events = stream_events(completion(text, 1, prompt_tokens=9, completion_tokens=4), request)
    assert len(events) == -(-len(text) // TEXT_CHUNK_CHARS)
    assert "".join(p.get("text", "") for e in events for p in e["candidates"][0]["content"]["parts"]) == text
    assert all("usageMetadata" not in e and "finishReason" not in e["candidates"][0] for e in events[:-1])
    last = events[-1]
    assert last["candidates"][0]["finishReason"] == "STOP" and last["usageMetadata"]["totalTokenCount"] == 13
    assert [p for p in last["candidates"][0]["content"]["parts"] if "functionCall" in p] == [
        {"functionCall": {"id": "call_0", "name": "run_shell_command", "args": {"command": "ls 0"}}}]
    reply = GEMINI.reply(request, completion(text, 1, prompt_tokens=9, completion_tokens=4))
    assert reply.content_type == "text/event-stream"
    sent = [json.loads(line[len("data: "):]) for line in reply.data.decode().split("\n\n") if line]
    assert [{**e, "responseId": ""} for e in sent] == [{**e, "responseId": ""} for e in events]
    assert len({e["responseId"] for e in sent}) == 1 and sent[0]["responseId"] != events[0]["responseId"]  # a reply's own
    (only,) = stream_events(completion(), request)
    assert only["candidates"][0]["content"]["parts"] == [{"text": ""}]


@pytest.mark.parametrize("status, name", [(400, "INVALID_ARGUMENT"), (401, "UNAUTHENTICATED"),
                                          (403, "PERMISSION_DENIED"), (404, "NOT_FOUND"), (413, "INVALID_ARGUMENT"),
                                          (429, "RESOURCE_EXHAUSTED"), (500, "INTERNAL"), (502, "INTERNAL"),
                                          (503, "UNAVAILABLE")])
def test_an_error_is_google_s_shape(status, name):
    reply = GEMINI.refuse(Refusal(status, "why"))
    assert reply.status == status
    assert json.loads(reply.data) == {"error": {"code": status, "message": "why", "status": name}}
    parsed = errors.APIError(status, json.loads(reply.data))
    assert (parsed.code, parsed.status, parsed.message) == (status, name, "why")
