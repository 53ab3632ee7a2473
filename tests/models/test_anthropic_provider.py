"""The `anthropic` provider against real HTTP servers on 127.0.0.1: the request it sends, the reply it
reads, retries, typed errors, the check before a run, and a whole experiment through `serve-sim`."""

from __future__ import annotations

import json
import pickle
import socket
import subprocess
import threading

import pytest

import ctxbench.harness.models.endpoint as endpoint
from ctxbench.harness.concurrency import snapshot
from ctxbench.harness.config import ModelConfig, load_config
from ctxbench.harness.errors import EndpointUnavailable, InputError
from ctxbench.harness.models import make_upstream
from ctxbench.harness.models.anthropic_provider import AnthropicModel, preflight
from ctxbench.harness.protocols import Completion, ContextLengthExceeded, FatalModelError, RequestRefused, TransientModelError
from ctxbench.harness.run.runner import prepare, run_experiment
from ctxbench.harness.endpoints.serve_sim import SimBackend, make_server
from ctxbench.harness.tasks.taskset import load_taskset, resolve_taskset_path
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.harness.wire.base import ModelRequest
from provider_helpers import (HTML_200, SMOKE, TEST_KEY, TEST_KEY_ENV, anthropic_error, anthropic_message, cli,
                              cli_env, truncated, with_headers)
from test_provider_runs import COMPARED, runs

MESSAGES = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "median is wrong"}]
RUN_TESTS = (200, anthropic_message("", [("run_tests", {})]))


def root(url: str) -> str:
    """A test endpoint's API root: the Anthropic client adds `/v1` itself."""
    return url.removesuffix("/v1")


def model_for(url: str, **fields) -> AnthropicModel:
    config = ModelConfig(provider="anthropic", name="sim-coder", base_url=root(url), api_key_env=TEST_KEY_ENV, **fields)
    return AnthropicModel(config, seed=1234)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_make_upstream_gives_the_anthropic_model_for_the_provider(api_key):
    config = ModelConfig(provider="anthropic", base_url="http://127.0.0.1:9", api_key_env=TEST_KEY_ENV)
    assert isinstance(make_upstream(config, seed=0), AnthropicModel)


def test_the_context_is_sent_as_a_messages_request(scripted_endpoint, api_key):
    server = scripted_endpoint([RUN_TESTS])
    mark = {"type": "ephemeral"}
    context = [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": "median is wrong"},
        {"role": "assistant", "content": "Reading both.", "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}},
            {"id": "call_b", "type": "function", "function": {"name": "read_file", "arguments": "not json"}}]},
        {"role": "tool", "tool_call_id": "call_a", "content": "def median(): ..."},
        {"role": "tool", "tool_call_id": "call_b", "content": [{"type": "text", "text": "b.py: 3 lines",
                                                               "cache_control": mark}]},
        {"role": "system", "content": [{"type": "text", "text": "Summary so far: nothing.", "cache_control": mark}]},
        {"role": "user", "content": "Keep going."},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "call_c", "type": "function", "function": {"name": "run_tests", "arguments": "{}"}}]},
    ]
    model_for(server.url, temperature=0.3, max_output_tokens=512).complete(context, TOOL_SCHEMAS)
    (body,) = server.requests
    assert server.paths == ["/v1/messages"]
    assert body == {
        "model": "sim-coder", "max_tokens": 512, "temperature": 0.3, "stream": True,
        "system": [{"type": "text", "text": "You fix bugs."},
                   {"type": "text", "text": "Summary so far: nothing.", "cache_control": mark}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "median is wrong"}]},
            {"role": "assistant", "content": [
                {"type": "text", "text": "Reading both."},
                {"type": "tool_use", "id": "call_a", "name": "read_file", "input": {"path": "a.py"}},
                {"type": "tool_use", "id": "call_b", "name": "read_file", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_a", "content": "def median(): ..."},
                {"type": "tool_result", "tool_use_id": "call_b", "content": "b.py: 3 lines", "cache_control": mark},
                {"type": "text", "text": "Keep going."}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "call_c", "name": "run_tests", "input": {}}]},
        ],
        "tools": [{"name": t["function"]["name"], "description": t["function"]["description"],
                   "input_schema": t["function"]["parameters"]} for t in TOOL_SCHEMAS],
    }
    assert "seed" not in body and "top_p" not in body


def test_top_p_is_sent_only_when_it_is_not_1_and_no_tools_when_there_are_none(scripted_endpoint, api_key):
    server = scripted_endpoint([(200, anthropic_message("A summary."))])
    completion = model_for(server.url, top_p=0.9).complete(MESSAGES, [])
    assert server.requests[0]["top_p"] == 0.9 and "tools" not in server.requests[0]
    assert (completion.text, completion.tool_calls) == ("A summary.", ())


