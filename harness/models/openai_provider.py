"""`openai`: any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server, LiteLLM proxy).

Errors are mapped onto the typed errors of `ctxbench.harness.protocols`:

- 400 with code `context_length_exceeded` (or a message saying the context is too long)
  -> ContextLengthExceeded (the run ends as `context_overflow`);
- 401 / 403, 404, any other 4xx -> FatalModelError (the experiment stops);
- 408, 409, 429, 5xx, connection errors, timeouts, and a 200 that is not a chat completion (HTML,
  JSON cut short, no choice, a null message: UnreadableReply) -> retried with exponential backoff
  and jitter for up to `retry_budget_s` seconds, then TransientModelError (the run ends as
  `model_error`).

The retry loop, `call_with_retries`, is shared with the `anthropic` provider.

Every text taken from the endpoint (replies, error bodies) is scrubbed of key values
(`ctxbench.harness.redact`) before anything else sees it.

Tool-call arguments are passed through raw, even when they are not valid JSON: the toolbox turns
them (and unknown tool names) into invalid-action observations the agent can recover from.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import random
import re
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Mapping

from ctxbench.harness.concurrency import endpoint_limit
from ctxbench.harness.config import ModelConfig
from ctxbench.harness.errors import EndpointUnavailable, InputError, did_you_mean
from ctxbench.harness.protocols import (Completion, ContextLengthExceeded, FatalModelError, TransientModelError,
                                          UnreadableReply, Usage)
from ctxbench.harness.redact import remember_key_variable, scrub
from ctxbench.harness.records import ToolCall
from ctxbench.harness.tokens import TokenCounter

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIModel", "preflight", "call_with_retries", "BASE_DELAY_S", "MAX_DELAY_S", "NO_KEY",
           "PREFLIGHT_TIMEOUT_S", "CONTEXT_MESSAGE", "retry_after_s", "shared_client", "status_error"]

BASE_DELAY_S = 1.0
"""First retry of a failed call waits about this long; each further retry doubles it (with jitter). A
refused call (429 / 503) waits about one round trip of the endpoint instead, at least half of this."""
MAX_DELAY_S = 60.0
"""No single wait is longer, whatever the backoff or a Retry-After header says."""
NO_KEY = "no-key"
"""Key sent when `api_key_env` is not set (local servers that need none)."""
PREFLIGHT_TIMEOUT_S = 5.0
"""How long the check before a run waits for the endpoint (connect and reply), without retries."""

_RETRIED_STATUS = {408, 409, 429}
_THROTTLED_STATUS = {429, 503}
"""Statuses that lower the endpoint's limit of calls in flight (ctxbench.harness.concurrency)."""
CONTEXT_MESSAGE = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long|"
    r"exceeds? the (available )?context|input is too long", re.I)
"""How endpoints word a 400 for a request over the context window, where they give no code."""


