"""How a served model counts a request's prompt: a client for each server that counts (llama.cpp,
vLLM, Anthropic, OpenAI's Responses), the choice `model.tokenizer: auto` makes, the process's one
`endpoint` counter per endpoint (`ctxbench.harness.models.counters.EndpointCounter` counts through it),
and the counter `model.tokenizer` picks for a run or a gateway (`model_counter`). What is asked of each
server: docs/providers.md."""

from __future__ import annotations

import os
import threading
from typing import Any

import tiktoken

from ctxbench.harness.chat import content_text
from ctxbench.harness.config import ModelConfig
from ctxbench.harness.models.anthropic_provider import messages_request
from ctxbench.harness.models.counters import CalibratedCounter, EndpointCounter, PromptCounter
from ctxbench.harness.models.served import (ServerKind, TokenizerChoice, _Http,
                                            _identify)
from ctxbench.harness.redact import scrub
from ctxbench.harness.tokens import TokenCounter, TokenizerError

__all__ = ["prompt_counter", "choose_tokenizer", "endpoint_counter", "model_counter", "counter_for",
           "responses_request"]


class _LlamaCppCounter:
    """llama.cpp's own count: `/v1/chat/completions/input_tokens`, or `/apply-template` + `/tokenize`."""

    def __init__(self, http: _Http, model: str, whole: bool) -> None:
        self.http, self.model, self.whole = http, model, whole
        self.where = f"POST {http.base}/chat/completions/input_tokens" if whole else \
            f"POST {http.root}/apply-template + /tokenize"

    def count_prompt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        body = {"model": self.model, "messages": messages, **({"tools": tools} if tools else {})}
        if self.whole:
            return int(self.http.count(f"{self.http.base}/chat/completions/input_tokens", body, "input_tokens"))
        prompt = self.http.count(f"{self.http.root}/apply-template", body, "prompt")
        tokens = self.http.count(f"{self.http.root}/tokenize",
                                 {"content": prompt, "add_special": True, "parse_special": True}, "tokens")
        return len(tokens)

    def count_text(self, text: str) -> int:
        body = {"content": text, "add_special": False, "parse_special": True}
        return len(self.http.count(f"{self.http.root}/tokenize", body, "tokens"))


class _VllmCounter:
    """vLLM's `/tokenize` with messages and tools."""

    def __init__(self, http: _Http, model: str) -> None:
        self.http, self.model, self.where = http, model, f"POST {http.root}/tokenize"

    def count_prompt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        body = {"model": self.model, "messages": messages, "add_generation_prompt": True, "add_special_tokens": False,
                **({"tools": tools} if tools else {})}
        return int(self.http.count(f"{self.http.root}/tokenize", body, "count"))

    def count_text(self, text: str) -> int:
        body = {"model": self.model, "prompt": text, "add_special_tokens": False}
        return int(self.http.count(f"{self.http.root}/tokenize", body, "count"))


class _AnthropicCounter:
    """Anthropic's `/v1/messages/count_tokens`, of the request the `anthropic` provider would send."""

    def __init__(self, http: _Http) -> None:
        self.http, self.where = http, f"POST {http.base}/messages/count_tokens"

    def count_prompt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        request = messages_request(self.http.config, messages, tools)
        body = {k: request[k] for k in ("model", "system", "messages", "tools") if k in request}
        return int(self.http.count(f"{self.http.base}/messages/count_tokens", body, "input_tokens"))

    def count_text(self, text: str) -> int:
        return _text_by_difference(self, text)


