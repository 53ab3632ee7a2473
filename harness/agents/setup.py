"""External agents before the first run: their commands resolved and checked, their versions and
config files read, and what of them is held fixed across the arms."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ctxbench.harness.config.agent import AgentSpec
from ctxbench.harness.config import ExperimentConfig, config_hash
from ctxbench.harness.errors import InputError

__all__ = ["resolve_agents", "installed_arms", "agent_fixed_variable", "AgentMissing"]

VERSION_TIMEOUT_S = 60.0


class AgentMissing(InputError):
    """An arm's agent program is not installed (not on PATH, or no file where its path points)."""


def resolve_agents(config: ExperimentConfig, config_dir: Path) -> dict[str, AgentSpec]:
    """The external agent of each arm that runs one (arm key -> agent), its program and any word that
    names a file relative to the experiment file made absolute; builtin arms are left out.

    Raises:
        InputError: a program that does not exist or cannot be executed, a config file that cannot be
            read, or a version command that fails; every agent that is not installed is named at once,
            each with its install line.
    """
    resolved: dict[str, AgentSpec] = {}
    seen: dict[str, AgentSpec] = {}
    missing: dict[str, str] = {}
    arms_missing = 0
    for arm in config.strategies:
        agent = config.agent_of(arm)
        if agent.builtin:
            continue
        key, program = agent.model_dump_json(), agent.command[0] if agent.command else ""
        if key not in seen and program not in missing:  # a program not installed is said once
            try:
                seen[key] = _resolve(agent, config_dir, f"strategies[{arm.key}].agent" if arm.agent else "agent")
            except AgentMissing as exc:
                missing[program] = str(exc)
        if key in seen:
            resolved[arm.key] = seen[key]
        arms_missing += program in missing
    if missing:
        others = arms_missing < len(config.strategies)  # some arm would still run
        hint = ["--available leaves out the arms whose agent is not installed"] if others else []
        raise AgentMissing(*missing.values(), *hint)
    return resolved


def installed_arms(config: ExperimentConfig, config_dir: Path) -> tuple[ExperimentConfig, dict[str, str]]:
    """The experiment without the arms whose agent is not installed, and those arms (key -> how to
    install their agent): `--available`.

    Raises:
        InputError: no arm's agent is installed.
    """
    left_out: dict[str, str] = {}
    for arm in config.strategies:
        agent = config.agent_of(arm)
        if agent.builtin:
            continue
        assert agent.command is not None
        try:
            _program(agent.command[0], config_dir, "agent")
        except AgentMissing:
            left_out[arm.key] = agent.install or f"{agent.command[0]} is not installed"
    kept = [arm for arm in config.strategies if arm.key not in left_out]
    if not kept:
        raise InputError(f"--available: no arm's agent is installed ({', '.join(left_out)})")
    return config.model_copy(update={"strategies": kept}), left_out


def _resolve(agent: AgentSpec, config_dir: Path, where: str) -> AgentSpec:
    assert agent.command is not None
    try:
        program = _program(agent.command[0], config_dir, where)
    except AgentMissing as exc:
        if agent.install is None:
            raise
        raise AgentMissing(f"{exc}; install it: {agent.install}") from None
    words = [program, *(_absolute(w, config_dir) for w in agent.command[1:])]
    _check_script(agent.command, words, where)
    for name in agent.config_files:
        path = config_dir / os.path.expanduser(name)
        if not path.is_file():
            raise InputError(f"{where}.config_files: {path} is not a file")
    version = agent.version_command
    if version is not None:
        version = [_program(version[0], config_dir, f"{where}.version_command"),
                   *(_absolute(w, config_dir) for w in version[1:])]
    return agent.model_copy(update={"name": agent.label, "command": words, "version_command": version,
                                    "config_files": [str(config_dir / os.path.expanduser(n)) for n in agent.config_files]})


