"""What an experiment is checked for before anything is written: where its external agents run, the
results folder, the gold patches."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import tiktoken

from ctxbench.harness.config import ExperimentConfig
from ctxbench.harness.models.served import resolve_window, served_window
from ctxbench.harness.models.served_counting import choose_tokenizer
from ctxbench.harness.environments import environment_for
from ctxbench.harness.errors import InputError
from ctxbench.harness.records import Task, Taskset

__all__ = ["check_agents_run_here", "check_output_dir", "check_gold_patches", "pricing_warning", "served_model"]


def check_agents_run_here(config: ExperimentConfig, taskset: Taskset) -> None:
    """An external agent runs on this machine, in the run's folder. For a task whose environment runs
    containers it must take the run's container (name `{docker}` or `{image}`: its commands then run
    there, docs/environments.md), else its commands and test runs would not see the image; and the
    container placeholders mean nothing for a task that runs here.

    Raises:
        InputError: naming the arm, its agent and the first such tasks.
    """
    contained = [t for t in taskset.tasks if environment_for(t).containers]
    local = [t for t in taskset.tasks if not environment_for(t).containers]
    for arm in config.strategies:
        agent = config.agent_of(arm)
        if agent.builtin:
            continue
        where = f"strategies[{arm.key}].agent" if arm.agent else "agent"
        if contained and not agent.takes_container:
            more = f" and {len(contained) - 3} more" if len(contained) > 3 else ""
            raise InputError(f"{where}: the external agent {agent.label} would run on this machine, outside the "
                             f"containers of backend {_backends(contained)} (tasks {_ids(contained)}{more}): give it "
                             "the run's container with {docker} (or {image}) in its command or env, or use agent: "
                             "builtin (docs/environments.md)")
        named = agent.container_placeholders()
        if local and named:
            more = f" and {len(local) - 3} more" if len(local) > 3 else ""
            raise InputError(f"{where}: the container placeholders {', '.join(named)} mean nothing for tasks "
                             f"{_ids(local)}{more} (backend {_backends(local)}: no container)")


def _ids(tasks: list[Task]) -> str:
    return ", ".join(t.id for t in tasks[:3])


def _backends(tasks: list[Task]) -> str:
    return ", ".join(sorted({t.runs_in.backend for t in tasks}))


def check_output_dir(out: Path, key: str) -> None:
    """The results folder can be created (or is a folder) and written.

    Raises:
        InputError: naming `key` (`--output` or `output_dir`) and what is in the way.
    """
    if out.exists() and not out.is_dir():
        raise InputError(f"{key}: {out} is a file, expected a folder for the results")
    existing = next(p for p in (out, *out.parents) if p.exists())
    if not existing.is_dir():
        raise InputError(f"{key}: {out} lies under {existing}, which is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"{key}: {existing} is not writable, so {out} cannot be written")


def check_gold_patches(taskset: Taskset) -> None:
    """`git apply --check` of every task's gold patch on its base files (milliseconds per task).

    Raises:
        InputError: naming the taskset file, the task and the key.
    """
    where = taskset.path / "taskset.yaml" if taskset.path.is_dir() else taskset.path
    for task in taskset.tasks:
        if not task.patch.strip():
            continue
        with tempfile.TemporaryDirectory(prefix="ctxbench-check-") as tmp:
            env = {**os.environ, "GIT_CEILING_DIRECTORIES": str(task.repo_dir.parent), "GIT_INDEX_FILE": f"{tmp}/index"}
            args = ["apply", "--check", "--whitespace=nowarn", "-"]
            if task.base_commit:
                read = subprocess.run(["git", "read-tree", task.base_commit], cwd=task.repo_dir, env=env,
                                      capture_output=True, text=True)
                if read.returncode != 0:
                    raise InputError(f"{where}: task {task.id}: base_commit {task.base_commit} not found in "
                                     f"{task.repo_dir}: {read.stderr.strip()[:300]}")
                args.insert(2, "--cached")
            proc = subprocess.run(["git", *args], cwd=task.repo_dir, env=env, input=task.patch,
                                  capture_output=True, text=True)
        if proc.returncode != 0:
            why = "; ".join(line.removeprefix("error: ") for line in proc.stderr.strip().splitlines())
            raise InputError(f"{where}: task {task.id}: `patch` (the gold patch) does not apply to "
                             f"{task.repo_dir}: {why[:500]}")


def pricing_warning(config: ExperimentConfig) -> str | None:
    """The warning for prices pinned to another model than the endpoint's (`model.pricing.model`, which the
    built-in experiments set to price the simulator's tokens): a real model's `cost_usd` would be that
    model's bill, not its own."""
    model = config.model
    pinned = model.pricing.model if model.pricing is not None else None
    if model.provider == "sim" or pinned is None or pinned == model.name:
        return None
    return (f"cost_usd prices model {model.name!r} at the rates of {pinned!r} (model.pricing.model); set "
            f"model.pricing to its own prices (input, output) or to {{model: {model.name}}}")


def served_model(config: ExperimentConfig) -> tuple[ExperimentConfig, list[str]]:
    """`config` as the endpoint serves its model, and what was found, one line each: the window the
    server serves (a `context_window: null` takes it; a larger one is refused), the tokenizer that
    `auto` chose (also when it is left unset, for a model tiktoken does not know behind a server of open
    models: llama.cpp, vLLM, SGLang, Ollama, LiteLLM), and
    the runs in flight a server with few slots takes (`max_runs` unset: one per slot). The simulator's
    model is returned as it is.

    Raises:
        InputError: a window over the served one, or null where the server does not say it.
        EndpointUnavailable: nothing answers.
    """
    model = config.model
    if model.provider == "sim":
        return config, []
    served = served_window(model)
    model = resolve_window(model, served)
    notes = [f"model.context_window: {model.window} tokens" + (
        f"; the {served.server} server serves {served.window}" + (f" per slot, {served.slots} slots" if served.slots else "")
        + f" ({served.source})" if served.window is not None else f" ({served.source})")]
    if model.tokenizer == "auto" or ("tokenizer" not in model.model_fields_set and served.server in _MODEL_SERVERS
                                     and not _tiktoken_knows(model.name)):
        choice = choose_tokenizer(model)
        model = model.model_copy(update={"tokenizer": choice.tokenizer})
        reason = choice.reason if len(choice.reason) <= 200 else choice.reason[:200] + "…"
        notes.append(f"model.tokenizer: {choice.tokenizer} ({reason})")
    update: dict[str, object] = {"model": model}
    if config.max_runs is None and served.slots:
        update["max_runs"] = served.slots
        notes.append(f"max_runs: {served.slots}, one run in flight per slot of the server (set max_runs to change it)")
    elif served.slots and config.max_runs is not None and config.max_runs > served.slots:
        notes.append(f"WARNING: max_runs {config.max_runs} is over the server's {served.slots} slots: the runs "
                     "in flight share them, each slot slower")
    return config.model_copy(update=update), notes


_MODEL_SERVERS = ("llama.cpp", "vllm", "sglang", "ollama", "litellm")
"""Servers of open models, whose tokenizers tiktoken's default encoding does not know: `model.tokenizer`
left unset means `auto` behind them."""


def _tiktoken_knows(name: str) -> bool:
    try:
        tiktoken.encoding_name_for_model(name)
    except KeyError:
        return False
    return True