def test_the_reply_s_blocks_and_usage_are_read(scripted_endpoint, api_key):
    usage = {"input_tokens": 50, "output_tokens": 40, "cache_read_input_tokens": 700, "cache_creation_input_tokens": 150}
    body = anthropic_message("", [("read_file", {"path": "calc/stats.py"}), ("run_tests", {})], usage)
    body["content"] = [{"type": "thinking", "thinking": "hmm", "signature": "x"}, {"type": "text", "text": "Reading "},
                       {"type": "text", "text": "and testing."}, *body["content"]]
    server = scripted_endpoint([(200, body)])
    completion = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    assert completion.text == "Reading \nand testing."  # text blocks joined as every message's text parts are
    assert [(c.id, c.name, json.loads(c.arguments)) for c in completion.tool_calls] == \
        [("toolu_0_read_file", "read_file", {"path": "calc/stats.py"}), ("toolu_1_run_tests", "run_tests", {})]
    u = completion.usage
    assert (u.prompt_tokens, u.completion_tokens, u.cached_tokens, u.cache_write_tokens) == (900, 40, 700, 150)


def test_a_round_trip_through_the_simulator_s_messages_wire(api_key):
    taskset = load_taskset(resolve_taskset_path("smoke"))
    sim_model = load_config(SMOKE).model
    server = make_server(SimBackend(taskset, sim_model))
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        messages = [{"role": "system", "content": "You fix bugs."},
                    {"role": "user", "content": taskset.tasks[0].problem_statement}]
        url = f"http://127.0.0.1:{server.server_address[1]}"
        completion = model_for(url).complete(messages, TOOL_SCHEMAS)
    finally:
        server.shutdown()
        server.server_close()
    counted = SimBackend(taskset, sim_model).answer(ModelRequest("chat", "sim-coder", messages, TOOL_SCHEMAS))
    assert isinstance(counted, Completion) and completion.tool_calls
    assert [(c.name, json.loads(c.arguments)) for c in completion.tool_calls] == \
        [(c.name, json.loads(c.arguments)) for c in counted.tool_calls]
    assert completion.usage == counted.usage and completion.usage.prompt_tokens > 100


def test_a_prompt_too_long_is_typed(scripted_endpoint, api_key):
    server = scripted_endpoint([(400, anthropic_error("prompt is too long: 210000 tokens > 200000 maximum"))])
    with pytest.raises(ContextLengthExceeded, match="210000 tokens"):
        model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    assert len(server.requests) == 1


@pytest.mark.parametrize("status, words", [(401, ("authentication failed (401)", f"check the key in ${TEST_KEY_ENV}")),
                                           (403, ("authentication failed (403)",)),
                                           (404, ("not found (404)", "check model.name 'sim-coder' and model.base_url")),
                                           (400, ("bad request (400)",)), (422, ("bad request (422)",))])
def test_refused_requests_are_not_retried(scripted_endpoint, api_key, status, words):
    server = scripted_endpoint([(status, anthropic_error("Nope: something is wrong"))])
    with pytest.raises(FatalModelError if status in (401, 403, 404) else RequestRefused) as info:
        model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    message = str(info.value)
    assert all(w in message for w in (*words, "Nope: something is wrong")) and "\n" not in message
    assert len(server.requests) == 1


def test_a_rate_limit_waits_its_retry_after_then_succeeds(scripted_endpoint, api_key, monkeypatch):
    monkeypatch.setattr(endpoint, "MAX_DELAY_S", 5.0)  # the header's wait, not the test's cap
    limited = with_headers((429, anthropic_error("Number of requests has exceeded your rate limit", "rate_limit_error")),
                           retry_after="0.3")
    server = scripted_endpoint([limited, RUN_TESTS])
    completion = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    assert len(server.requests) == 2 and [c.name for c in completion.tool_calls] == ["run_tests"]
    assert completion.retried_s >= 0.3  # a sleep never ends early
    assert snapshot()[root(server.url)].throttled == 1


@pytest.mark.parametrize("status, throttled", [(529, 1), (503, 1), (500, 0), (408, 0)])
def test_overloaded_and_server_errors_are_retried(scripted_endpoint, api_key, status, throttled):
    server = scripted_endpoint([(status, anthropic_error("Overloaded", "overloaded_error")), RUN_TESTS])
    completion = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    assert len(server.requests) == 2 and [c.name for c in completion.tool_calls] == ["run_tests"]
    assert snapshot()[root(server.url)].throttled == throttled


