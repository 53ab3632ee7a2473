"""One run of an external agent: its gateway route, the agent contained in the run's workspace, and
what the run spent and why it stopped.

The agent runs as the tests do (the sandbox's jail and limits, its whole group killed at the end),
with the run's folder as the only place it may write and a relay (`ctxbench.harness.agents.relay`) as its
parent: the relay's loopback port is the only network the agent has, and it leads to this run's
gateway route and nowhere else. The agent gets `OPENAI_BASE_URL` and `ANTHROPIC_BASE_URL`,
`OPENAI_API_KEY` and `ANTHROPIC_API_KEY` (a token for this run only, never the real key) and
`CTXBENCH_MODEL`; the statement on standard input, and in its
command where it asks for it (`{statement}`, `{statement_file}`).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

from ctxbench.harness.agents import docker_standin, relay
from ctxbench.harness.loop.agent import AgentOutcome
from ctxbench.harness.config.agent import AgentSpec
from ctxbench.harness.agents.route import AgentRoute
from ctxbench.harness.endpoints.server import make_unix_server
from ctxbench.harness.config import ExperimentConfig
from ctxbench.harness.pricing import Prices
from ctxbench.harness.protocols import Model
from ctxbench.harness.records import History, Task, TranscriptEnd
from ctxbench.harness.redact import scrub
from ctxbench.harness.sandbox import Sandbox, run_contained
from ctxbench.harness.environments.testenv import test_env_vars
from ctxbench.harness.tokens import TokenCounter
from ctxbench.harness.records.transcript import TranscriptWriter
from ctxbench.harness.environments.workspace import Workspace
from ctxbench.harness.environments.workspace_files import WorkspaceFiles
from ctxbench.strategies.hook import StrategyHook
from ctxbench.strategies.registry import StrategyServices

__all__ = ["ExternalRun", "run_external", "ERROR_TAIL_CHARS"]

ERROR_TAIL_CHARS = 4000
"""How many characters of a failed agent's output its run keeps (the end, where the error is)."""

_RELAY_SOURCE = inspect.getsource(relay)
_STANDIN_SOURCE = inspect.getsource(docker_standin)


@dataclasses.dataclass(frozen=True)
class ExternalRun:
    """What one external run needs besides its workspace."""

    agent: AgentSpec
    strategy: str
    params: dict[str, object]
    config: ExperimentConfig
    sandbox: Sandbox
    prices: Prices | None
    python: str
    """The interpreter the task's tests run with: `python` and `python3` on the agent's PATH."""


def run_external(run: ExternalRun, task: Task, ws: Workspace, model: Model, counter: TokenCounter,
                 transcript: TranscriptWriter, deadline: float) -> AgentOutcome:
    """Run the agent against its own gateway route until it exits, the gateway ends the run or the
    run's time is up. Fatal provider errors propagate (after the agent is gone)."""
    config = run.config
    outcome = AgentOutcome("finished", History("", task.problem_statement))
    folder = ws.scratch / "agent"
    folder.mkdir()
    statement = folder / "statement.md"
    statement.write_text(task.problem_statement)
    hook = StrategyHook(run.strategy, dict(run.params), context_window=config.model.window,
                        max_output_tokens=config.model.max_output_tokens, tokenizer=config.model.tokenizer,
                        services=StrategyServices(model=model, repo=WorkspaceFiles(ws.root)),
                        test_commands=(task.test_cmd,), counter=counter)
    route = AgentRoute(hook, model, config.model.name, config.limits, config.model.window, transcript,
                       outcome, folder / "stop", run.prices)
    token = secrets.token_urlsafe(24)
    server = make_unix_server(route, folder / "gateway.sock", token)
    serving = threading.Thread(target=server.serve_forever, name="agent-route", daemon=True)
    serving.start()
    executing = None
    container = ws.live_container()
    if container is not None:  # the agent's `docker` reaches this one
        executing = container.serve(folder / "container.sock", deadline, config.limits.tool_output_bytes)
        threading.Thread(target=executing.serve_forever, name="agent-container", daemon=True).start()
    try:
        result = _contained(run, ws, folder, statement, token, deadline, route)
    finally:
        server.shutdown()
        server.server_close()
        serving.join()
        if executing is not None:
            executing.shutdown()
            executing.server_close()
    route.flush()
    _clear_beside_repo(ws)
    if route.fatal is not None:
        raise route.fatal
    if route.crash is not None:  # recorded as the loop's own bugs are: harness_error, its traceback kept
        assert route.stop is not None
        transcript.end(TranscriptEnd(stop="harness_error", detail=route.stop[1], turns=outcome.turns))
        raise route.crash
    if route.stop is not None:
        outcome.stop, outcome.detail = route.stop
    elif result.timed_out:
        outcome.stop, outcome.detail = "timeout", f"the agent was still running at the run's time limit"
    elif result.exit_code != 0 or result.limit_hit:
        outcome.stop = "agent_error"
        code = "killed: more than its process limit" if result.limit_hit else f"exit code {result.exit_code}"
        outcome.detail = f"the agent ended with {code}; its output ends:\n" + scrub(result.output)[-ERROR_TAIL_CHARS:]
    transcript.end(TranscriptEnd(stop=outcome.stop, detail=outcome.detail, turns=outcome.turns))
    outcome.tool_s = result.seconds
    return outcome


