"""ctxbench's own agent loop: history -> strategy -> model -> tools -> observations, its tools and the
ways a run stops."""

from __future__ import annotations

from ctxbench.harness.loop.agent import Agent, AgentOutcome, run_agent
from ctxbench.harness.loop.stops import AgentStopped
from ctxbench.harness.loop.tools import TOOL_SCHEMAS, Toolbox

__all__ = ["Agent", "AgentOutcome", "run_agent", "AgentStopped", "TOOL_SCHEMAS", "Toolbox"]