class OpenAIModel:
    """One run's model behind an OpenAI-compatible endpoint, with fixed sampling parameters.

    The API key is read from the environment variable named by `config.api_key_env` into the client
    only; pickling the model keeps the config and seed and reads the key again on unpickling.
    """

    takes_cache_marks: ClassVar[bool] = False

    def __init__(self, config: ModelConfig, seed: int) -> None:
        self.config = config
        self.seed = seed
        self._counter: Any = None
        self._client = _client(config)

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "seed": self.seed}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.config, self.seed, self._counter = state["config"], state["seed"], None
        self._client = _client(self.config)

    def __repr__(self) -> str:
        return f"OpenAIModel(name={self.config.name!r}, base_url={self.config.base_url!r}, seed={self.seed})"

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Completion:
        """One chat completion; retries transient failures, raises the typed errors of `ctxbench.harness.protocols`."""
        c = self.config
        request: dict[str, Any] = dict(model=c.name, messages=messages, temperature=c.temperature, top_p=c.top_p,
                                       max_tokens=c.max_output_tokens, seed=self.seed)
        if tools:
            request["tools"] = tools
        return call_with_retries(c, c.base_url or "api.openai.com", lambda: self._attempt(request, messages))

    def _attempt(self, request: dict[str, Any], messages: list[dict[str, Any]]) -> Completion:
        """One request; raises the typed errors, TransientModelError (with `retry_after`) for what is retried."""
        import openai  # an optional extra: imported when a request is made
        from openai.types.chat import ChatCompletion

        where = self.config.base_url or "api.openai.com"
        try:
            # the request as it is: `chat.completions.create` would first walk every message and tool
            # schema against its parameter types (~10 ms of CPU a call, most of a trivial run's)
            response = self._client.post("/chat/completions", body=request, cast_to=ChatCompletion)
        except openai.APIStatusError as exc:
            error = _status_error(exc, self.config)
            if isinstance(error, TransientModelError):
                error.retry_after = retry_after_s(exc.response.headers)
                error.throttled = exc.status_code in _THROTTLED_STATUS
            raise error from None
        except openai.APIConnectionError as exc:  # includes APITimeoutError
            kind = "timed out" if isinstance(exc, openai.APITimeoutError) else "connection failed"
            raise TransientModelError(scrub(f"{kind} ({where}): {exc}")) from None
        except (openai.APIResponseValidationError, json.JSONDecodeError) as exc:
            raise UnreadableReply(scrub(f"unreadable reply from {where} (not a chat completion): "
                                        f"{' '.join(str(exc).split())[:200]}")) from None
        return self._completion(response, messages, where)

    def _completion(self, response: Any, messages: list[dict[str, Any]], where: str) -> Completion:
        choices = getattr(response, "choices", None)
        message = getattr(choices[0], "message", None) if isinstance(choices, list) and choices else None
        if message is None:
            raise UnreadableReply(scrub(f"unreadable reply from {where} (no choice with a message): "
                                        f"{' '.join(str(response).split())[:200]!r}"))
        text = scrub(message.content or "")
        calls = []
        for i, call in enumerate(message.tool_calls or ()):
            function = getattr(call, "function", None)
            name = scrub((function.name if function is not None else getattr(call, "type", "unknown")) or "")
            arguments = scrub((function.arguments if function is not None else "") or "")
            call_id = call.id or "call_" + hashlib.sha256(json.dumps([len(messages), i, name, arguments]).encode()).hexdigest()[:10]
            calls.append(ToolCall(call_id, name, arguments))
        return Completion(text, tuple(calls), self._usage(response.usage, messages, text, calls))

    def _usage(self, usage: Any, messages: list[dict[str, Any]], text: str, calls: list[ToolCall]) -> Usage:
        if usage is not None:
            details = getattr(usage, "prompt_tokens_details", None)
            cached = getattr(details, "cached_tokens", None) or 0
            written = (getattr(details, "cache_write_tokens", None) or getattr(details, "cache_creation_tokens", None)
                       or getattr(usage, "cache_creation_input_tokens", None) or 0)  # as OpenRouter, LiteLLM name it
            reasoning = getattr(getattr(usage, "completion_tokens_details", None), "reasoning_tokens", None) or 0
            return Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0, cached, int(written), int(reasoning))
        if self._counter is None:  # the endpoint reported no usage: count with the experiment's tokenizer
            self._counter = TokenCounter(self.config.tokenizer)
        emitted = self._counter.count(text) + sum(self._counter.count(c.name) + self._counter.count(c.arguments)
                                                  for c in calls)
        return Usage(self._counter.count_messages(messages), emitted)


def call_with_retries(config: ModelConfig, where: str, attempt: Callable[[], Completion]) -> Completion:
    """`attempt()` (one request to the endpoint `where`) until it answers, within the endpoint's limit of
    calls in flight (`ctxbench.harness.concurrency`, keyed by `where`).

    A TransientModelError is retried for up to `config.retry_budget_s`: a throttled one (the endpoint
    refused for load: 429, 503, Anthropic's 529) lowers the limit and waits about one round trip in its slot, any other waits an exponential backoff
    with jitter outside it; a `Retry-After` is honoured in both. Every other error propagates at once.
    The delays are read from BASE_DELAY_S and MAX_DELAY_S of this module when they are needed.

    Returns:
        The completion, with `retried_s` the seconds spent on the failing endpoint before it.

    Raises:
        TransientModelError: the request has been failing for all of `config.retry_budget_s`.
    """
    tries, failing_since = 0, None
    gate = endpoint_limit(where, config.max_connections)
    while True:
        with gate.call() as slot:
            while True:
                error: TransientModelError | None = None
                try:
                    completion = attempt()
                except TransientModelError as exc:
                    error = exc
                if error is None:
                    slot.settle("answered")
                    break
                failing_since = slot.started if failing_since is None else failing_since
                if not error.throttled:
                    break  # backs off without its slot
                slot.settle("throttled")  # lowers the limit at once
                # a refusal keeps its slot through its wait (about one round trip) and retries in it:
                # the lowered limit, counting these, is what sheds the load
                time.sleep(_pause(config, error, gate.retry_wait(BASE_DELAY_S), tries, failing_since))
                tries += 1
                slot.again()
            started = slot.started
        if error is None:
            retried = 0.0 if failing_since is None else started - failing_since
            return dataclasses.replace(completion, retried_s=round(retried, 3))
        assert failing_since is not None
        time.sleep(_pause(config, error, _backoff(tries), tries, failing_since))
        tries += 1


