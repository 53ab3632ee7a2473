"""What the providers behind an HTTP endpoint share (`openai`, `anthropic`): one client per endpoint and key,
the model's pickling, the retry loop within the endpoint's limit of calls in flight, the typed error for an
HTTP error status, the usage estimated where an endpoint reports none, and the checks made before a run.

Errors are mapped onto the typed errors of `ctxbench.harness.protocols` (`status_error`):

- 400 saying the context is too long (or the provider's own code for it) -> ContextLengthExceeded;
- 401 / 403, 404 -> FatalModelError (the experiment stops); any other 4xx -> RequestRefused (the run ends
  as `model_error` with the endpoint's message, the experiment goes on);
- 408, 409, 429, 5xx -> TransientModelError, retried by `call_with_retries` for up to `retry_budget_s`;
  429, 503 and 529 (Anthropic's overloaded) lower the endpoint's limit of calls in flight.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import random
import re
import threading
import time
from typing import Any, Callable, ClassVar, Mapping

from ctxbench.harness.concurrency import endpoint_limit
from ctxbench.harness.config import ModelConfig
from ctxbench.harness.errors import EndpointUnavailable, InputError, did_you_mean
from ctxbench.harness.protocols import (Completion, ContextLengthExceeded, FatalModelError, RequestRefused,
                                        TransientModelError, UnreadableReply, Usage)
from ctxbench.harness.records import ToolCall
from ctxbench.harness.redact import remember_key_variable, scrub
from ctxbench.harness.tokens import SERVED_TOKENIZERS, TokenCounter

__all__ = ["EndpointModel", "call_with_retries", "shared_client", "status_error", "connection_failed", "unreadable",
           "retry_after_s", "require_key_variable", "client_for_preflight", "unreachable", "listing_refused",
           "model_ids", "require_served", "BASE_DELAY_S", "MAX_DELAY_S", "NO_KEY", "PREFLIGHT_TIMEOUT_S",
           "CONTEXT_MESSAGE", "RETRIED_STATUS", "THROTTLED_STATUS"]

BASE_DELAY_S = 1.0
"""First retry of a failed call waits about this long; each further retry doubles it (with jitter). A
refused call (429 / 503) waits about one round trip of the endpoint instead, at least half of this."""
MAX_DELAY_S = 60.0
"""No single wait is longer, whatever the backoff or a Retry-After header says."""
NO_KEY = "no-key"
"""Key sent when `api_key_env` is not set (local servers that need none)."""
PREFLIGHT_TIMEOUT_S = 5.0
"""How long the check before a run waits for the endpoint (connect and reply), without retries."""

RETRIED_STATUS = frozenset({408, 409, 429})
"""4xx statuses that are retried (every 5xx is)."""
THROTTLED_STATUS = frozenset({429, 503, 529})
"""Statuses that lower the endpoint's limit of calls in flight (ctxbench.harness.concurrency): the endpoint
refused for load (529: Anthropic is overloaded)."""
CONTEXT_MESSAGE = re.compile(
    r"context[ _-]?(length|window|size)|maximum context|too many tokens|prompt is too long|"
    r"exceeds? the (available )?context|input is too long", re.I)
"""How endpoints word a 400 for a request over the context window, where they give no code."""


class EndpointModel:
    """A run's model behind an endpoint, with fixed sampling parameters: what both providers share.

    The API key is read from the environment variable named by `config.api_key_env` into the client
    only; pickling the model keeps the config and seed and reads the key again on unpickling. A provider
    says how to reach its endpoint (`_connect`, `SDK`, `HOST`, `_error_message`) and how it lists its
    models (`MODELS_PATH`, `_served`, `_listing_hint`, `_names`); `preflight` is the same check for both.
    """

    takes_cache_marks: ClassVar[bool] = False
    SDK: ClassVar[str]
    """The provider's client library (an optional extra, imported when it is needed): its error classes."""
    HOST: ClassVar[str]
    """The endpoint's host when `model.base_url` is unset, as errors name it."""
    MODELS_PATH: ClassVar[str]
    """Where the client's base URL lists the models served."""

    def __init__(self, config: ModelConfig, seed: int, counter: TokenCounter | None = None) -> None:
        self.config = config
        self.seed = seed
        self._counter: TokenCounter | None = counter
        """What a reply without usage is counted with: the run's own counter (the budget's), where given."""
        self.sdk()  # a missing extra is one line, before any client is built
        self._client = self._connect(config)

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 listener: Callable[[str], None] | None = None) -> Completion:
        """One reply, streamed: its text told to `listener` as it arrives, where given
        (`ctxbench.harness.models.streaming.TextListener`)."""
        raise NotImplementedError

    @classmethod
    def sdk(cls) -> Any:
        """The provider's client library.

        Raises:
            InputError: it is not installed (an optional extra; exit 2).
        """
        try:
            return importlib.import_module(cls.SDK)
        except ImportError:
            raise InputError(f"the {cls.SDK} provider needs its client library: install the {cls.SDK} extra "
                             f"(.venv/bin/pip install -e '.[{cls.SDK}]' in the checkout)") from None

    @staticmethod
    def _connect(config: ModelConfig) -> Any:
        """The provider's client for `config` (`shared_client`)."""
        raise NotImplementedError

    @staticmethod
    def _error_message(body: Any) -> Any:
        """The message of an HTTP error's body, where it holds one."""
        raise NotImplementedError

    @classmethod
    def _one_line(cls, exc: Any) -> str:
        """An HTTP error's message on one line, scrubbed of keys."""
        return scrub(" ".join(str(cls._error_message(exc.body) or exc.message or exc).split())[:500])

    @staticmethod
    def _served(client: Any, url: str) -> set[str]:
        """The ids of the models the endpoint lists at `url` (`model_ids`)."""
        raise NotImplementedError

    @staticmethod
    def _listing_hint(status: int, url: str) -> str:
        """What to say about base_url when listing the models answered `status`."""
        return ""

    @staticmethod
    def _names(config: ModelConfig) -> tuple[str, ...]:
        """The names under which the endpoint may list `config.name`."""
        return (config.name,)

    @classmethod
    def where(cls, config: ModelConfig) -> str:
        """The endpoint as errors name it, and the key of its limit of calls in flight."""
        return config.base_url or cls.HOST

    @classmethod
    def preflight(cls, config: ModelConfig) -> None:
        """Before anything is written: the key variable is set, the model list (`MODELS_PATH`) answers
        within PREFLIGHT_TIMEOUT_S and holds `config.name`, and the key is accepted.

        Raises:
            EndpointUnavailable: the variable is unset, nothing answers, the key is refused (exit 3).
            InputError: the answer is not a model list, or it lacks `model.name` (exit 2).
        """
        sdk = cls.sdk()
        require_key_variable(config)
        client = client_for_preflight(cls._connect(config), config)
        url = f"{str(client.base_url).rstrip('/')}{cls.MODELS_PATH}"
        try:
            served = cls._served(client, url)
        except sdk.APIConnectionError as exc:
            raise unreachable(url, exc, isinstance(exc, sdk.APITimeoutError)) from None
        except sdk.APIStatusError as exc:
            raise listing_refused(config, url, exc.status_code, cls._one_line(exc),
                                  cls._listing_hint(exc.status_code, url)) from None
        require_served(config, served, cls.where(config), url, cls._names(config))

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "seed": self.seed}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.config, self.seed, self._counter = state["config"], state["seed"], None  # counted anew where unpickled
        self._client = self._connect(self.config)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.config.name!r}, base_url={self.config.base_url!r}, seed={self.seed})"

    def _open(self, path: str, body: dict[str, Any]) -> tuple[Any, float]:
        """POST `body` (a request that asks for a stream) to the endpoint as it is (a client's typed
        `create` would first walk it against its parameter types: CPU, and its own limits): the HTTP
        response once its headers are in, its body not yet read (`ctxbench.harness.models.streaming`
        reads it), and when the request started. Raises the typed errors: `status_error` for an HTTP
        error, `connection_failed` (a timeout: no byte for `idle_timeout_s`)."""
        sdk = self.sdk()
        where = self.where(self.config)
        started = time.monotonic()
        try:
            stream = self._client.post(path, body=body, cast_to=object, stream=True, stream_cls=sdk.Stream[object])
        except sdk.APIStatusError as exc:
            raise status_error(exc.status_code, self._one_line(exc), self.config, where, headers=exc.response.headers,
                               too_long=getattr(exc, "code", None) == "context_length_exceeded") from None
        except sdk.APIConnectionError as exc:  # includes APITimeoutError
            timed_out = isinstance(exc, sdk.APITimeoutError)
            raise connection_failed(where, f"no byte for {self.config.idle_timeout_s:g} s (model.idle_timeout_s)"
                                    if timed_out else exc, timed_out) from None
        return stream.response, started

    def estimated_usage(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], text: str,
                        calls: list[ToolCall]) -> Usage:
        """The usage of a reply whose endpoint reported none, marked `estimated`: the messages and tool
        schemas sent and the reply, counted as the run's budget counts them."""
        if self._counter is None:  # unpickled (a Ray worker): an encoding's count, the served model's out of reach
            name = self.config.tokenizer
            self._counter = TokenCounter() if name in SERVED_TOKENIZERS else TokenCounter(name)
        counter = self._counter
        emitted = counter.count(text) + sum(counter.count(c.name) + counter.count(c.arguments) for c in calls)
        return Usage(counter.count_prompt(messages, tools), emitted, estimated=True)


