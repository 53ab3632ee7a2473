"""ctxbench's model endpoints over HTTP: the server that speaks every wire format, `ctxbench serve-sim`
(the simulator) and `ctxbench gateway` (a strategy in front of any model)."""

from __future__ import annotations

from ctxbench.harness.endpoints.gateway import Gateway
from ctxbench.harness.endpoints.serve_sim import SimBackend
from ctxbench.harness.endpoints.server import ModelBackend, make_server, make_unix_server

__all__ = ["ModelBackend", "make_server", "make_unix_server", "Gateway", "SimBackend"]
