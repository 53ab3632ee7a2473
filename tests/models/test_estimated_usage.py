"""A reply whose endpoint reports no usage: counted with the run's own counter (the budget's), tool
schemas included, and marked estimated, call by call and run by run."""

from __future__ import annotations

from ctxbench.harness.config import ModelConfig
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.harness.models import make_upstream
from ctxbench.harness.tokens import TokenCounter
from provider_helpers import TEST_KEY_ENV, anthropic_message, chat_reply

MESSAGES = [{"role": "system", "content": "You fix bugs."}, {"role": "user", "content": "median is wrong"}]


def test_an_openai_reply_without_usage_is_counted_by_the_runs_counter_and_marked(scripted_endpoint, api_key):
    body = chat_reply("Running the tests.", [("run_tests", "{}")])
    del body["usage"]
    server = scripted_endpoint([(200, body)])
    counter = TokenCounter("cl100k_base")
    config = ModelConfig(provider="openai", name="sim-coder", base_url=server.url, api_key_env=TEST_KEY_ENV)
    usage = make_upstream(config, seed=1, counter=counter).complete(MESSAGES, TOOL_SCHEMAS).usage
    assert usage.estimated and usage.cached_tokens == 0
    assert usage.prompt_tokens == counter.count_messages(MESSAGES) + counter.count_tools(TOOL_SCHEMAS)
    assert usage.completion_tokens == counter.count("Running the tests.") + counter.count("run_tests") + counter.count("{}")
    told = scripted_endpoint([(200, chat_reply("ok", [("run_tests", "{}")]))])
    reported = make_upstream(config.model_copy(update={"base_url": told.url}), seed=1, counter=counter)
    assert not reported.complete(MESSAGES, TOOL_SCHEMAS).usage.estimated


def test_an_anthropic_reply_without_usage_is_counted_by_the_runs_counter_and_marked(scripted_endpoint, api_key):
    body = anthropic_message("", [("run_tests", {})])
    body.pop("usage", None)
    server = scripted_endpoint([(200, body)])
    counter = TokenCounter("cl100k_base")
    config = ModelConfig(provider="anthropic", name="sim-coder", base_url=server.url.removesuffix("/v1"),
                         api_key_env=TEST_KEY_ENV)
    usage = make_upstream(config, seed=1, counter=counter).complete(MESSAGES, TOOL_SCHEMAS).usage
    assert usage.estimated and usage.cached_tokens == 0
    assert usage.prompt_tokens == counter.count_messages(MESSAGES) + counter.count_tools(TOOL_SCHEMAS)