def call_with_retries(config: ModelConfig, where: str, attempt: Callable[[], Completion],
                      passed_on: Callable[[], bool] = lambda: False) -> Completion:
    """`attempt()` (one request to the endpoint `where`) until it answers, within the endpoint's limit of
    calls in flight (`ctxbench.harness.concurrency`, keyed by `where`).

    A TransientModelError is retried for up to `config.retry_budget_s`: a throttled one (the endpoint
    refused for load: THROTTLED_STATUS) lowers the limit and waits about one round trip in its slot, any
    other waits an exponential backoff with jitter outside it; a `Retry-After` is honoured in both. Every
    other error propagates at once, and so does one that came after `passed_on()` (part of the reply
    has gone on to a listener: another attempt cannot take it back). The delays are read from BASE_DELAY_S and MAX_DELAY_S of this module
    when they are needed.

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
                    if passed_on():
                        raise
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


def _backoff(attempt: int) -> float:
    """Exponential backoff with jitter: between half and all of BASE_DELAY_S * 2**attempt."""
    return BASE_DELAY_S * 2 ** attempt * random.uniform(0.5, 1.0)


def shared_client(config: ModelConfig, kind: str, build: Callable[[ModelConfig, str], Any]) -> Any:
    """The one client of `kind` (a provider's official client, built by `build(config, key)` without
    its own retries: ours are time-bounded; its read timeout `idle_timeout_s`) for `config`'s endpoint,
    key and timeout in this process,
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
    which = (os.getpid(), config.base_url, key, config.idle_timeout_s)  # a forked child builds its own
    with _CLIENTS_LOCK:
        clients = _CLIENTS.setdefault(kind, {})
        if which not in clients:
            clients.clear()  # another process's (before a fork) or another key's: not used again here
            clients[which] = build(config, key)
        return clients[which]


