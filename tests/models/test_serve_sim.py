"""`serve-sim`: the simulated model behind a real OpenAI-compatible HTTP endpoint on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request

import pytest

from ctxbench.harness.endpoints.server import respond
from ctxbench.harness.config import ModelConfig, load_config
from ctxbench.harness.models.sim import SimModel
from ctxbench.harness.endpoints.serve_sim import SimBackend, make_server
from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path
from ctxbench.harness.tokens import TokenCounter
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.harness.wire.chat import CHAT
from provider_helpers import SMOKE


@pytest.fixture(scope="module")
def smoke_taskset():
    return load_taskset(resolve_taskset_path("smoke"))


@pytest.fixture
def sim_endpoint(smoke_taskset):
    """serve-sim in this process, on a free loopback port, with the smoke experiment's model section."""
    model = load_config(SMOKE).model
    server = make_server(SimBackend(smoke_taskset, model), "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", model
    server.shutdown()
    server.server_close()


def call(url: str, body: dict | None = None) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def chat(task_statement: str, seed: int = 7, **extra) -> dict:
    return {"model": "sim-coder", "seed": seed, "tools": TOOL_SCHEMAS, **extra,
            "messages": [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": task_statement}]}


def test_lists_the_configured_model(sim_endpoint):
    url, _ = sim_endpoint
    status, body = call(f"{url}/models")
    assert status == 200 and [m["id"] for m in body["data"]] == ["sim-coder"]


def test_answers_like_the_in_process_simulator(sim_endpoint, smoke_taskset):
    url, model = sim_endpoint
    task = smoke_taskset.tasks[0]
    request = chat("\n" + task.problem_statement + "\n\n")
    status, body = call(f"{url}/chat/completions", request)
    assert status == 200
    (choice,) = body["choices"]
    assert choice["finish_reason"] == "tool_calls"
    expected = SimModel(model.sim, task.patch, TokenCounter(model.tokenizer), model.context_window,
                        model.max_output_tokens, 7).complete(request["messages"], TOOL_SCHEMAS)
    (tool_call,) = choice["message"]["tool_calls"]
    assert choice["message"]["content"] == expected.text
    assert (tool_call["id"], tool_call["function"]["name"], tool_call["function"]["arguments"]) == \
        (expected.tool_calls[0].id, expected.tool_calls[0].name, expected.tool_calls[0].arguments)
    assert body["usage"] == {"prompt_tokens": expected.usage.prompt_tokens,
                             "completion_tokens": expected.usage.completion_tokens,
                             "total_tokens": expected.usage.prompt_tokens + expected.usage.completion_tokens,
                             "prompt_tokens_details": {"cached_tokens": 0}}
    assert call(f"{url}/chat/completions", request)[1]["choices"] == body["choices"]


def test_reports_cached_prompt_tokens_across_requests(sim_endpoint, smoke_taskset):
    url, _ = sim_endpoint
    request = chat("\n" + smoke_taskset.tasks[1].problem_statement + "\n\n")
    request["messages"][0]["content"] = "You fix bugs. " + "Read before you edit. " * 300
    first = call(f"{url}/chat/completions", request)[1]["usage"]
    again = call(f"{url}/chat/completions", request)[1]["usage"]
    assert first["prompt_tokens_details"]["cached_tokens"] == 0
    assert again["prompt_tokens_details"]["cached_tokens"] == (first["prompt_tokens"] - 3) // 128 * 128 >= 1024, \
        "the same request again: every message is a cached prefix (less the reply priming), in 128-token blocks"


def test_a_summary_request_stops_without_tool_calls(sim_endpoint):
    url, _ = sim_endpoint
    request = {"model": "sim-coder", "seed": 1, "messages": [
        {"role": "system", "content": "Summarize the earlier turns."},
        {"role": "user", "content": "Turns to fold:\nTurn 0 assistant: Let me run the tests."}]}
    status, body = call(f"{url}/chat/completions", request)
    assert status == 200
    assert body["choices"][0]["finish_reason"] == "stop" and "tool_calls" not in body["choices"][0]["message"]
    assert body["choices"][0]["message"]["content"].startswith("Summary")


def test_an_unknown_task_is_a_clear_400(sim_endpoint):
    url, _ = sim_endpoint
    status, body = call(f"{url}/chat/completions", chat("Please fix the frobnicator."))
    assert status == 400
    assert body["error"]["code"] == "unknown_task" and "smoke" in body["error"]["message"]


def test_a_context_over_the_window_is_rejected_like_the_api(sim_endpoint, smoke_taskset):
    url, model = sim_endpoint
    request = chat(smoke_taskset.tasks[0].problem_statement)
    request["messages"].insert(1, {"role": "user", "content": "lorem ipsum " * model.context_window})
    request["messages"][1], request["messages"][2] = request["messages"][2], request["messages"][1]
    status, body = call(f"{url}/chat/completions", request)
    assert status == 400
    assert body["error"]["type"] == "invalid_request_error" and body["error"]["param"] == "messages"
    assert body["error"]["code"] == "context_length_exceeded"
    assert f"maximum context length is {model.context_window} tokens" in body["error"]["message"]


def test_an_unknown_model_is_a_404(sim_endpoint, smoke_taskset):
    url, _ = sim_endpoint
    status, body = call(f"{url}/chat/completions", {**chat(smoke_taskset.tasks[0].problem_statement), "model": "gpt-9"})
    assert status == 404 and body["error"]["code"] == "model_not_found"


def test_the_cli_prints_the_bound_address(serve_sim, smoke_taskset):
    url = serve_sim("--taskset", "smoke")
    status, body = call(f"{url}/chat/completions", chat(smoke_taskset.tasks[1].problem_statement))
    assert url.startswith("http://127.0.0.1:") and not url.startswith("http://127.0.0.1:0/")
    assert status == 200 and body["choices"][0]["message"]["tool_calls"]


def test_the_window_comes_from_the_config(smoke_taskset):
    small = ModelConfig(context_window=600)
    backend = SimBackend(smoke_taskset, small)
    response = respond(backend, CHAT, chat(smoke_taskset.tasks[0].problem_statement))
    assert response.status == 400 and json.loads(response.data)["error"]["code"] == "context_length_exceeded"


def test_a_client_s_max_tokens_counts_up_to_the_model_s_as_the_gateway_counts_it(smoke_taskset):
    """Claude Code asks for max_tokens 32,000: as the output reserve of a 32k window it left no room for the
    request, and serve-sim refused every one; the model's max_output_tokens bounds it, as in the gateway."""
    backend = SimBackend(smoke_taskset, ModelConfig(context_window=32_000, max_output_tokens=1024))
    statement = smoke_taskset.tasks[0].problem_statement
    answered = respond(backend, CHAT, chat(statement, max_tokens=32_000))
    assert answered.status == 200, answered.data
    smaller = respond(backend, CHAT, chat(statement, max_tokens=16))
    assert json.loads(smaller.data)["usage"]["completion_tokens"] <= 16


def test_a_statement_wrapped_in_an_agents_template_is_the_same_task(sim_endpoint, smoke_taskset):
    url, _ = sim_endpoint
    task = smoke_taskset.tasks[0]
    wrapped = f"<pr_description>\nConsider the following PR description:\n{task.problem_statement}\n</pr_description>"
    plain_status, plain = call(f"{url}/chat/completions", chat(task.problem_statement))
    status, reply = call(f"{url}/chat/completions", chat(wrapped))
    assert (plain_status, status) == (200, 200)
    first = reply["choices"][0]["message"]
    assert first["tool_calls"] and first["tool_calls"][0]["function"]["name"] in {"run_tests", "search", "read_file"}
    status, body = call(f"{url}/chat/completions", chat("Please solve: a problem no task of the taskset has."))
    assert status == 400 and body["error"]["code"] == "unknown_task"


def test_a_streamed_request_gets_the_same_reply_through_the_openai_sdk(sim_endpoint, smoke_taskset):
    import openai

    url, _ = sim_endpoint
    client = openai.OpenAI(base_url=url, api_key="unused", max_retries=0)
    request = chat(smoke_taskset.tasks[1].problem_statement)
    plain = client.chat.completions.create(**request)
    chunks = list(client.chat.completions.create(**request, stream=True, stream_options={"include_usage": True}))
    calls = [c for chunk in chunks for choice in chunk.choices for c in choice.delta.tool_calls or []]
    assert [(c.id, c.function.name, c.function.arguments) for c in calls] == [
        (c.id, c.function.name, c.function.arguments) for c in plain.choices[0].message.tool_calls]
    assert [chunk.choices[0].finish_reason for chunk in chunks if chunk.choices][-1] == "tool_calls"
    assert chunks[-1].usage.prompt_tokens == plain.usage.prompt_tokens > 0
