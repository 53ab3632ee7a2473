"""What a model's server says about itself: which server it is, and the window it serves and its slots
(for the preflight to compare with `model.context_window`); how it counts a request's prompt is
`ctxbench.harness.models.served_counting`.

The window, per server (None where the server does not say):

- llama.cpp: `GET /props`: `default_generation_settings.n_ctx`, the window of one slot (`-c` divided
  by `--parallel`), and `total_slots`; the model's training window from `GET /v1/models`
  (`data[].meta.n_ctx_train`).
- vLLM: `GET /v1/models`: the model's `max_model_len`.
- SGLang: `GET /v1/models`: `max_model_len`, where its version lists it.
- Ollama: `POST /api/show`: the model's `num_ctx` parameter; else `GET /api/ps`: the
  `context_length` of the model as loaded; `model_info.<arch>.context_length` is its training window.
- LiteLLM: `GET /model/info`: the model's `max_input_tokens` (from LiteLLM's model list, not asked of
  the backend).
- OpenAI, Anthropic: not said.

Counting a request's prompt as the server reports `usage.prompt_tokens`:

- llama.cpp: `POST /v1/chat/completions/input_tokens` (recent builds), else `POST /apply-template`
  (messages and tools, rendered by the chat template as a completion would be) then `POST /tokenize`
  of that prompt with `add_special` and `parse_special`, as a completion tokenizes it;
- vLLM: `POST /tokenize` with `messages`, `tools` and `add_generation_prompt`;
- Anthropic: `POST /v1/messages/count_tokens`;
- OpenAI: `POST /v1/responses/input_tokens` (the Responses API's framing of the same conversation:
  within a few tokens of a chat completion's count).

SGLang's `/v1/tokenize` leaves the tools out and Ollama has no tokenizer endpoint: they are
`calibrated`. Only the standard library's HTTP client is used, with the endpoint's key when
`model.api_key_env` names one; every text taken from a server is scrubbed of key values.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit


from ctxbench.harness.config import ModelConfig
from ctxbench.harness.errors import EndpointUnavailable, InputError
from ctxbench.harness.models.anthropic_provider import DEFAULT_BASE_URL as ANTHROPIC_ROOT
from ctxbench.harness.protocols import FatalModelError, TransientModelError
from ctxbench.harness.redact import remember_key_variable, scrub

__all__ = ["ServerKind", "ServedWindow", "TokenizerChoice", "served_window", "resolve_window", "identify_server",
           "OPENAI_BASE_URL",
           "COUNT_TRIES", "PROBE_TIMEOUT_S"]

ServerKind = Literal["llama.cpp", "vllm", "sglang", "ollama", "litellm", "openai", "anthropic", "unknown"]
OPENAI_BASE_URL = "https://api.openai.com/v1"
PROBE_TIMEOUT_S = 5.0
"""How long a question about the server (its kind, window, ways of counting) waits for its answer."""
COUNT_TRIES = 3
"""A count the server fails to answer (no connection, 5xx, 429) is asked this many times, a second apart
at most, before it fails as a TransientModelError."""


@dataclass(frozen=True)
class ServedWindow:
    """What the server says about the window it serves."""

    server: ServerKind
    """Which server answers at `model.base_url`."""
    window: int | None
    """Tokens one request may take (prompt and reply) as served, per slot; None when the server does not say."""
    slots: int | None
    """Requests the server serves at once (llama.cpp's slots); None when it does not say."""
    trained: int | None
    """The model's own (training) window, where the server says it."""
    source: str
    """Where the figures were read, or why there are none."""


@dataclass(frozen=True)
class TokenizerChoice:
    """What `model.tokenizer: auto` becomes for an endpoint, and why."""

    tokenizer: str
    """`endpoint`, `calibrated` or a tiktoken encoding."""
    reason: str
    """One line saying why."""


class _Http:
    """JSON over HTTP to one endpoint, with its key."""

    def __init__(self, config: ModelConfig, timeout_s: float) -> None:
        self.config, self.timeout_s = config, timeout_s
        if config.provider == "anthropic":
            self.root = (config.base_url or ANTHROPIC_ROOT).rstrip("/")
            self.base = self.root + "/v1"
        else:
            self.base = (config.base_url or OPENAI_BASE_URL).rstrip("/")
            self.root = self.base.removesuffix("/v1")
        remember_key_variable(config.api_key_env)
        key = os.environ.get(config.api_key_env) if config.api_key_env else None
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if config.provider == "anthropic":
            self.headers["anthropic-version"] = "2023-06-01"
            if key:
                self.headers["x-api-key"] = key
        elif key:
            self.headers["Authorization"] = f"Bearer {key}"

    def ask(self, method: str, url: str, body: Any = None) -> tuple[int, Any]:
        """(status, JSON body or None when it is not JSON).

        Raises:
            OSError: nothing answered (no connection, timeout).
        """
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(url, data=data, method=method, headers=self.headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as reply:
                status, raw = reply.status, reply.read()
        except urllib.error.HTTPError as exc:
            status, raw = exc.code, exc.read()
        try:
            return status, json.loads(raw)
        except ValueError:
            return status, None

    def probe(self, method: str, url: str, body: Any = None) -> Any:
        """The JSON a 200 carries, None for any other answer.

        Raises:
            EndpointUnavailable: nothing answers at all.
        """
        try:
            status, reply = self.ask(method, url, body)
        except OSError as exc:
            raise EndpointUnavailable(scrub(f"model.base_url: cannot connect: {method} {url}: "
                                            f"{' '.join(str(exc).split())[:300]}")) from None
        return reply if status == 200 else None

    def count(self, url: str, body: Any, field: str) -> Any:
        """`reply[field]` of a counting request, asked up to COUNT_TRIES times while it fails transiently.

        Raises:
            TransientModelError: it still fails (no connection, 5xx, 429), the answer lacks `field`, or the
                server refuses this request (a 4xx other than the next): the run ends as `model_error`.
            FatalModelError: the server refuses the key (401, 403) or knows no such endpoint (404).
        """
        problem = ""
        for attempt in range(COUNT_TRIES):
            if attempt:
                time.sleep(min(1.0, 0.25 * 2 ** attempt))
            try:
                status, reply = self.ask("POST", url, body)
            except OSError as exc:
                problem = f"connection failed: {' '.join(str(exc).split())[:200]}"
                continue
            if status == 200 and isinstance(reply, dict) and field in reply:
                return reply[field]
            detail = _detail(reply)
            if status == 200 or status in (408, 409, 429) or status >= 500:
                problem = f"HTTP {status}: {detail}" if status != 200 else f"no {field!r} in the answer: {detail}"
                continue
            refused = scrub(f"counting tokens: POST {url} answered HTTP {status}: {detail}")
            raise FatalModelError(refused) if status in (401, 403, 404) else TransientModelError(refused)
        raise TransientModelError(scrub(f"counting tokens: POST {url}: {problem}"))


def _detail(reply: Any) -> str:
    if isinstance(reply, dict):
        error = reply.get("error")
        message = error.get("message") if isinstance(error, dict) else error or reply.get("message")
        if message:
            return " ".join(str(message).split())[:300]
    return " ".join(json.dumps(reply).split())[:300]


def _listed(http: _Http) -> list[dict[str, Any]]:
    """The entries of `GET {base}/models` (empty when there is no list)."""
    listing = http.probe("GET", f"{http.base}/models")
    data = listing.get("data") if isinstance(listing, dict) else None
    return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []


def _entry(entries: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The listed model named `name` (Ollama's `:latest` too), else the only one listed, else {}."""
    for entry in entries:
        if entry.get("id") in (name, f"{name}:latest") or entry.get("model_name") == name:
            return entry
    return entries[0] if len(entries) == 1 else {}


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def identify_server(config: ModelConfig, timeout_s: float = PROBE_TIMEOUT_S) -> ServerKind:
    """Which server answers at `config.base_url`, from what it serves (`/v1/models`' `owned_by`, then
    llama.cpp's `/props`, Ollama's `/api/version`, LiteLLM's `/model/info`, SGLang's `/get_model_info`).

    Raises:
        EndpointUnavailable: nothing answers.
    """
    return _identify(_Http(config, timeout_s), config)[0]


def _identify(http: _Http, config: ModelConfig) -> tuple[ServerKind, list[dict[str, Any]]]:
    if config.provider == "anthropic":
        return "anthropic", []
    if urlsplit(http.base).hostname == "api.openai.com":
        return "openai", []
    entries = _listed(http)
    owners = {str(e.get("owned_by", "")).lower() for e in entries}
    for owner, kind in (("llamacpp", "llama.cpp"), ("vllm", "vllm"), ("sglang", "sglang"), ("library", "ollama"),
                        ("ollama", "ollama")):
        if owner in owners:
            return kind, entries  # type: ignore[return-value]
    props = http.probe("GET", f"{http.root}/props")
    if isinstance(props, dict) and "default_generation_settings" in props:
        return "llama.cpp", entries
    version = http.probe("GET", f"{http.root}/api/version")
    if isinstance(version, dict) and "version" in version:
        return "ollama", entries
    if _litellm_info(http) is not None:
        return "litellm", entries
    info = http.probe("GET", f"{http.root}/get_model_info")
    if isinstance(info, dict) and "model_path" in info:
        return "sglang", entries
    return "unknown", entries


def _litellm_info(http: _Http) -> list[dict[str, Any]] | None:
    for url in (f"{http.root}/model/info", f"{http.base}/model/info"):
        info = http.probe("GET", url)
        data = info.get("data") if isinstance(info, dict) else None
        if isinstance(data, list) and all(isinstance(d, dict) and "model_name" in d for d in data):
            return data
    return None


def served_window(config: ModelConfig, timeout_s: float = PROBE_TIMEOUT_S) -> ServedWindow:
    """The window the server at `config.base_url` serves `config.name` with, and its slots.

    Raises:
        EndpointUnavailable: nothing answers.
    """
    http = _Http(config, timeout_s)
    kind, entries = _identify(http, config)
    entry = _entry(entries, config.name)
    if kind == "llama.cpp":
        props = _dict(http.probe("GET", f"{http.root}/props"))
        window = _int(_dict(props.get("default_generation_settings")).get("n_ctx"))
        meta = _dict(entry.get("meta"))
        return ServedWindow(kind, window or _int(meta.get("n_ctx")), _int(props.get("total_slots")),
                            _int(meta.get("n_ctx_train")),
                            "GET /props: default_generation_settings.n_ctx (per slot), total_slots")
    if kind in ("vllm", "sglang"):
        window = _int(entry.get("max_model_len"))
        return ServedWindow(kind, window, None, None, "GET /v1/models: max_model_len" if window else
                            f"GET /v1/models lists no max_model_len for {config.name!r}")
    if kind == "ollama":
        return _ollama_window(http, config.name)
    if kind == "litellm":
        infos = _litellm_info(http) or []
        model_info = next((d.get("model_info") for d in infos if d.get("model_name") == config.name), None)
        window = _int(model_info.get("max_input_tokens")) if isinstance(model_info, dict) else None
        return ServedWindow(kind, window, None, None, "GET /model/info: max_input_tokens (LiteLLM's model list)"
                            if window else f"GET /model/info gives no max_input_tokens for {config.name!r}")
    said = {"openai": "OpenAI does not say a model's window", "anthropic": "Anthropic does not say a model's window"}
    return ServedWindow(kind, None, None, None, said.get(kind, "the server is none ctxbench knows how to ask"))


def resolve_window(config: ModelConfig, served: ServedWindow) -> ModelConfig:
    """`config` with the window it will run with: `context_window: null` becomes the served window; a
    window set in the config is checked against it.

    Raises:
        InputError: null where the server does not say its window, or a window over the served one
            (requests past the server's limit would end runs as `context_overflow`, not the budget).
    """
    if config.context_window is None:
        if served.window is None:
            raise InputError(f"model.context_window: null takes the window the server serves, but {served.source}: "
                             "set it in the config")
        return config.model_copy(update={"context_window": served.window})
    if served.window is not None and config.context_window > served.window:
        per_slot = f" per slot ({served.slots} slots)" if served.slots and served.slots > 1 else ""
        raise InputError(f"model.context_window {config.context_window} is over the {served.window} tokens the "
                         f"{served.server} server serves{per_slot} ({served.source}): lower it, set it to null, or "
                         "serve a larger window")
    return config


def _ollama_window(http: _Http, name: str) -> ServedWindow:
    shown = _dict(http.probe("POST", f"{http.root}/api/show", {"model": name}))
    info = _dict(shown.get("model_info"))
    trained = next((_int(v) for k, v in info.items() if k.endswith(".context_length")), None)
    for line in str(shown.get("parameters") or "").splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "num_ctx" and words[1].isdigit():
            return ServedWindow("ollama", int(words[1]), None, trained, "POST /api/show: parameters num_ctx")
    for loaded in _dict(http.probe("GET", f"{http.root}/api/ps")).get("models") or ():
        if isinstance(loaded, dict) and loaded.get("name") in (name, f"{name}:latest"):
            if _int(loaded.get("context_length")):
                return ServedWindow("ollama", loaded["context_length"], None, trained, "GET /api/ps: context_length")
    return ServedWindow("ollama", None, None, trained, "Ollama serves its default context (OLLAMA_CONTEXT_LENGTH) "
                        f"unless {name!r} sets num_ctx, and does not say it before the model is loaded")