_CLIENTS: dict[str, dict[tuple[int, str | None, str, float], Any]] = {}
_CLIENTS_LOCK = threading.Lock()


def status_error(status: int, detail: str, config: ModelConfig, where: str, too_long: bool = False,
                 headers: Mapping[str, str] | None = None) -> Exception:
    """The typed error for an endpoint's HTTP error `status` (its message `detail`, scrubbed): a request
    over the window (400 saying so, or `too_long`: the provider's own code for it), a refused key, a
    model not found, what is retried (408, 409, 429, 5xx: with the wait its `headers` ask for, and
    `throttled` for THROTTLED_STATUS), or any other bad request."""
    if status == 400 and (too_long or CONTEXT_MESSAGE.search(detail)):
        return ContextLengthExceeded(detail)
    if status in (401, 403):
        key = f"the key in ${config.api_key_env}" if config.api_key_env else "model.api_key_env (not set)"
        return FatalModelError(f"authentication failed ({status}) at {where}: {detail}; check {key}")
    if status == 404:
        return FatalModelError(f"not found (404) at {where}: {detail}; check model.name {config.name!r} "
                               f"and model.base_url")
    if status in RETRIED_STATUS or status >= 500:
        error = TransientModelError(f"HTTP {status} from {where}: {detail}")
        error.retry_after = retry_after_s(headers or {})
        error.throttled = status in THROTTLED_STATUS
        return error
    return RequestRefused(f"bad request ({status}) at {where}: {detail}")