def _program(word: str, config_dir: Path, where: str) -> str:
    """The absolute path of an agent's program: a path (relative to the experiment file), or a name on PATH.
    A Python found on PATH is the interpreter itself, not a launcher in front of it (pyenv's shims are
    shell scripts that look for their versions under the home folder, which the agent's jail does not
    have)."""
    expanded = os.path.expanduser(word)
    if "/" not in expanded:
        found = shutil.which(expanded)
        if found is None:
            raise AgentMissing(f"{where}.command: {word!r} is not a program on PATH")
        return _interpreter(found, where) if expanded.startswith("python") else found
    path = (config_dir / expanded).absolute()
    if not path.exists():
        raise AgentMissing(f"{where}.command: {path} does not exist")
    if path.is_dir() or not os.access(path, os.X_OK):
        raise InputError(f"{where}.command: {path} is not an executable file")
    return str(path)


def _interpreter(found: str, where: str) -> str:
    """The executable a Python on PATH really is (`sys.executable` as it reports it)."""
    try:
        proc = subprocess.run([found, "-c", "import sys; print(sys.executable)"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"{where}.command: {found} cannot run: {exc}") from None
    real = proc.stdout.strip()
    if proc.returncode != 0 or not real:
        raise InputError(f"{where}.command: {found} does not start: {(proc.stderr or proc.stdout).strip()[-300:]}")
    return real


def _check_script(command: list[str], words: list[str], where: str) -> None:
    """An interpreter's script (`python3 my_agent.py`, `node agent.js`) must exist: without it every run
    would end as `agent_error` and the arm be compared as if the agent had run."""
    if len(command) < 2 or not Path(command[0]).name.startswith(_SCRIPT_RUNNERS):
        return
    script = command[1]
    if script.startswith("-") or "{" in script or Path(words[1]).is_absolute():
        return
    if Path(script).suffix in (".py", ".js", ".mjs", ".sh", ".ts"):
        raise InputError(f"{where}.command: the script {script!r} does not exist (relative to the experiment file)")


_SCRIPT_RUNNERS = ("python", "node", "bash", "sh")


def _absolute(word: str, config_dir: Path) -> str:
    """A command word that names an existing file or folder relative to the experiment file, made absolute
    (the agent runs in its workspace, not beside the experiment file); every other word as it is."""
    if word.startswith("-") or "{" in word or "=" in word or not word.strip():
        return word
    path = config_dir / os.path.expanduser(word)
    return str(path.absolute()) if path.exists() else word


def agent_fixed_variable(config: ExperimentConfig, agents: dict[str, AgentSpec]) -> str:
    """What the `agent` fixed variable holds: the hash of the one agent every arm runs (its command,
    environment, installed version and config files), or which agents the arms vary, each external one
    with its hash: so a changed version moves the variable however the arms are set.

    Raises:
        InputError: a version command that cannot run or fails (run whether or not the arms vary).
    """
    hashes = {agent.model_dump_json(): _agent_hash(agent) for agent in agents.values()}
    labels = {arm.key: (agents[arm.key].label if arm.key in agents else "builtin") for arm in config.strategies}
    distinct = {agents[key].model_dump_json() if key in agents else "builtin" for key in labels}
    if len(distinct) > 1:
        named = {("builtin" if key not in agents else f"{agents[key].label} ({hashes[agents[key].model_dump_json()][:12]})")
                 for key in labels}
        return "varied by the arms: " + ", ".join(sorted(named))
    return next(iter(hashes.values()), None) or config_hash("builtin")


def _agent_hash(agent: AgentSpec) -> str:
    return config_hash({"command": agent.command, "env": agent.env, "version": _version(agent),
                        **({"home_files": agent.home_files} if agent.home_files else {}),
                        "config_files": [Path(f).read_bytes().hex() for f in agent.config_files]})


def _version(agent: AgentSpec) -> str | None:
    if agent.version_command is None:
        return None
    try:
        proc = subprocess.run(agent.version_command, capture_output=True, text=True, timeout=VERSION_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InputError(f"agent.version_command {agent.version_command[0]}: cannot run: {exc}") from None
    if proc.returncode != 0:
        raise InputError(f"agent.version_command {agent.version_command[0]}: exit {proc.returncode}: "
                         f"{(proc.stderr or proc.stdout).strip()[-300:]}")
    return proc.stdout.strip()