def _pause(config: ModelConfig, error: TransientModelError, wait: float, tries: int, failing_since: float) -> float:
    """How long to wait before the next attempt: `wait`, or longer when the endpoint's `Retry-After`
    says so, at most MAX_DELAY_S and what is left of the retry budget.

    Raises:
        TransientModelError: the request has been failing for all of `model.retry_budget_s`.
    """
    budget = config.retry_budget_s
    failing = time.monotonic() - failing_since
    if budget - failing <= 0:
        raise TransientModelError(f"{error} (still failing after {failing:.1f} s and {tries + 1} "
                                  f"attempts; model.retry_budget_s is {budget:g} s)") from None
    return min(budget - failing, MAX_DELAY_S, max(error.retry_after, wait))


def shared_client(config: ModelConfig, kind: str, build: Callable[[ModelConfig, str], Any]) -> Any:
    """The one client of `kind` (a provider's official client, built by `build(config, key)` without
    its own retries: ours are time-bounded) for `config`'s endpoint, key and timeout in this process,
    shared by its runs in flight (threads), so its connections are kept alive from run to run.

    Raises:
        FatalModelError: the variable named by `api_key_env` is not set.
    """
    remember_key_variable(config.api_key_env)
    if config.api_key_env:
        key = os.environ.get(config.api_key_env)
        if not key:
            raise FatalModelError(f"model.api_key_env: environment variable {config.api_key_env} is not set")
    else:
        key = NO_KEY
    which = (os.getpid(), config.base_url, key, config.request_timeout_s)  # a forked child builds its own
    with _CLIENTS_LOCK:
        clients = _CLIENTS.setdefault(kind, {})
        if which not in clients:
            clients.clear()  # another process's (before a fork) or another key's: not used again here
            clients[which] = build(config, key)
        return clients[which]


_CLIENTS: dict[str, dict[tuple[int, str | None, str, float], Any]] = {}
_CLIENTS_LOCK = threading.Lock()


def _client(config: ModelConfig) -> openai.OpenAI:
    return shared_client(config, "openai", _new_client)


def _new_client(config: ModelConfig, key: str) -> openai.OpenAI:
    import openai  # an optional extra

    from openai._constants import DEFAULT_CONNECTION_LIMITS

    # the client's HTTP library's Limits, with every connection kept alive (the default keeps 100):
    # hundreds of runs in flight would otherwise open a connection per call
    pool = DEFAULT_CONNECTION_LIMITS.max_connections
    limits = type(DEFAULT_CONNECTION_LIMITS)(max_connections=pool, max_keepalive_connections=pool)
    return openai.OpenAI(base_url=config.base_url, api_key=key, max_retries=0, timeout=config.request_timeout_s,
                         http_client=openai.DefaultHttpxClient(limits=limits))


