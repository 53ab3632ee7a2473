"""The `openai` provider against real HTTP servers on 127.0.0.1: parameters, retries, typed errors."""

from __future__ import annotations

import json
import pickle
import socket

import pytest

from ctxbench.harness.config import ModelConfig
from ctxbench.harness.protocols import ContextLengthExceeded, FatalModelError, RequestRefused, TransientModelError
from ctxbench.harness.models.openai_provider import OpenAIModel
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from provider_helpers import (DOWN, HTML_200, MESSAGE_NULL, NO_CHOICES, TEST_KEY, TEST_KEY_ENV, api_error, burst,
                              chat_reply, faulty, key_echo, outage, truncated)

MESSAGES = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "median is wrong"}]


def model_for(url: str, **fields) -> OpenAIModel:
    config = ModelConfig(provider="openai", name="sim-coder", base_url=url, api_key_env=TEST_KEY_ENV, **fields)
    return OpenAIModel(config, seed=1234)


def test_sends_the_fixed_sampling_parameters_tools_and_seed(scripted_endpoint, api_key):
    server = scripted_endpoint([(200, chat_reply("Reading.", [("read_file", '{"path": "calc/stats.py"}')]))])
    model = model_for(server.url, temperature=0.3, top_p=0.9, max_output_tokens=512)
    completion = model.complete(MESSAGES, TOOL_SCHEMAS)
    (request,) = server.requests
    assert (request["model"], request["temperature"], request["top_p"], request["max_tokens"], request["seed"]) == \
        ("sim-coder", 0.3, 0.9, 512, 1234)
    assert request["messages"] == MESSAGES
    assert request["tools"] == TOOL_SCHEMAS
    assert completion.text == "Reading."
    assert [(c.id, c.name, c.arguments) for c in completion.tool_calls] == \
        [("call_0_read_file", "read_file", '{"path": "calc/stats.py"}')]
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens, completion.usage.cached_tokens) == (100, 10, 0)


def test_no_tools_are_sent_when_there_are_none(scripted_endpoint, api_key):
    server = scripted_endpoint([(200, chat_reply("A summary."))])
    completion = model_for(server.url).complete(MESSAGES, [])
    assert "tools" not in server.requests[0]
    assert (completion.text, completion.tool_calls) == ("A summary.", ())


def test_cached_tokens_are_recorded(scripted_endpoint, api_key):
    usage = {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940,
             "prompt_tokens_details": {"cached_tokens": 768}}
    server = scripted_endpoint([(200, chat_reply("", [("run_tests", "{}")], usage))])
    u = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS).usage
    assert (u.prompt_tokens, u.completion_tokens, u.cached_tokens) == (900, 40, 768)


def test_cache_writes_and_reasoning_tokens_are_recorded_where_the_endpoint_reports_them(scripted_endpoint, api_key):
    usage = {"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940,
             "prompt_tokens_details": {"cached_tokens": 512, "cache_write_tokens": 300},
             "completion_tokens_details": {"reasoning_tokens": 25}}
    server = scripted_endpoint([(200, chat_reply("", [("run_tests", "{}")], usage))])
    u = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS).usage
    assert (u.cached_tokens, u.cache_write_tokens, u.reasoning_tokens) == (512, 300, 25)


def test_missing_usage_is_counted_with_the_tokenizer(scripted_endpoint, api_key):
    body = chat_reply("Running the tests.", [("run_tests", "{}")])
    del body["usage"]
    server = scripted_endpoint([(200, body)])
    u = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS).usage
    assert u.prompt_tokens > 10 and u.completion_tokens > 3


def test_rate_limit_is_retried_then_succeeds(scripted_endpoint, api_key):
    limited = (429, api_error("Rate limit reached, try again", "requests", "rate_limit_exceeded"))
    server = scripted_endpoint([limited, limited, (200, chat_reply("", [("run_tests", "{}")]))])
    completion = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    assert len(server.requests) == 3
    assert [c.name for c in completion.tool_calls] == ["run_tests"]
    assert completion.retried_s > 0


@pytest.mark.parametrize("status", [429, 500, 503])
def test_transient_errors_give_up_when_the_retry_budget_is_spent(scripted_endpoint, api_key, status):
    server = scripted_endpoint([(status, api_error("busy", "server_error"))])
    with pytest.raises(TransientModelError, match=f"HTTP {status}.*still failing after .* model.retry_budget_s is 0.2 s"):
        model_for(server.url, retry_budget_s=0.2).complete(MESSAGES, TOOL_SCHEMAS)