def _contained(run: ExternalRun, ws: Workspace, folder: Path, statement: Path, token: str, deadline: float,
               route: AgentRoute):
    agent = run.agent
    assert agent.command is not None
    model_name = run.config.model.name
    home = Path("/tmp") if run.sandbox.mode == "bwrap" else folder / "home"
    home.mkdir(exist_ok=True)
    values = {"statement": statement.read_text(), "statement_file": str(statement), "model": model_name,
              "workspace": str(ws.root)}
    python = run.python
    container = ws.live_container()
    if container is not None:
        bin_dir = _docker_folder(folder, container.name)
        values.update({"docker": str(bin_dir / "docker"), "image": container.image, "workdir": container.workdir})
        python = sys.executable  # what the stand-in runs with: the relay's own interpreter, in the jail already
    else:
        bin_dir = _python_folder(folder, run.python)
    env = {**test_env_vars(home),  # the agent's own test runs run as ctxbench's do: no caches, fixed hash seed
           "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
           **agent.env,  # filled by the relay, with the command: one pass, `{base_url}` known there
           "OPENAI_API_KEY": token, "ANTHROPIC_API_KEY": token, "CTXBENCH_MODEL": model_name}
    placeholders = folder / "placeholders.json"
    placeholders.write_text(json.dumps({"values": values, "env": sorted(set(agent.env) - {
        "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "CTXBENCH_MODEL"}), "home_files": agent.home_files}), encoding="utf-8")
    argv = [sys.executable, "-I", "-c", _RELAY_SOURCE, str(folder / "gateway.sock"), str(statement),
            str(folder / "stop"), str(placeholders), "--", *agent.command]
    sandbox = dataclasses.replace(run.sandbox, keep=kept_folders(agent.command, python))
    timeout = max(1.0, deadline - time.monotonic())
    try:
        return run_contained(argv, ws.root, timeout, env, sandbox, run.config.limits.tool_output_bytes,
                             writable=ws.scratch, extended=lambda: route.retried_s)  # as the loop's deadline
    except (OSError, subprocess.SubprocessError) as exc:
        raise RuntimeError(f"the agent could not be started: {exc}") from exc


def kept_folders(command: list[str], python: str) -> tuple[str, ...]:
    """What the jail binds back for an agent, where the home folder or /tmp covers it: the installation
    of its program, of the interpreter its `#!` line names (a virtual environment's `python3` links to
    a Python that may live in the home folder, e.g. pyenv's) and of the test interpreter (the folder
    above their `bin/`, e.g. a virtual environment, and the one a link leads to; for a program of an npm
    installation, its whole `node_modules`), and each file the command names (with its folder), never
    the home folder itself."""
    home = Path.home().absolute()
    kept: set[Path] = set()
    for program in (command[0], _script_interpreter(command[0]), python):
        if program is None:
            continue
        for exe in _link_hops(Path(program)):
            if "node_modules" in exe.parts:  # an npm installation: its whole tree (native parts live beside)
                kept.add(Path(*exe.parts[:exe.parts.index("node_modules") + 1]))
            else:
                kept.add(exe.parent.parent if exe.parent.name == "bin" and exe.parent.parent != home else exe.parent)
    for word in command[1:]:
        path = Path(word)
        if path.is_absolute() and path.exists():
            kept.add(path if path.is_dir() or path.parent == home else path.parent)
    return tuple(sorted(str(p) for p in kept if p not in (Path("/"), home)))


def _link_hops(path: Path) -> list[Path]:
    """`path`, each path its chain of links passes through (every one must exist inside the jail for the
    chain to resolve there), and where it ends."""
    hops = [path]
    while hops[-1].is_symlink() and len(hops) < 40:
        hops.append(hops[-1].parent / os.readlink(hops[-1]))
    return [*hops, Path(os.path.realpath(path))]


def _script_interpreter(program: str) -> str | None:
    """The interpreter a script's `#!` line names (through `env`, the one on PATH); None for a binary."""
    try:
        with open(program, "rb") as fh:
            head = fh.readline(512)
    except OSError:
        return None
    words = head[2:].decode("utf-8", "replace").split() if head.startswith(b"#!") else []
    if len(words) >= 2 and Path(words[0]).name == "env":
        return shutil.which(words[1])
    return words[0] if words else None


def _python_folder(folder: Path, python: str) -> Path:
    """A folder whose `python` and `python3` are the task's test interpreter, first on the agent's PATH,
    so that the task's own test command (`python -m pytest ...`) runs as ctxbench runs it. Each runs the
    interpreter by its own path (`exec`), not through a link: a virtual environment's `python` linked
    from another folder starts as its base Python, without the environment's packages."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in ("python", "python3"):
        wrapper = bin_dir / name
        wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(python)} "$@"\n')
        wrapper.chmod(0o755)
    return bin_dir


def _docker_folder(folder: Path, container: str) -> Path:
    """A folder whose `docker` is the stand-in that reaches only the run's container
    (ctxbench.harness.agents.docker_standin), first on the agent's PATH."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    source = (_STANDIN_SOURCE.replace('"@SOCKET@"', json.dumps(str(folder / "container.sock")))
              .replace('"@CONTAINER@"', json.dumps(container)))
    standin = bin_dir / "docker"
    standin.write_text(f"#!{sys.executable} -I\n{source}")
    standin.chmod(0o755)
    return bin_dir


def _clear_beside_repo(ws: Workspace) -> None:
    """Remove whatever the agent left in the run's folder outside the repository, so that nothing it
    wrote there can reach the evaluation."""
    for entry in ws.scratch.iterdir():
        if entry.name == "repo":
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)