class _ResponsesCounter:
    """OpenAI's `/v1/responses/input_tokens`, of the conversation as Responses input items."""

    def __init__(self, http: _Http, model: str) -> None:
        self.http, self.model, self.where = http, model, f"POST {http.base}/responses/input_tokens"

    def count_prompt(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> int:
        return int(self.http.count(f"{self.http.base}/responses/input_tokens",
                                   responses_request(self.model, messages, tools), "input_tokens"))

    def count_text(self, text: str) -> int:
        return _text_by_difference(self, text)


def _text_by_difference(counter: PromptCounter, text: str) -> int:
    """A text's tokens where the server only counts requests: a user message of it less one of `x` (one token)."""
    return counter.count_prompt([{"role": "user", "content": text}], []) - \
        counter.count_prompt([{"role": "user", "content": "x"}], []) + 1


def responses_request(model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """A chat conversation and its function tools as a Responses API request (`instructions`, `input`, `tools`)."""
    items: list[dict[str, Any]] = []
    system = []
    for m in messages:
        role, text = m.get("role"), content_text(m.get("content"))
        if role in ("system", "developer"):
            system.append(text)
        elif role == "tool":
            items.append({"type": "function_call_output", "call_id": str(m.get("tool_call_id") or ""), "output": text})
        else:
            if text or role != "assistant":
                items.append({"role": role, "content": text})
            items += [{"type": "function_call", "call_id": str(c.get("id") or ""), "name": c["function"]["name"],
                       "arguments": c["function"].get("arguments") or "{}"} for c in m.get("tool_calls") or ()]
    body: dict[str, Any] = {"model": model, "input": items}
    if system:
        body["instructions"] = "\n".join(system)
    if tools:
        body["tools"] = [{"type": "function", "name": f["name"], "description": f.get("description") or "",
                          "parameters": f.get("parameters") or {"type": "object", "properties": {}}}
                         for f in (t.get("function", t) for t in tools)]
    return body


_PROBE_TOOLS = [{"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": {
    "type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}}]
_PROBE_MESSAGES = [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "Hi."}]


def _counters(http: _Http, config: ModelConfig, kind: ServerKind) -> list[PromptCounter]:
    """The ways of counting worth trying at a server of `kind`, best first."""
    llama = [_LlamaCppCounter(http, config.name, True), _LlamaCppCounter(http, config.name, False)]
    vllm, responses = [_VllmCounter(http, config.name)], [_ResponsesCounter(http, config.name)]
    ways: dict[str, list[Any]] = {"anthropic": [_AnthropicCounter(http)], "llama.cpp": llama, "vllm": vllm,
                                  "openai": responses, "ollama": [], "sglang": [], "litellm": responses}
    return ways.get(kind, llama + vllm + responses)


def _works(counter: PromptCounter) -> str | None:
    """None when `counter` counts a probe request with its tools; else what is wrong."""
    try:
        bare, tooled = counter.count_prompt(_PROBE_MESSAGES, []), counter.count_prompt(_PROBE_MESSAGES, _PROBE_TOOLS)
        counter.count_text("Hello, world.")
    except Exception as exc:  # any refusal means this way is not available here
        return " ".join(str(exc).split())[:160] or type(exc).__name__
    return None if 0 < bare < tooled else f"the tools are not counted ({bare} tokens with and without them)"


def prompt_counter(config: ModelConfig, timeout_s: float | None = None) -> PromptCounter:
    """How the server at `config.base_url` counts a request's prompt, as `model.tokenizer: endpoint` asks it.

    Raises:
        TokenizerError: the server offers no way of counting a request with its tools.
        EndpointUnavailable: nothing answers.
    """
    counter, reason = _prompt_counter(config, timeout_s)
    if counter is None:
        raise TokenizerError(f"model.tokenizer: endpoint: {reason}; use calibrated")
    return counter


def _prompt_counter(config: ModelConfig, timeout_s: float | None) -> tuple[PromptCounter | None, str]:
    http = _Http(config, timeout_s or config.request_timeout_s)
    kind = _identify(http, config)[0]
    tried = []
    for counter in _counters(http, config, kind):
        problem = _works(counter)
        if problem is None:
            return counter, f"{kind} counts whole requests ({counter.where})"
        tried.append(f"{counter.where}: {problem}")
    what = "; ".join(tried) if tried else "it has no endpoint that counts a request with its tools"
    return None, scrub(f"{kind} server at {http.base}: {what}")


def choose_tokenizer(config: ModelConfig, timeout_s: float | None = None) -> TokenizerChoice:
    """What `model.tokenizer: auto` takes for `config`: the encoding tiktoken knows for a model of
    OpenAI's; else `endpoint` where the server counts whole requests; else `calibrated`.

    Raises:
        EndpointUnavailable: nothing answers.
    """
    try:
        encoding = tiktoken.encoding_name_for_model(config.name)
    except KeyError:
        encoding = None
    if encoding and config.provider == "openai":
        return TokenizerChoice(encoding, f"tiktoken knows {config.name!r} ({encoding})")
    counter, reason = _prompt_counter(config, timeout_s)
    if counter is not None:
        return TokenizerChoice("endpoint", reason)
    return TokenizerChoice("calibrated", f"{reason}: tiktoken's counts scaled by the prompt tokens it reports")


_SHARED: dict[tuple[Any, ...], Any] = {}
_SHARED_LOCK = threading.Lock()


def endpoint_counter(config: ModelConfig, tools: list[dict[str, Any]]) -> EndpointCounter:
    """The process's one `endpoint` counter for `config`'s endpoint and model and requests with `tools`
    (its caches serve every run in flight; the counters of other tool sets, `for_tools`, share them);
    the way of counting is found once per endpoint.

    Raises:
        TokenizerError: the server offers no way of counting a request with its tools.
        EndpointUnavailable: nothing answers.
    """
    endpoint = (os.getpid(), config.provider, config.base_url, config.name, config.api_key_env)
    with _SHARED_LOCK:
        if endpoint not in _SHARED:
            _SHARED[endpoint] = EndpointCounter(prompt_counter(config))
        counter: EndpointCounter = _SHARED[endpoint]
    return counter.for_tools(tools)


_ENCODINGS: dict[str, TokenCounter] = {}


def counter_for(name: str) -> TokenCounter:
    """One tiktoken counter (and cache) per encoding per process."""
    if name not in _ENCODINGS:
        _ENCODINGS[name] = TokenCounter(name)
    return _ENCODINGS[name]


def model_counter(config: ModelConfig, tools: list[dict[str, Any]]) -> TokenCounter:
    """The counter of requests to `config`'s model with `tools`, in the model's own tokens where
    `model.tokenizer` says so: the endpoint's (one per process and endpoint, its caches shared by the
    runs and conversations in flight; other tools through its `for_tools`), a calibrated one (a new one:
    it learns from the usage each reply reports, `learn_from_reply`), else tiktoken's. `auto` takes
    what `choose_tokenizer` chooses.

    Raises:
        TokenizerError: the tokenizer cannot be loaded, or the server offers no way of counting.
        EndpointUnavailable: nothing answers.
    """
    tokenizer = choose_tokenizer(config).tokenizer if config.tokenizer == "auto" else config.tokenizer
    if tokenizer == "endpoint":
        return endpoint_counter(config, tools)
    if tokenizer == "calibrated":
        return CalibratedCounter()
    return counter_for(tokenizer)