def connection_failed(where: str, exc: object, timed_out: bool) -> TransientModelError:
    """A request that got no answer (refused, cut, timed out): retried."""
    return TransientModelError(scrub(f"{'timed out' if timed_out else 'connection failed'} ({where}): {exc}"))


def unreadable(where: str, expected: str, what: object, quoted: bool = False) -> UnreadableReply:
    """A 200 whose body is not `expected` (`what`: the parse error, or the reply, `quoted`), retried like a 5xx."""
    start = " ".join(str(what).split())[:200]
    return UnreadableReply(scrub(f"unreadable reply from {where} ({expected}): {start!r}" if quoted
                                 else f"unreadable reply from {where} ({expected}): {start}"))


def retry_after_s(headers: Mapping[str, str]) -> float:
    """The seconds a reply's `Retry-After` header asks to wait; 0 when it says none (or a date)."""
    try:
        return float(headers.get("retry-after", 0))
    except (TypeError, ValueError):
        return 0.0


# -- the checks before a run ----------------------------------------------------------------------------

def require_key_variable(config: ModelConfig) -> None:
    """Raises EndpointUnavailable (exit 3) when the variable named by `api_key_env` is not set."""
    if config.api_key_env and not os.environ.get(config.api_key_env):
        raise EndpointUnavailable(f"model.api_key_env: environment variable {config.api_key_env} is not set "
                                  "(it must hold the API key)")


def client_for_preflight(client: Any, config: ModelConfig) -> Any:
    """The provider's client for the check: PREFLIGHT_TIMEOUT_S at most, no retries."""
    return client.with_options(timeout=min(PREFLIGHT_TIMEOUT_S, config.idle_timeout_s), max_retries=0)


def unreachable(url: str, exc: Exception, timed_out: bool) -> EndpointUnavailable:
    """The model list at `url` did not answer (exit 3)."""
    cause = exc.__cause__ or exc
    kind = "timed out" if timed_out else "cannot connect"
    return EndpointUnavailable(scrub(f"model.base_url: {kind}: GET {url}: {' '.join(str(cause).split())[:300]}"))


def listing_refused(config: ModelConfig, url: str, status: int, detail: str, hint: str = "") -> EndpointUnavailable:
    """The model list at `url` answered an HTTP error (exit 3): the key refused (401, 403), or the endpoint
    is not what base_url should name (`hint` says what it should be)."""
    if status in (401, 403):
        key = f"the key in ${config.api_key_env}" if config.api_key_env else "no key (model.api_key_env is not set)"
        return EndpointUnavailable(f"model.api_key_env: GET {url} refused {key} ({status}): {detail}")
    return EndpointUnavailable(f"model.base_url: GET {url} answered HTTP {status}{hint}: {detail}")


def model_ids(listing: Any, url: str, what: str, start: str, advice: str) -> set[str]:
    """The model ids of a model list (`{"data": [{"id": ...}, ...]}`).

    Raises:
        InputError: `listing` is not one; the error says `what` the reply was, how it starts and `advice`.
    """
    models = listing.get("data") if isinstance(listing, dict) else None
    if isinstance(models, list) and all(isinstance(m, dict) and isinstance(m.get("id"), str) for m in models):
        return {m["id"] for m in models}
    raise InputError(scrub(f"model.base_url: GET {url} answered 200 with {what} model list "
                           f"({{\"data\": [{{\"id\": ...}}]}}): {start!r}; {advice}"))


def require_served(config: ModelConfig, served: set[str], where: str, url: str, names: tuple[str, ...]) -> None:
    """Raises InputError (exit 2) when the endpoint serves none of `names` (`config.name`, as it may list it)."""
    if not served.intersection(names):
        listed = ", ".join(sorted(served)[:20]) + (", ..." if len(served) > 20 else "") if served else "no model"
        raise InputError(scrub(f"model.name: {config.name!r} is not served by {where} "
                               f"(GET {url} lists {listed}){did_you_mean(config.name, sorted(served))}"))
