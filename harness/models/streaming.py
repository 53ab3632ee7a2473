"""A model's reply read as its endpoint streams it (`openai`, `anthropic`): server-sent events, each
within `model.idle_timeout_s` of the byte before (the client's read timeout) and the whole within
`model.request_timeout_s` of the request; an endpoint that ignores `stream` and answers one JSON body is
read as that body.

A provider assembles its stream's events into the body the endpoint would have answered unstreamed
(a `chat.completion`, a `message`), so one function reads a reply however it came, and passes each
piece of text on to a `TextListener` as it arrives (the gateway sends it to its own client).
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Callable, Iterator

from ctxbench.harness.config import ModelConfig
from ctxbench.harness.models.endpoint import connection_failed, unreadable
from ctxbench.harness.protocols import TransientModelError
from ctxbench.harness.redact import scrub

__all__ = ["TextListener", "Relay", "Event", "read_reply", "events", "idle_timed_out", "stream_error"]

TextListener = Callable[[str], None]
"""Told each piece of a reply's text as it arrives ("" once, as the reply begins)."""
Event = tuple["str | None", Any]
"""One server-sent event: its name (None where the stream names none) and its data read as JSON."""


def read_reply(response: Any, config: ModelConfig, where: str, expected: str, started: float,
               assemble: Callable[[Iterator[Event]], Any]) -> Any:
    """The body of a reply to a streamed request (`response`: the client's HTTP response, its body not
    yet read), closed once read: the JSON body as it is where the endpoint did not stream, else its
    events (`events`) put together by `assemble`.

    Raises:
        TransientModelError: no byte for `idle_timeout_s`, the whole past `request_timeout_s` of
            `started` (a `time.monotonic()`), the connection broken off (all retried).
        UnreadableReply: a body that is not JSON, an event whose data is not JSON, an error event.
    """
    http = sys.modules[type(response).__module__.partition(".")[0]]  # the client's HTTP library (httpx, httpx2)
    try:
        if "text/event-stream" not in response.headers.get("content-type", ""):
            return _json_body(response, where, expected)
        return assemble(events(response, config, where, started))
    except http.TimeoutException:
        raise idle_timed_out(config, where) from None
    except http.TransportError as exc:  # cut off mid-reply
        raise connection_failed(where, exc, False) from None
    finally:
        response.close()


def idle_timed_out(config: ModelConfig, where: str) -> TransientModelError:
    """A request that got no byte of its reply for `idle_timeout_s` (retried)."""
    return TransientModelError(f"timed out ({where}): no byte of the reply for {config.idle_timeout_s:g} s "
                               "(model.idle_timeout_s)")


def _json_body(response: Any, where: str, expected: str) -> Any:
    raw = response.read()
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise unreadable(where, expected, raw[:200].decode(errors="replace"), quoted=True) from None


def events(response: Any, config: ModelConfig, where: str, started: float) -> Iterator[Event]:
    """The server-sent events of `response` until `data: [DONE]` or the end of its body; comments
    (`: ping`) are skipped (they still count as bytes for the idle timeout).

    Raises:
        TransientModelError: the stream is still going `request_timeout_s` after `started`.
        UnreadableReply: an event's data is not JSON.
    """
    deadline = started + config.request_timeout_s
    name: str | None = None
    data: list[str] = []
    for line in response.iter_lines():
        if time.monotonic() > deadline:
            raise TransientModelError(f"timed out ({where}): the reply was still streaming after "
                                      f"{config.request_timeout_s:g} s (model.request_timeout_s)")
        if line:
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
            continue
        if data:
            payload = "\n".join(data)
            if payload.strip() == "[DONE]":
                return
            yield name, _event_data(payload, where)
        name, data = None, []
    if data and "\n".join(data).strip() != "[DONE]":
        yield name, _event_data("\n".join(data), where)


def _event_data(payload: str, where: str) -> Any:
    try:
        return json.loads(payload)
    except ValueError:
        raise unreadable(where, "an event whose data is not JSON", payload, quoted=True) from None


def stream_error(where: str, data: Any) -> Exception:
    """An error sent in the stream itself, after its 200 (OpenAI's `{"error": ...}`, Anthropic's `error`
    event): the endpoint failed mid-reply, retried like a 5xx."""
    error = data.get("error") if isinstance(data, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    return TransientModelError(scrub(f"error in the stream from {where}: {' '.join(str(message or data).split())[:300]}"))


class Relay:
    """A listener's side of one model call: each piece of text passed on (scrubbed of key values), and
    whether any has gone (an attempt that fails after that is not retried: `call_with_retries`)."""

    def __init__(self, listener: TextListener | None) -> None:
        self.listener = listener
        self.told = False

    def __call__(self, piece: str) -> None:
        if self.listener is not None:
            self.told = self.told or bool(piece)
            self.listener(scrub(piece) if piece else piece)

    def passed_on(self) -> bool:
        return self.told