def preflight(config: ModelConfig) -> None:
    """Before anything is written: the key variable is set, `GET {base_url}/models` answers within
    PREFLIGHT_TIMEOUT_S with a model list that holds `config.name`, and the key is accepted.

    Raises:
        EndpointUnavailable: the variable is unset, nothing answers, the key is refused (exit 3).
        InputError: the answer is not a model list, or it lacks `model.name` (exit 2).
    """
    import openai  # an optional extra

    if config.api_key_env and not os.environ.get(config.api_key_env):
        raise EndpointUnavailable(f"model.api_key_env: environment variable {config.api_key_env} is not set "
                                  "(it must hold the API key)")
    client = _client(config).with_options(timeout=min(PREFLIGHT_TIMEOUT_S, config.request_timeout_s), max_retries=0)
    url = f"{str(client.base_url).rstrip('/')}/models"
    try:
        reply = client.models.with_raw_response.list().http_response
    except openai.APIConnectionError as exc:
        kind = "timed out" if isinstance(exc, openai.APITimeoutError) else "cannot connect"
        cause = exc.__cause__ or exc
        raise EndpointUnavailable(scrub(f"model.base_url: {kind}: GET {url}: {' '.join(str(cause).split())[:300]}")) from None
    except openai.APIStatusError as exc:
        status = exc.status_code
        if status in (401, 403):
            key = f"the key in ${config.api_key_env}" if config.api_key_env else "no key (model.api_key_env is not set)"
            raise EndpointUnavailable(f"model.api_key_env: GET {url} refused {key} ({status}): {_one_line(exc)}") from None
        hint = " (an OpenAI-compatible base_url usually ends in /v1)" if status == 404 and not url.endswith("/v1/models") else ""
        raise EndpointUnavailable(f"model.base_url: GET {url} answered HTTP {status}{hint}: {_one_line(exc)}") from None
    served = _model_ids(reply.content, reply.headers.get("content-type", "?"), url)
    if config.name not in served and f"{config.name}:latest" not in served:
        listed = ", ".join(sorted(served)[:20]) + (", ..." if len(served) > 20 else "") if served else "no model"
        raise InputError(scrub(f"model.name: {config.name!r} is not served by {config.base_url or 'api.openai.com'} "
                               f"(GET {url} lists {listed}){did_you_mean(config.name, sorted(served))}"))


def _model_ids(body: bytes, content_type: str, url: str) -> set[str]:
    """The model ids of a `/models` reply.

    Raises:
        InputError: the reply is not an OpenAI-compatible model list (`{"data": [{"id": ...}, ...]}`).
    """
    try:
        listing = json.loads(body)
    except ValueError:
        listing = None
    models = listing.get("data") if isinstance(listing, dict) else None
    if isinstance(models, list) and all(isinstance(m, dict) and isinstance(m.get("id"), str) for m in models):
        return {m["id"] for m in models}
    start = " ".join(body[:120].decode(errors="replace").split())
    raise InputError(scrub(f"model.base_url: GET {url} answered 200 with {content_type} that is not an "
                           f"OpenAI-compatible model list ({{\"data\": [{{\"id\": ...}}]}}): {start!r}; "
                           "check that base_url is the API's (it usually ends in /v1)"))


def _status_error(exc: openai.APIStatusError, config: ModelConfig) -> Exception:
    return status_error(exc.status_code, _one_line(exc), config, config.base_url or "api.openai.com",
                        too_long=exc.code == "context_length_exceeded")


def status_error(status: int, detail: str, config: ModelConfig, where: str, too_long: bool = False) -> Exception:
    """The typed error for an endpoint's HTTP error `status` (its message `detail`, scrubbed): a request
    over the window (400 saying so, or `too_long`: the provider's own code for it), a refused key, a
    model not found, what is retried (408, 409, 429, 5xx), or any other bad request."""
    if status == 400 and (too_long or CONTEXT_MESSAGE.search(detail)):
        return ContextLengthExceeded(detail)
    if status in (401, 403):
        key = f"the key in ${config.api_key_env}" if config.api_key_env else "model.api_key_env (not set)"
        return FatalModelError(f"authentication failed ({status}) at {where}: {detail}; check {key}")
    if status == 404:
        return FatalModelError(f"not found (404) at {where}: {detail}; check model.name {config.name!r} "
                               f"and model.base_url")
    if status in _RETRIED_STATUS or status >= 500:
        return TransientModelError(f"HTTP {status} from {where}: {detail}")
    return FatalModelError(f"bad request ({status}) at {where}: {detail}")


def _one_line(exc: openai.APIStatusError) -> str:
    """The error body's message on one line, scrubbed of keys."""
    body = exc.body
    message = body.get("message") if isinstance(body, dict) else None
    return scrub(" ".join(str(message or exc.message or exc).split())[:500])


def retry_after_s(headers: Mapping[str, str]) -> float:
    """The seconds a reply's `Retry-After` header asks to wait; 0 when it says none (or a date)."""
    try:
        return float(headers.get("retry-after", 0))
    except (TypeError, ValueError):
        return 0.0


def _backoff(attempt: int) -> float:
    """Exponential backoff with jitter: between half and all of BASE_DELAY_S * 2**attempt."""
    return BASE_DELAY_S * 2 ** attempt * random.uniform(0.5, 1.0)