def test_the_retry_budget_is_time_not_a_count_of_retries(scripted_endpoint, api_key):
    """Twelve 5xx in a row (more than any fixed count of retries used to allow) are waited out."""
    reply = chat_reply("", [("run_tests", "{}")])
    server = scripted_endpoint(faulty(lambda i, body: (200, reply), burst(0, 12)))
    completion = model_for(server.url, retry_budget_s=60).complete(MESSAGES, TOOL_SCHEMAS)
    assert len(server.requests) == 13 and [c.name for c in completion.tool_calls] == ["run_tests"]


def test_an_outage_shorter_than_the_budget_is_waited_out(scripted_endpoint, api_key):
    reply = chat_reply("", [("run_tests", "{}")])
    server = scripted_endpoint(outage(0.5, lambda i, body: (200, reply)))
    completion = model_for(server.url, retry_budget_s=60).complete(MESSAGES, TOOL_SCHEMAS)
    assert len(server.requests) >= 2 and [c.name for c in completion.tool_calls] == ["run_tests"]
    assert completion.retried_s > 0


def test_a_zero_budget_sends_one_request(scripted_endpoint, api_key):
    server = scripted_endpoint([DOWN])
    with pytest.raises(TransientModelError, match="1 attempts"):
        model_for(server.url, retry_budget_s=0).complete(MESSAGES, TOOL_SCHEMAS)
    assert len(server.requests) == 1


def test_connection_refused_is_transient(api_key):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(TransientModelError, match="connection failed.*retry_budget_s"):
        model_for(f"http://127.0.0.1:{port}/v1", retry_budget_s=0.1).complete(MESSAGES, TOOL_SCHEMAS)


def test_timeout_is_transient(scripted_endpoint, api_key):
    import time

    def slow(i, body):
        time.sleep(0.5)
        return 200, chat_reply("", [("run_tests", "{}")])

    server = scripted_endpoint(slow)
    with pytest.raises(TransientModelError, match="timed out.*no byte for 0.1 s"):
        model_for(server.url, retry_budget_s=0, idle_timeout_s=0.1).complete(MESSAGES, TOOL_SCHEMAS)
    assert len(server.requests) == 1


GARBAGE = {"truncated JSON": truncated(chat_reply("", [("run_tests", "{}")])), "message null": MESSAGE_NULL,
           "HTML 200": HTML_200, "choices []": NO_CHOICES}


@pytest.mark.parametrize("garbage", list(GARBAGE))
def test_an_unreadable_reply_is_retried_as_an_endpoint_error(scripted_endpoint, api_key, garbage):
    server = scripted_endpoint([GARBAGE[garbage], (200, chat_reply("Reading.", [("read_file", '{"path": "a.py"}')]))])
    completion = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    assert len(server.requests) == 2 and completion.text == "Reading."


@pytest.mark.parametrize("garbage", list(GARBAGE))
def test_an_endpoint_that_only_sends_garbage_fails_as_transient(scripted_endpoint, api_key, garbage):
    server = scripted_endpoint([GARBAGE[garbage]])
    with pytest.raises(TransientModelError, match="unreadable reply from .*retry_budget_s"):
        model_for(server.url, retry_budget_s=0.1).complete(MESSAGES, TOOL_SCHEMAS)


def test_a_key_echoed_by_the_endpoint_is_scrubbed(scripted_endpoint, api_key):
    server = scripted_endpoint([key_echo(500)])
    with pytest.raises(TransientModelError) as transient:
        model_for(server.url, retry_budget_s=0.05).complete(MESSAGES, TOOL_SCHEMAS)
    server = scripted_endpoint([key_echo(401)])
    with pytest.raises(FatalModelError) as fatal:
        model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    server = scripted_endpoint([(200, chat_reply(f"Your key is {TEST_KEY}.", [("read_file", f'{{"path": "{TEST_KEY}"}}')]))])
    completion = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    texts = [str(transient.value), str(fatal.value), completion.text, completion.tool_calls[0].arguments]
    assert not any(TEST_KEY in t for t in texts)
    assert all(f"[redacted ${TEST_KEY_ENV}]" in t for t in texts)


