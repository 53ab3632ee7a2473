"""`agent: {from: EXPERIMENT}`: an arm runs the agent another experiment file defines, so that one
experiment can set many agents side by side (`experiments/agents.yaml`) without a second copy of each
agent's command, environment and home files."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from ctxbench.harness.errors import InputError
from ctxbench.harness.yamlfile import read_yaml

__all__ = ["borrow_agents"]

Resolve = Callable[[str | Path], Path]
"""Finds an experiment file by path or built-in name (ctxbench.harness.config.resolve_experiment_path)."""


def borrow_agents(data: dict[str, Any], path: Path, resolve: Resolve) -> list[tuple[str, str]]:
    """Replace, in place, every `agent: {from: EXPERIMENT}` of the experiment `data` (read from `path`)
    by the agent that EXPERIMENT defines; the problems found, as `(key.path, problem)` pairs (an agent
    that cannot be borrowed is removed).

    EXPERIMENT is a file (relative to `path`'s folder) or a built-in experiment's name. Its agent is its
    top-level `agent`, or else the one external agent its arms run. Words of that agent naming files
    beside EXPERIMENT are made absolute, so that they still name them from `path`'s folder.
    """
    holders: list[tuple[str, dict[str, Any]]] = [("agent", data)]
    arms = data.get("strategies")
    if isinstance(arms, list):
        holders += [(f"strategies.{i}.agent", arm) for i, arm in enumerate(arms) if isinstance(arm, dict)]
    problems = []
    for where, holder in holders:
        spec = holder.get("agent")
        if not (isinstance(spec, dict) and "from" in spec):
            continue
        try:
            holder["agent"] = _borrowed(spec, path, resolve)
        except InputError as exc:
            problems.append((where, str(exc)))
            del holder["agent"]  # said once, here, not again by the validation of the rest
    return problems


def _borrowed(spec: dict[str, Any], path: Path, resolve: Resolve) -> dict[str, Any]:
    name = spec["from"]
    if set(spec) != {"from"} or not isinstance(name, str):
        raise InputError("`from` takes an experiment's name or file, and no other key beside it")
    beside = path.parent / name
    source = beside if beside.is_file() else resolve(name)
    data = read_yaml(source, "experiment file")
    agents = _agents_of(data if isinstance(data, dict) else {})
    if len(agents) != 1:
        found = "none" if not agents else ", ".join(str(a.get("name") or a["command"][0]) for a in agents)
        raise InputError(f"{source} must define one external agent to borrow (found {found})")
    agent = dict(agents[0])
    if source.parent.resolve() != path.parent.resolve():
        agent = _anchored(agent, source.parent)
    return agent


def _agents_of(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The experiment's top-level external agent, or else the distinct external agents of its arms."""
    top = data.get("agent")
    if isinstance(top, dict) and top.get("command"):
        return [top]
    arms = data.get("strategies")
    found: list[dict[str, Any]] = []
    if not isinstance(arms, list):
        return found
    for arm in arms:
        agent = arm.get("agent") if isinstance(arm, dict) else None
        if isinstance(agent, dict) and agent.get("command") and agent not in found:
            found.append(agent)
    return found


def _anchored(agent: dict[str, Any], folder: Path) -> dict[str, Any]:
    """`agent` with each word of its commands, and each config file, that names a file in `folder`
    made absolute."""
    def word(w: Any) -> Any:
        if not isinstance(w, str) or os.path.isabs(os.path.expanduser(w)):
            return w
        candidate = folder / os.path.expanduser(w)
        return str(candidate.resolve()) if candidate.exists() else w

    out = dict(agent)
    for key in ("command", "version_command"):
        if isinstance(out.get(key), list):
            out[key] = [word(w) for w in out[key]]
    if isinstance(out.get("config_files"), list):
        out["config_files"] = [str((folder / os.path.expanduser(f)).resolve()) for f in out["config_files"]]
    return out
