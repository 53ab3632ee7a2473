"""Requests to a served model are streamed: a reply is read as it comes, a request times out on silence
(`model.idle_timeout_s`), not on its length, and the reply a stream adds up to is the one its JSON body
would have been (a server that ignores `stream` still works)."""

from __future__ import annotations

import json

import pytest

from ctxbench.harness.config import ModelConfig
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.harness.models import make_upstream
from ctxbench.harness.protocols import TransientModelError
from provider_helpers import TEST_KEY_ENV, anthropic_message, chat_reply
from streamed import Stream, StreamingUpstream, chat_events, message_events, sse

MESSAGES = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "median is wrong"}]
USAGE = {"prompt_tokens": 120, "completion_tokens": 14, "total_tokens": 134,
         "prompt_tokens_details": {"cached_tokens": 64}}
TEXT = "Reading both files before the fix."
CALLS = [("call_0_read_file", "read_file", '{"path": "calc/stats.py"}'), ("call_1_run_tests", "run_tests", "{}")]


@pytest.fixture
def upstream():
    started: list[StreamingUpstream] = []

    def start(script) -> StreamingUpstream:
        started.append(StreamingUpstream(script))
        return started[-1]

    yield start
    for server in started:
        server.close()


def model(url: str, provider: str = "openai", **fields):
    config = ModelConfig(provider=provider, name="sim-coder", base_url=url, api_key_env=TEST_KEY_ENV, **fields)
    return make_upstream(config, seed=7)


def steady(words: int = 20) -> list[bytes]:
    return chat_events(" ".join(f"w{i}" for i in range(words)), usage=USAGE)


def test_a_streamed_chat_reply_is_the_completion_its_json_body_is(upstream, api_key):
    """The same reply, streamed in pieces and as the one JSON body of a server that ignores `stream`."""
    plain = upstream(lambda i, body: (200, chat_reply(TEXT, [(n, a) for _, n, a in CALLS], USAGE)))
    streamed = upstream(lambda i, body: Stream(chat_events(TEXT, CALLS, USAGE)))
    from_json = model(plain.url).complete(MESSAGES, TOOL_SCHEMAS)
    from_stream = model(streamed.url).complete(MESSAGES, TOOL_SCHEMAS)
    assert plain.requests[0]["stream"] is True and plain.requests[0]["stream_options"] == {"include_usage": True}
    assert from_stream == from_json
    assert (from_stream.text, [c.name for c in from_stream.tool_calls], from_stream.finish_reason) == \
        (TEXT, ["read_file", "run_tests"], "tool_calls")
    assert (from_stream.usage.prompt_tokens, from_stream.usage.cached_tokens, from_stream.usage.estimated) == \
        (120, 64, False)


def test_a_streamed_message_is_the_completion_its_json_body_is(upstream, api_key):
    usage = {"input_tokens": 50, "output_tokens": 40, "cache_read_input_tokens": 700, "cache_creation_input_tokens": 150}
    body = anthropic_message("", [("read_file", {"path": "calc/stats.py"})], usage)
    body["content"] = [{"type": "text", "text": "Reading"}, {"type": "text", "text": "and testing."}, *body["content"]]
    plain = upstream(lambda i, b: (200, body))
    streamed = upstream(lambda i, b: Stream(message_events(
        ["Reading", "and testing."], [("toolu_0_read_file", "read_file", {"path": "calc/stats.py"})], usage)))
    from_json = model(plain.root, "anthropic").complete(MESSAGES, TOOL_SCHEMAS)
    heard: list[str] = []
    from_stream = model(streamed.root, "anthropic").complete(MESSAGES, TOOL_SCHEMAS, heard.append)
    assert plain.requests[0]["stream"] is True and from_stream == from_json
    assert from_stream.text == "Reading\nand testing." == "".join(heard)
    assert (from_stream.usage.prompt_tokens, from_stream.usage.completion_tokens) == (900, 40)


def test_a_slow_but_steady_stream_outlasts_the_idle_timeout(upstream, api_key):
    """20 pieces 0.1 s apart: twice the idle timeout in all, never silent for it."""
    server = upstream(lambda i, body: Stream(steady(20), gap_s=0.1))
    completion = model(server.url, idle_timeout_s=1.0, retry_budget_s=0).complete(MESSAGES, TOOL_SCHEMAS)
    assert completion.text == " ".join(f"w{i}" for i in range(20)) and len(server.requests) == 1