def test_transient_errors_give_up_when_the_retry_budget_is_spent(scripted_endpoint, api_key):
    server = scripted_endpoint([(529, anthropic_error("Overloaded", "overloaded_error"))])
    with pytest.raises(TransientModelError, match="HTTP 529.*Overloaded.*still failing after .* model.retry_budget_s is 0.2 s"):
        model_for(server.url, retry_budget_s=0.2).complete(MESSAGES, TOOL_SCHEMAS)
    assert len(server.requests) >= 2


GARBAGE = {"HTML 200": HTML_200, "truncated JSON": truncated(anthropic_message("", [("run_tests", {})])),
           "no content list": (200, {"id": "msg_x", "type": "message", "role": "assistant"})}


@pytest.mark.parametrize("garbage", list(GARBAGE))
def test_an_unreadable_reply_is_retried_as_an_endpoint_error(scripted_endpoint, api_key, garbage):
    server = scripted_endpoint([GARBAGE[garbage], RUN_TESTS])
    completion = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    assert len(server.requests) == 2 and [c.name for c in completion.tool_calls] == ["run_tests"]
    server = scripted_endpoint([GARBAGE[garbage]])
    with pytest.raises(TransientModelError, match="unreadable reply from .*retry_budget_s"):
        model_for(server.url, retry_budget_s=0.05).complete(MESSAGES, TOOL_SCHEMAS)


def test_connection_refused_is_transient(api_key):
    with pytest.raises(TransientModelError, match="connection failed.*retry_budget_s"):
        model_for(f"http://127.0.0.1:{closed_port()}", retry_budget_s=0.1).complete(MESSAGES, TOOL_SCHEMAS)


def test_a_key_echoed_by_the_endpoint_is_scrubbed(scripted_endpoint, api_key):
    echo = anthropic_error(f"upstream failed for request with headers {{'x-api-key': '{TEST_KEY}'}}", "api_error")
    server = scripted_endpoint([(500, echo)])
    with pytest.raises(TransientModelError) as transient:
        model_for(server.url, retry_budget_s=0.05).complete(MESSAGES, TOOL_SCHEMAS)
    server = scripted_endpoint([(401, echo)])
    with pytest.raises(FatalModelError) as fatal:
        model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    server = scripted_endpoint([(200, anthropic_message(f"Your key is {TEST_KEY}.", [("read_file", {"path": TEST_KEY})]))])
    completion = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    texts = [str(transient.value), str(fatal.value), completion.text, completion.tool_calls[0].arguments]
    assert not any(TEST_KEY in t for t in texts)
    assert all(f"[redacted ${TEST_KEY_ENV}]" in t for t in texts)


def test_a_missing_key_variable_is_fatal_and_named(monkeypatch):
    monkeypatch.delenv(TEST_KEY_ENV, raising=False)
    with pytest.raises(FatalModelError, match=TEST_KEY_ENV):
        model_for("http://127.0.0.1:9")


def test_the_key_is_not_pickled_or_shown(scripted_endpoint, api_key):
    server = scripted_endpoint([RUN_TESTS])
    model = model_for(server.url)
    data = pickle.dumps(model)
    assert TEST_KEY.encode() not in data and TEST_KEY not in repr(model)
    assert pickle.loads(data).complete(MESSAGES, TOOL_SCHEMAS).tool_calls[0].name == "run_tests"


def preflight_config(url: str, name: str = "sim-coder") -> ModelConfig:
    return ModelConfig(provider="anthropic", name=name, base_url=root(url), api_key_env=TEST_KEY_ENV)


def test_preflight_accepts_a_served_model_and_names_a_missing_one(scripted_endpoint, api_key):
    server = scripted_endpoint([RUN_TESTS])
    server.models = (200, {"data": [{"type": "model", "id": "claude-sonnet-4-5", "display_name": "Claude Sonnet 4.5"},
                                    {"type": "model", "id": "claude-haiku-4-5", "display_name": "Claude Haiku 4.5"}],
                           "has_more": False, "first_id": "claude-sonnet-4-5", "last_id": "claude-haiku-4-5"})
    preflight(preflight_config(server.url, "claude-sonnet-4-5"))
    with pytest.raises(InputError, match="'claude-sonet-4-5' is not served.*lists claude-haiku-4-5, claude-sonnet-4-5.*"
                                         "did you mean 'claude-sonnet-4-5'"):
        preflight(preflight_config(server.url, "claude-sonet-4-5"))
    assert server.requests == []


def test_preflight_reads_the_list_of_ctxbench_s_own_endpoints(api_key):
    server = make_server(SimBackend(load_taskset(resolve_taskset_path("smoke")), ModelConfig()))
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        preflight(preflight_config(f"http://127.0.0.1:{server.server_address[1]}"))
    finally:
        server.shutdown()
        server.server_close()