@pytest.mark.parametrize("status, words, error", [
    (401, "authentication failed (401)", FatalModelError), (403, "authentication failed (403)", FatalModelError),
    (404, "not found (404)", FatalModelError),
    # a request the endpoint refuses is this run's: it ends the run, not the experiment
    (400, "bad request (400)", RequestRefused), (422, "bad request (422)", RequestRefused)])
def test_refused_requests_are_not_retried(scripted_endpoint, api_key, status, words, error):
    server = scripted_endpoint([(status, api_error("Nope: something is wrong"))])
    with pytest.raises(error) as info:
        model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    message = str(info.value)
    assert words in message and "Nope: something is wrong" in message and "\n" not in message
    assert TEST_KEY not in message
    assert len(server.requests) == 1


@pytest.mark.parametrize("body", [
    api_error("Too long", code="context_length_exceeded"),
    api_error("This model's maximum context length is 8192 tokens. However, you requested 9000 tokens."),
])
def test_context_length_exceeded_is_typed(scripted_endpoint, api_key, body):
    server = scripted_endpoint([(400, body)])
    with pytest.raises(ContextLengthExceeded):
        model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)
    assert len(server.requests) == 1


def test_malformed_tool_call_arguments_are_passed_through_raw(scripted_endpoint, api_key):
    server = scripted_endpoint([(200, chat_reply("", [("edit_file", '{"path": "a.py", "old_text": ')]))])
    (call,) = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS).tool_calls
    assert (call.name, call.arguments) == ("edit_file", '{"path": "a.py", "old_text": ')


def test_a_missing_key_variable_is_fatal_and_named(monkeypatch):
    monkeypatch.delenv(TEST_KEY_ENV, raising=False)
    with pytest.raises(FatalModelError, match=TEST_KEY_ENV):
        model_for("http://127.0.0.1:9/v1")


def test_the_key_is_not_pickled_or_shown(scripted_endpoint, api_key):
    server = scripted_endpoint([(200, chat_reply("", [("run_tests", "{}")]))])
    model = model_for(server.url)
    data = pickle.dumps(model)
    assert TEST_KEY.encode() not in data and TEST_KEY not in repr(model)
    clone = pickle.loads(data)
    assert clone.complete(MESSAGES, TOOL_SCHEMAS).tool_calls[0].name == "run_tests"
    assert server.requests[0]["seed"] == 1234


QWEN_FENCED = 'I will list the files.\n```json\n{"name": "list_files", "arguments": {"path": "."}}\n```'


def test_calls_written_in_the_reply_s_text_are_calls_with_tool_calls_text(scripted_endpoint, api_key):
    """Qwen behind llama.cpp's server writes its call as a fenced JSON block in the content, which the server
    passes through as text: with `tool_calls: text` it is read as the call it is."""
    server = scripted_endpoint([(200, chat_reply(QWEN_FENCED))])
    completion = model_for(server.url, tool_calls="text").complete(MESSAGES, TOOL_SCHEMAS)
    assert [(c.name, json.loads(c.arguments)) for c in completion.tool_calls] == [("list_files", {"path": "."})]
    assert completion.text == "I will list the files." and completion.finish_reason == "stop"
    assert completion.tool_calls[0].id.startswith("call_")
    native = model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS)  # the default reads native calls only
    assert native.tool_calls == () and native.text == QWEN_FENCED


def test_a_reply_cut_at_the_output_limit_says_so(scripted_endpoint, api_key):
    cut = chat_reply("I will now read the whole")
    cut["choices"][0]["finish_reason"] = "length"
    server = scripted_endpoint([(200, cut)])
    assert model_for(server.url).complete(MESSAGES, TOOL_SCHEMAS).finish_reason == "length"


@pytest.mark.parametrize("tokenizer", ["endpoint", "calibrated"])
def test_an_unpickled_model_estimates_a_usage_left_out_whatever_the_tokenizer(scripted_endpoint, api_key, tokenizer):
    # a Ray worker unpickles the model without the run's counter: a reply without usage is still counted
    body = chat_reply("", [("run_tests", "{}")])
    del body["usage"]
    server = scripted_endpoint([(200, body)])
    clone = pickle.loads(pickle.dumps(model_for(server.url, tokenizer=tokenizer)))
    usage = clone.complete(MESSAGES, TOOL_SCHEMAS).usage
    assert usage.estimated and usage.prompt_tokens > 0