def test_a_stream_that_stalls_times_out_after_the_idle_timeout_and_is_retried(upstream, api_key):
    stalled = Stream(steady(), hold_at=4)
    server = upstream(lambda i, body: stalled if i == 0 else Stream(steady()))
    try:
        completion = model(server.url, idle_timeout_s=0.3, retry_budget_s=60).complete(MESSAGES, TOOL_SCHEMAS)
    finally:
        stalled.go_on.set()
    assert len(server.requests) == 2 and completion.text.startswith("w0 w1") and completion.retried_s > 0


def test_a_stream_still_stalled_when_the_retry_budget_is_spent_fails_as_transient(upstream, api_key):
    stalled = Stream(steady(), hold_at=2)
    server = upstream(lambda i, body: stalled)
    try:
        with pytest.raises(TransientModelError, match=r"no byte of the reply for 0.3 s \(model.idle_timeout_s\)"):
            model(server.url, idle_timeout_s=0.3, retry_budget_s=0).complete(MESSAGES, TOOL_SCHEMAS)
    finally:
        stalled.go_on.set()
    assert len(server.requests) == 1


def test_a_reply_still_streaming_past_request_timeout_s_is_cut(upstream, api_key):
    server = upstream(lambda i, body: Stream(steady(60), gap_s=0.05))
    with pytest.raises(TransientModelError, match=r"still streaming after 0.5 s \(model.request_timeout_s\)"):
        model(server.url, request_timeout_s=0.5, retry_budget_s=0).complete(MESSAGES, TOOL_SCHEMAS)


def test_usage_missing_from_the_stream_is_estimated(upstream, api_key):
    server = upstream(lambda i, body: Stream(chat_events(TEXT)))
    usage = model(server.url).complete(MESSAGES, TOOL_SCHEMAS).usage
    assert usage.estimated and usage.prompt_tokens > 0 and usage.completion_tokens > 0


def test_an_error_sent_in_the_stream_is_retried(upstream, api_key):
    broken = [chat_events("")[0], sse({"error": {"message": "the server is overloaded", "type": "server_error"}})]
    server = upstream(lambda i, body: Stream(broken) if i == 0 else Stream(chat_events(TEXT, usage=USAGE)))
    assert model(server.url, retry_budget_s=60).complete(MESSAGES, TOOL_SCHEMAS).text == TEXT
    assert len(server.requests) == 2
    with pytest.raises(TransientModelError, match="error in the stream .*the server is overloaded"):
        model(upstream(lambda i, body: Stream(broken)).url, retry_budget_s=0).complete(MESSAGES, TOOL_SCHEMAS)


def test_text_is_told_as_it_arrives_and_a_failure_after_some_went_out_is_not_retried(upstream, api_key):
    heard: list[str] = []
    completion = model(upstream(lambda i, body: Stream(chat_events(TEXT, CALLS, USAGE))).url).complete(
        MESSAGES, TOOL_SCHEMAS, heard.append)
    assert heard[0] == "" and len(heard) > 3 and "".join(heard) == completion.text == TEXT
    stalled = Stream(steady(), hold_at=3)
    server = upstream(lambda i, body: stalled)
    heard.clear()
    try:
        with pytest.raises(TransientModelError, match="no byte"):
            model(server.url, idle_timeout_s=0.3, retry_budget_s=60).complete(MESSAGES, TOOL_SCHEMAS, heard.append)
    finally:
        stalled.go_on.set()
    assert len(server.requests) == 1 and "".join(heard) == "w0 w1"  # what went out cannot be taken back


def test_a_json_body_that_is_not_a_reply_is_unreadable(upstream, api_key):
    server = upstream(lambda i, body: (200, ["not", "a", "reply"]))
    with pytest.raises(TransientModelError, match="unreadable reply"):
        model(server.url, retry_budget_s=0).complete(MESSAGES, TOOL_SCHEMAS)
    assert json.dumps(server.requests[0]["messages"]) == json.dumps(MESSAGES)


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_stream_cut_off_before_its_end_is_retried(upstream, api_key, provider):
    whole = chat_events(TEXT, usage=USAGE) if provider == "openai" else message_events([TEXT])
    server = upstream(lambda i, body: Stream(whole[:4] if i == 0 else whole))
    url = server.url if provider == "openai" else server.root
    assert model(url, provider, retry_budget_s=60).complete(MESSAGES, TOOL_SCHEMAS).text == TEXT
    assert len(server.requests) == 2
