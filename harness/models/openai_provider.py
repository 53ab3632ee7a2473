"""`openai`: any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server, LiteLLM proxy).

Errors are mapped onto the typed errors of `ctxbench.harness.protocols` as every endpoint's are
(`ctxbench.harness.models.endpoint`): a 400 with code `context_length_exceeded` (or a message saying
the context is too long) is ContextLengthExceeded (the run ends as `context_overflow`); 401 / 403, 404
and any other 4xx are fatal for the experiment; 408, 409, 429, 5xx, connection errors, timeouts, and a
200 that is not a chat completion (HTML, JSON cut short, no choice, a null message: UnreadableReply)
are retried with exponential backoff and jitter for up to `retry_budget_s` seconds, then
TransientModelError (the run ends as `model_error`).

Requests are streamed (`stream_options.include_usage` asks for the usage in a last chunk) and time out
on silence, `model.idle_timeout_s` (`ctxbench.harness.models.streaming`); the chunks are put together
into the `chat.completion` their server would have answered unstreamed, which is read as any is (a
server that ignores `stream` answers that body itself).

Every text taken from the endpoint (replies, error bodies) is scrubbed of key values
(`ctxbench.harness.redact`) before anything else sees it.

Tool-call arguments are passed through raw, even when they are not valid JSON: the toolbox turns
them (and unknown tool names) into invalid-action observations the agent can recover from.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Iterator

from ctxbench.harness.config import ModelConfig
from ctxbench.harness.models.endpoint import EndpointModel, call_with_retries, model_ids, shared_client, unreadable
from ctxbench.harness.models.streaming import Event, Relay, TextListener, read_reply, stream_error
from ctxbench.harness.models.text_calls import read_text_calls
from ctxbench.harness.protocols import Completion, Usage
from ctxbench.harness.redact import scrub
from ctxbench.harness.records import ToolCall

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIModel", "preflight", "chat_completion"]


class OpenAIModel(EndpointModel):
    """One run's model behind an OpenAI-compatible endpoint (`EndpointModel`: the key, pickling, the check
    before a run: `GET {base_url}/models`)."""

    SDK = "openai"
    HOST = "api.openai.com"
    MODELS_PATH = "/models"

    @staticmethod
    def _connect(config: ModelConfig) -> openai.OpenAI:
        return shared_client(config, "openai", _new_client)

    @staticmethod
    def _error_message(body: Any) -> Any:
        return body.get("message") if isinstance(body, dict) else None

    @staticmethod
    def _served(client: openai.OpenAI, url: str) -> set[str]:
        reply = client.models.with_raw_response.list().http_response
        try:
            listing = json.loads(reply.content)
        except ValueError:
            listing = None
        return model_ids(listing, url, f"{reply.headers.get('content-type', '?')} that is not an OpenAI-compatible",
                         " ".join(reply.content[:120].decode(errors="replace").split()),
                         "check that base_url is the API's (it usually ends in /v1)")

    @staticmethod
    def _listing_hint(status: int, url: str) -> str:
        return " (an OpenAI-compatible base_url usually ends in /v1)" if status == 404 and not url.endswith(
            "/v1/models") else ""

    @staticmethod
    def _names(config: ModelConfig) -> tuple[str, ...]:
        return config.name, f"{config.name}:latest"  # Ollama lists a model by its tag

    def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                 listener: TextListener | None = None) -> Completion:
        """One chat completion, streamed (its text told to `listener` as it arrives, where given);
        retries transient failures, raises the typed errors of `ctxbench.harness.protocols`."""
        c = self.config
        request: dict[str, Any] = dict(model=c.name, messages=messages, temperature=c.temperature, top_p=c.top_p,
                                       max_tokens=c.max_output_tokens, seed=self.seed, stream=True,
                                       stream_options={"include_usage": True})
        if tools:
            request["tools"] = tools
        relay = Relay(listener)
        return call_with_retries(c, self.where(c), lambda: self._attempt(request, messages, relay), relay.passed_on)

    def _attempt(self, request: dict[str, Any], messages: list[dict[str, Any]], relay: Relay) -> Completion:
        """One request; raises the typed errors, TransientModelError (with `retry_after`) for what is retried."""
        from openai.types.chat import ChatCompletion  # an optional extra: imported when a request is made

        where = self.where(self.config)
        # as it is: `chat.completions.create` would walk every message and tool schema (~10 ms of CPU a call)
        response, started = self._open("/chat/completions", request)
        body = read_reply(response, self.config, where, "not a chat completion", started,
                          lambda events: chat_completion(events, where, relay))
        if not isinstance(body, dict):
            raise unreadable(where, "not a chat completion", body, quoted=True)
        return self._completion(ChatCompletion.construct(**body), messages, where, request.get("tools") or [])

    def _completion(self, response: Any, messages: list[dict[str, Any]], where: str,
                    tools: list[dict[str, Any]]) -> Completion:
        choices = getattr(response, "choices", None)
        first = choices[0] if isinstance(choices, list) and choices else None
        message = getattr(first, "message", None)
        if message is None:
            raise unreadable(where, "no choice with a message", response, quoted=True)
        text = scrub(message.content or "")
        native = [(getattr(call, "id", None), getattr(call, "function", None), getattr(call, "type", "unknown"))
                  for call in message.tool_calls or ()]
        written = [(scrub((f.name if f is not None else kind) or ""), scrub((f.arguments if f is not None else "") or ""), cid)
                   for cid, f, kind in native]
        if not written and self.config.tool_calls == "text":  # calls the model wrote in its reply's text
            read = read_text_calls(text, [t.get("function", {}).get("name", "") for t in tools])
            written, text = [(c.name, c.arguments, None) for c in read.calls], read.text if read.calls else text
        calls = [ToolCall(cid or "call_" + hashlib.sha256(json.dumps([len(messages), i, name, arguments]).encode())
                          .hexdigest()[:10], name, arguments) for i, (name, arguments, cid) in enumerate(written)]
        finish = getattr(first, "finish_reason", None)
        return Completion(text, tuple(calls), self._usage(response.usage, messages, tools, text, calls),
                          finish_reason=str(finish) if finish else None)

    def _usage(self, usage: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]], text: str,
               calls: list[ToolCall]) -> Usage:
        if usage is None:  # the endpoint reported none
            return self.estimated_usage(messages, tools, text, calls)
        details = getattr(usage, "prompt_tokens_details", None)
        cached = getattr(details, "cached_tokens", None) or 0
        written = (getattr(details, "cache_write_tokens", None) or getattr(details, "cache_creation_tokens", None)
                   or getattr(usage, "cache_creation_input_tokens", None) or 0)  # as OpenRouter, LiteLLM name it
        reasoning = getattr(getattr(usage, "completion_tokens_details", None), "reasoning_tokens", None) or 0
        return Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0, cached, int(written), int(reasoning))


def chat_completion(events: Iterator[Event], where: str, tell: TextListener) -> dict[str, Any]:
    """The `chat.completion` a stream of `chat.completion.chunk` events adds up to (its first choice):
    the content's pieces joined, each tool call's pieces by its `index`, the last finish reason, the
    usage of the chunk that carries it (`stream_options.include_usage`; none where no chunk does); a
    stream that ends before its finish reason was cut off (UnreadableReply, retried). Each piece of text is told to `tell` as it is read ("" at the first chunk)."""
    head: dict[str, Any] = {}
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    finish, usage = None, None
    for _, chunk in events:
        if not isinstance(chunk, dict) or "error" in chunk:
            raise stream_error(where, chunk)
        if not head:
            head = {"id": chunk.get("id"), "created": chunk.get("created"), "model": chunk.get("model")}
            tell("")
        usage = chunk.get("usage") or usage
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if delta.get("content"):
                text.append(delta["content"])
                tell(delta["content"])
            for call in delta.get("tool_calls") or ():
                _add_call_piece(calls, call)
            finish = choice.get("finish_reason") or finish
    if head and finish is None:  # the connection closed mid-reply, as a server that streams ends one
        raise unreadable(where, "a stream that ended before its finish_reason", "".join(text)[-200:], quoted=True)
    message = {"role": "assistant", "content": "".join(text), "tool_calls": [calls[i] for i in sorted(calls)] or None}
    choices = [{"index": 0, "message": message, "finish_reason": finish}] if head else []
    return {**head, "object": "chat.completion", "choices": choices, "usage": usage}


def _add_call_piece(calls: dict[int, dict[str, Any]], piece: Any) -> None:
    """One streamed piece of a tool call onto the call of its `index` (a piece without one: a new call
    where it has an id, else the last call's)."""
    if not isinstance(piece, dict):
        return
    index = piece.get("index")
    if not isinstance(index, int):
        index = len(calls) if piece.get("id") or not calls else max(calls)
    call = calls.setdefault(index, {"id": None, "type": "function", "function": {"name": "", "arguments": ""}})
    call["id"] = piece.get("id") or call["id"]
    function, pieces = call["function"], piece.get("function") or {}
    name, arguments = pieces.get("name"), pieces.get("arguments")
    if name and name != function["name"]:  # a server that repeats the whole name in every piece
        function["name"] += name
    if arguments:
        function["arguments"] += arguments


def _new_client(config: ModelConfig, key: str) -> openai.OpenAI:
    import openai  # an optional extra

    from openai._constants import DEFAULT_CONNECTION_LIMITS

    # the client's HTTP library's Limits, with every connection kept alive (the default keeps 100):
    # hundreds of runs in flight would otherwise open a connection per call
    pool = DEFAULT_CONNECTION_LIMITS.max_connections
    limits = type(DEFAULT_CONNECTION_LIMITS)(max_connections=pool, max_keepalive_connections=pool)
    return openai.OpenAI(base_url=config.base_url, api_key=key, max_retries=0, timeout=config.idle_timeout_s,
                         http_client=openai.DefaultHttpxClient(limits=limits))


preflight = OpenAIModel.preflight
"""The check before a run (`EndpointModel.preflight`): `GET {base_url}/models` holds `model.name`."""
