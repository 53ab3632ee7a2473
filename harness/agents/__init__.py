"""External agents as arms: each run's gateway route, the agent contained in its workspace with its relay
(and, in docker-backed runs, its docker stand-in), and the checks made before the first run."""

from __future__ import annotations

from ctxbench.harness.agents.external import ExternalRun, run_external
from ctxbench.harness.agents.route import AgentRoute
from ctxbench.harness.agents.setup import agent_fixed_variable, resolve_agents

__all__ = ["ExternalRun", "run_external", "AgentRoute", "resolve_agents", "agent_fixed_variable"]