def test_preflight_names_the_key_variable_when_the_key_is_refused(scripted_endpoint, api_key):
    server = scripted_endpoint([RUN_TESTS])
    server.models = (401, anthropic_error("invalid x-api-key", "authentication_error"))
    with pytest.raises(EndpointUnavailable, match=f"refused the key in \\${TEST_KEY_ENV} \\(401\\): invalid x-api-key"):
        preflight(preflight_config(server.url))


def test_preflight_fails_when_nothing_answers_or_the_key_variable_is_unset(monkeypatch):
    port = closed_port()
    monkeypatch.setenv(TEST_KEY_ENV, TEST_KEY)
    with pytest.raises(EndpointUnavailable, match=f"cannot connect: GET http://127.0.0.1:{port}/v1/models"):
        preflight(preflight_config(f"http://127.0.0.1:{port}"))
    monkeypatch.delenv(TEST_KEY_ENV)
    with pytest.raises(EndpointUnavailable, match=f"{TEST_KEY_ENV} is not set"):
        preflight(preflight_config(f"http://127.0.0.1:{port}"))


def test_preflight_refuses_a_reply_that_is_not_a_model_list(scripted_endpoint, api_key):
    server = scripted_endpoint([RUN_TESTS])
    server.models = HTML_200
    with pytest.raises(InputError, match="not a model list.*Welcome to nginx"):
        preflight(preflight_config(server.url))


def test_smoke_through_serve_sim_matches_the_in_process_simulator(tmp_path, serve_sim, api_key):
    """The Messages API carries no seed, so serve-sim answers every run with seed 0: the in-process
    run fixes `model.seed=0` to compare run by run."""
    url = root(serve_sim("--config", str(SMOKE)))
    over_http = subprocess.Popen(
        cli("run", str(SMOKE), "--output", str(tmp_path / "http"), "--no-report", "--repeats", "1",
            "--provider", "anthropic", "--base-url", url, "--api-key-env", TEST_KEY_ENV),
        env=cli_env(**{TEST_KEY_ENV: TEST_KEY}), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    in_process = run_experiment(prepare(load_config(SMOKE, ["repeats=1", "model.seed=0"]), SMOKE.parent,
                                        tmp_path / "sim"), progress=False)
    stdout, stderr = over_http.communicate(timeout=240)  # a guard against a hang, not a speed claim
    assert over_http.returncode == 0, stderr

    sim, http = runs(tmp_path / "sim"), runs(tmp_path / "http")
    assert len(in_process) == len(sim) == len(http) == 5
    for run_id, expected in sim.items():
        assert {k: http[run_id][k] for k in COMPARED} == {k: expected[k] for k in COMPARED}, run_id
    assert sum(r["resolved"] for r in http.values()) >= 3 and all(r["turns"] >= 3 for r in http.values())
    manifest = json.loads((tmp_path / "http" / "manifest.json").read_text())
    assert manifest["config"]["model"]["provider"] == "anthropic" and not manifest["simulated"]
    assert not any(TEST_KEY.encode() in p.read_bytes() for p in (tmp_path / "http").rglob("*") if p.is_file())


def test_a_run_s_cache_writes_cost_the_write_price(tmp_path, scripted_endpoint, api_key):
    """Anthropic reports the prompt tokens it wrote to its cache; `cost_usd` prices them at the cache-write
    price (Claude Sonnet: $3.75 per million against $3 for input), as the pricing regimes do."""
    usage = {"input_tokens": 1000, "cache_creation_input_tokens": 4000, "cache_read_input_tokens": 2000,
             "output_tokens": 100}
    server = scripted_endpoint([(200, anthropic_message("Done.", [("finish", {"summary": "nothing"})], usage))])
    overrides = ["model.provider=anthropic", f"model.base_url={root(server.url)}", f"model.api_key_env={TEST_KEY_ENV}",
                 "model.pricing={model: claude-sonnet-4-5}", "repeats=1", "workers=1",
                 "taskset.ids=[calc-median-even-length]"]
    out = tmp_path / "out"
    (result,) = run_experiment(prepare(load_config(SMOKE, overrides), SMOKE.parent, out), progress=False)
    dollars = (1000 * 3.0 + 4000 * 3.75 + 2000 * 0.3 + 100 * 15.0) / 1e6
    assert (result.turns, result.prompt_tokens, result.cached_tokens) == (1, 7000, 2000)
    assert result.cost_usd == pytest.approx(dollars)
    assert json.loads((out / "manifest.json").read_text())["pricing"]["cache_write"] == pytest.approx(3.75)
