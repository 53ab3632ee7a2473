"""`openai`: any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server, LiteLLM proxy).

Errors are mapped onto the typed errors of `ctxbench.harness.models.base`:

- 400 with code `context_length_exceeded` (or a message saying the context is too long)
  -> ContextLengthExceeded (the run ends as `context_overflow`);
- 401 / 403, 404, any other 4xx -> FatalModelError (the experiment stops);
- 408, 409, 429, 5xx, connection errors, timeouts -> retried `max_retries` times with exponential
  backoff and jitter, then TransientModelError (the run ends as `model_error`);
- a reply without a readable choice -> MalformedOutput (an invalid-action observation).

Tool-call arguments are passed through raw, even when they are not valid JSON: the toolbox turns
them (and unknown tool names) into invalid-action observations the agent can recover from.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import time
from typing import TYPE_CHECKING, Any

from ctxbench.harness.config import ModelConfig
from ctxbench.harness.errors import EndpointUnavailable
from ctxbench.harness.models.base import (Completion, ContextLengthExceeded, FatalModelError, MalformedOutput,
                                          TransientModelError, Usage)
from ctxbench.harness.records import ToolCall
from ctxbench.harness.tokens import TokenCounter

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIModel", "preflight", "BASE_DELAY_S", "MAX_DELAY_S", "NO_KEY", "PREFLIGHT_TIMEOUT_S"]

BASE_DELAY_S = 1.0
"""First retry waits about this long; each further retry doubles it (with jitter)."""
MAX_DELAY_S = 60.0
"""No single wait is longer, whatever the backoff or a Retry-After header says."""
NO_KEY = "no-key"
"""Key sent when `api_key_env` is not set (local servers that need none)."""

PREFLIGHT_TIMEOUT_S = 5.0
"""How long the check before a run waits for the endpoint (connect and reply), without retries."""

_RETRIED_STATUS = {408, 409, 429}
_CONTEXT_MESSAGE = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long|"
    r"exceeds? the (available )?context|input is too long", re.I)


class OpenAIModel:
    """One run's model behind an OpenAI-compatible endpoint, with fixed sampling parameters.

    The API key is read from the environment variable named by `config.api_key_env` into the client
    only; pickling the model keeps the config and seed and reads the key again on unpickling.
    """

    def __init__(self, config: ModelConfig, seed: int) -> None:
        self.config = config
        self.seed = seed
        self._counter: Any = None
        self._client = _client(config)

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "seed": self.seed}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"], state["seed"])

    def __repr__(self) -> str:
        return f"OpenAIModel(name={self.config.name!r}, base_url={self.config.base_url!r}, seed={self.seed})"

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Completion:
        """One chat completion; retries transient failures, raises the typed errors of `ctxbench.harness.models.base`."""
        c = self.config
        request: dict[str, Any] = dict(model=c.name, messages=messages, temperature=c.temperature, top_p=c.top_p,
                                       max_tokens=c.max_output_tokens, seed=self.seed)
        if tools:
            request["tools"] = tools
        import openai  # an optional extra: imported when a request is made

        attempts = c.max_retries + 1
        for attempt in range(attempts):
            try:
                response = self._client.chat.completions.create(**request)
            except openai.APIStatusError as exc:
                error = _status_error(exc, c)
                if not isinstance(error, TransientModelError):
                    raise error from None
                retry_after = _retry_after(exc)
            except openai.APIConnectionError as exc:  # includes APITimeoutError
                kind = "timed out" if isinstance(exc, openai.APITimeoutError) else "connection failed"
                error, retry_after = TransientModelError(f"{kind} ({c.base_url or 'api.openai.com'}): {exc}"), 0.0
            except openai.APIResponseValidationError as exc:
                raise MalformedOutput(f"the reply could not be read: {exc}") from None
            else:
                return self._completion(response, messages)
            if attempt + 1 < attempts:
                time.sleep(min(MAX_DELAY_S, max(retry_after, _backoff(attempt))))
        raise TransientModelError(f"{error} (gave up after {attempts} attempts)")

    def _completion(self, response: Any, messages: list[dict[str, Any]]) -> Completion:
        try:
            message = response.choices[0].message
        except (AttributeError, IndexError, TypeError):
            raise MalformedOutput(f"the reply has no choice to read: {str(response)[:200]!r}") from None
        text = message.content or ""
        calls = []
        for i, call in enumerate(message.tool_calls or ()):
            function = getattr(call, "function", None)
            name = function.name if function is not None else getattr(call, "type", "unknown")
            arguments = (function.arguments if function is not None else "") or ""
            call_id = call.id or "call_" + hashlib.sha256(json.dumps([len(messages), i, name, arguments]).encode()).hexdigest()[:10]
            calls.append(ToolCall(call_id, name or "", arguments))
        return Completion(text, tuple(calls), self._usage(response.usage, messages, text, calls))

    def _usage(self, usage: Any, messages: list[dict[str, Any]], text: str, calls: list[ToolCall]) -> Usage:
        if usage is not None:
            details = getattr(usage, "prompt_tokens_details", None)
            cached = getattr(details, "cached_tokens", None) or 0
            return Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0, cached)
        if self._counter is None:  # the endpoint reported no usage: count with the experiment's tokenizer
            self._counter = TokenCounter(self.config.tokenizer)
        emitted = self._counter.count(text) + sum(self._counter.count(c.name) + self._counter.count(c.arguments)
                                                  for c in calls)
        return Usage(self._counter.count_messages(messages), emitted)


def _client(config: ModelConfig) -> openai.OpenAI:
    if config.api_key_env:
        key = os.environ.get(config.api_key_env)
        if not key:
            raise FatalModelError(f"model.api_key_env: environment variable {config.api_key_env} is not set")
    else:
        key = NO_KEY
    import openai  # an optional extra

    return openai.OpenAI(base_url=config.base_url, api_key=key, max_retries=0, timeout=config.request_timeout_s)


def preflight(config: ModelConfig) -> None:
    """Before anything is written: the key variable is set, `GET {base_url}/models` answers within
    PREFLIGHT_TIMEOUT_S with a model list, and the key is accepted.

    Raises:
        EndpointUnavailable: one line naming the variable or the URL and the cause.
    """
    import openai  # an optional extra

    if config.api_key_env and not os.environ.get(config.api_key_env):
        raise EndpointUnavailable(f"model.api_key_env: environment variable {config.api_key_env} is not set "
                                  "(it must hold the API key)")
    client = _client(config).with_options(timeout=min(PREFLIGHT_TIMEOUT_S, config.request_timeout_s), max_retries=0)
    url = f"{str(client.base_url).rstrip('/')}/models"
    try:
        client.models.list()
    except openai.APIConnectionError as exc:
        kind = "timed out" if isinstance(exc, openai.APITimeoutError) else "cannot connect"
        cause = exc.__cause__ or exc
        raise EndpointUnavailable(f"model.base_url: {kind}: GET {url}: {' '.join(str(cause).split())[:300]}") from None
    except openai.APIStatusError as exc:
        status = exc.status_code
        if status in (401, 403):
            key = f"the key in ${config.api_key_env}" if config.api_key_env else "no key (model.api_key_env is not set)"
            raise EndpointUnavailable(f"model.api_key_env: GET {url} refused {key} ({status}): {_one_line(exc)}") from None
        hint = " (an OpenAI-compatible base_url usually ends in /v1)" if status == 404 and not url.endswith("/v1/models") else ""
        raise EndpointUnavailable(f"model.base_url: GET {url} answered HTTP {status}{hint}: {_one_line(exc)}") from None
    except openai.APIError as exc:
        raise EndpointUnavailable(f"model.base_url: GET {url} gave a reply that is not an OpenAI-compatible "
                                  f"model list: {' '.join(str(exc).split())[:300]}") from None


def _status_error(exc: openai.APIStatusError, config: ModelConfig) -> Exception:
    status = exc.status_code
    where = config.base_url or "api.openai.com"
    detail = _one_line(exc)
    if status == 400 and (exc.code == "context_length_exceeded" or _CONTEXT_MESSAGE.search(detail)):
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
    body = exc.body
    message = body.get("message") if isinstance(body, dict) else None
    return " ".join(str(message or exc.message or exc).split())[:500]


def _retry_after(exc: openai.APIStatusError) -> float:
    try:
        return float(exc.response.headers.get("retry-after", 0))
    except (TypeError, ValueError):
        return 0.0


def _backoff(attempt: int) -> float:
    """Exponential backoff with jitter: between half and all of BASE_DELAY_S * 2**attempt."""
    return BASE_DELAY_S * 2 ** attempt * random.uniform(0.5, 1.0)
