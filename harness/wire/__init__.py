"""The wire formats ctxbench's endpoints speak, and what a request's conversation means: no I/O.

An agent calls a model in one of four formats, each a `Wire` in this package (`chat`, `messages`,
`responses`, `gemini`). Each reads a request body onto one `ModelRequest` and writes a `Completion` or a
`Refusal` back in the client's own format. `wire_for` is the registry: the format served on a path.
`conversation` reads any agent's message list as a `History`; `shell_reading` reads what a shell
command does.
"""

from __future__ import annotations

from ctxbench.harness.wire.base import HttpReply, ModelRequest, Refusal, Wire, WireName, json_reply, sse_reply
from ctxbench.harness.wire.chat import CHAT
from ctxbench.harness.wire.gemini import GEMINI
from ctxbench.harness.wire.messages import MESSAGES
from ctxbench.harness.wire.responses import RESPONSES

__all__ = ["WIRES", "wire_for", "Wire", "WireName", "ModelRequest", "Refusal", "HttpReply", "json_reply",
           "sse_reply", "CHAT", "MESSAGES", "RESPONSES", "GEMINI"]

WIRES: tuple[Wire, ...] = (CHAT, MESSAGES, RESPONSES, GEMINI)
"""Every format served, each on its own routes."""


def wire_for(path: str) -> Wire | None:
    """The wire format served on `path` (its query string ignored), or None."""
    route = path.split("?", 1)[0].rstrip("/")
    return next((w for w in WIRES if w.serves(route)), None)
