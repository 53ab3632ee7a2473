"""The experiment config: one validated model with every default in one place."""

from __future__ import annotations

import hashlib
import json
import os
import typing
from pathlib import Path
from typing import Any, Callable, Literal

from pydantic import (BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, ValidationError, model_serializer,
                      model_validator)

from ctxbench.harness.config.agent import AgentSpec, arm_key
from ctxbench.harness.config.borrow import borrow_agents
from ctxbench.harness.config.model import ModelConfig, Pricing, SimParams, Strict as _Strict
from ctxbench.harness.errors import InputError, did_you_mean, validation_details
from ctxbench.harness.config.sequential import SequentialConfig
from ctxbench.harness.yamlfile import parse_yaml, read_text, read_yaml

__all__ = ["ExperimentConfig", "ModelConfig", "Pricing", "SimParams", "Limits", "TasksetSpec", "StrategySpec",
           "load_config", "select_strategies", "config_hash",
           "DEFAULT_SYSTEM_PROMPT"]

DEFAULT_RUNS_IN_FLIGHT = 32
"""Runs in flight against a real endpoint when `max_runs` is not set."""

DEFAULT_SYSTEM_PROMPT = """You are a careful software engineer fixing a bug in a repository.
Use the tools to run the tests, search the code, read files and edit them. Make the smallest
change that fixes the reported problem, run the tests to check it, then call `finish`."""


class TasksetSpec(_Strict):
    path: str = Field(description="Folder with taskset.yaml, a .jsonl of SWE-bench instances, or a built-in name.")
    ids: list[str] | None = None
    include_tags: list[str] | None = None
    exclude_tags: list[str] | None = None
    limit: int | None = Field(None, ge=1, description="Only the first N tasks (after ids and tags), in taskset order.")
    repos: str | None = Field(None, description="For .jsonl tasksets: folder of local git repositories `<owner>__<name>`.")


class StrategySpec(_Strict):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)
    label: str | None = Field(None, description="Name in results; default the strategy name (`AGENT/NAME` when the arm sets its own agent). Needed to run one strategy twice.")
    agent: AgentSpec | None = Field(None, description="This arm's agent, instead of the experiment's.")

    @property
    def key(self) -> str:
        return arm_key(self.model_dump(exclude_none=True)) or self.name


class Limits(_Strict):
    max_turns: int = Field(30, ge=1)
    max_tokens_per_run: int = Field(600_000, ge=1000, description="Prompt + completion + strategy tokens.")
    run_timeout_s: float = Field(600.0, gt=0)
    test_timeout_s: float = Field(60.0, gt=0)
    tool_output_bytes: int = Field(200_000, ge=1000, description="Cap on one tool output (bytes).")
    max_invalid_actions: int = Field(3, ge=1, description="Malformed tool calls in a row before `invalid_action`.")
    loop_threshold: int = Field(3, ge=2, description="The same action this many times in a row ends the run as `loop`.")


class ExperimentConfig(_Strict):
    version: Literal[1] = 1
    name: str
    model: ModelConfig = Field(default_factory=ModelConfig)
    taskset: TasksetSpec
    strategies: list[StrategySpec] = Field(min_length=1)
    agent: AgentSpec = Field(default_factory=AgentSpec, description="The agent every arm runs, unless the arm names its own: `builtin` (ctxbench's loop) or a command (docs/agents.md).")
    repeats: int = Field(3, ge=1, le=1000)
    seed: int = 0
    limits: Limits = Field(default_factory=Limits)
    system_prompt: str | None = None
    system_prompt_file: str | None = None
    workers: int | None = Field(None, ge=1, description="Worker processes (the CPU work: tests, tools); default the number of cores.")
    max_runs: int | None = Field(None, ge=1, description="Runs in flight, spread over the workers as threads; default `workers` for `provider: sim` (CPU-bound) or an external agent (a process per run), 32 otherwise.")
    max_subprocesses: int | None = Field(None, ge=1, description="Test and tool subprocesses at once; default 2 per core.")
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = Field(None, description="Existing Ray cluster to join; default a local one.")
    sandbox: Literal["bwrap", "none"] = Field("bwrap", description="How test commands are contained.")
    output_dir: str | None = Field(None, description="Default results/<name>-<UTC time>.")
    keep_workspaces: bool = False
    sequential: SequentialConfig | None = Field(None, description="Run in rounds until each arm is decided (as `ctxbench run --until-decided`).")

    @model_validator(mode="before")
    @classmethod
    def _taskset_shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("taskset"), str):
            data = {**data, "taskset": {"path": data["taskset"]}}
        return data

    @model_validator(mode="after")
    def _checks(self) -> ExperimentConfig:
        problems = _cross_problems([s.model_dump() for s in self.strategies], self.system_prompt, self.system_prompt_file)
        if problems:
            raise ValueError("; ".join(f"{key}: {msg}" for key, msg in problems))
        return self

    def resolved_system_prompt(self, base: Path) -> str:
        if self.system_prompt_file:
            return read_text(base / self.system_prompt_file, "system_prompt_file")
        return self.system_prompt or DEFAULT_SYSTEM_PROMPT

    def as_record(self) -> dict[str, Any]:
        """The resolved config as JSON data, as `manifest.json` keeps it: the `agent` keys left out where
        they are the builtin default, so experiments of the builtin loop keep their ids and folders
        written before the key existed can be resumed."""
        data = self.model_dump(mode="json")
        if self.agent.builtin and self.agent.name is None:
            del data["agent"]
        if self.sequential is None:
            del data["sequential"]
        for arm in data["strategies"]:
            if arm.get("agent") is None:
                arm.pop("agent", None)
        return data

    def agent_of(self, arm: StrategySpec) -> AgentSpec:
        """The agent `arm` runs: its own, else the experiment's."""
        return arm.agent or self.agent

    @property
    def planned_repeats(self) -> int:
        """Repeats of every task at most: `sequential.max_repeats`, else `repeats`."""
        return (self.sequential and self.sequential.max_repeats) or self.repeats

    @property
    def resolved_workers(self) -> int:
        return self.workers or os.cpu_count() or 1

    @property
    def resolved_max_runs(self) -> int:
        if self.max_runs is not None:
            return self.max_runs
        external = any(not self.agent_of(arm).builtin for arm in self.strategies)  # a process per run in flight
        if self.model.provider == "sim" or external:
            return self.resolved_workers
        return max(DEFAULT_RUNS_IN_FLIGHT, self.resolved_workers)

    @property
    def resolved_max_connections(self) -> int:
        return self.model.max_connections or self.resolved_max_runs

    @property
    def resolved_max_subprocesses(self) -> int:
        return self.max_subprocesses or 2 * (os.cpu_count() or 1)


def _cross_problems(strategies: list[dict[str, Any]], system_prompt: Any,
                    system_prompt_file: Any) -> list[tuple[str, str]]:
    """Checks across keys, as (key, problem); shared by the model and `load_config`."""
    problems = []
    keys = [arm_key(s) for s in strategies]
    dup = sorted({k for k in keys if k is not None and keys.count(k) > 1})
    if dup:
        problems.append(("strategies", f"{', '.join(dup)} appear twice; give each a distinct `label`"))
    if system_prompt and system_prompt_file:
        problems.append(("system_prompt", "give system_prompt or system_prompt_file, not both"))
    return problems


def _set_path(data: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node: Any = data
    for i, part in enumerate(parts[:-1]):
        if isinstance(node, list):
            node = node[int(part)]
            continue
        if part not in node or node[part] is None:
            node[part] = {}
        elif not isinstance(node[part], (dict, list)):
            raise ValueError(f"{'.'.join(parts[:i + 1])} is {node[part]!r}, not a mapping")
        node = node[part]
    last = parts[-1]
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value


def _apply_overrides(data: dict[str, Any], overrides: list[str]) -> list[str]:
    """Apply what can be applied; return a line for each override that cannot."""
    problems = []
    for item in overrides:
        if "=" not in item:
            problems.append(f"--set {item!r}: expected KEY.PATH=VALUE")
            continue
        key, raw = item.split("=", 1)
        try:
            value = parse_yaml(raw, f"--set {key}: value")
        except InputError as exc:
            problems += exc.problems
            continue
        try:
            _set_path(data, key.strip(), value)
        except (ValueError, IndexError, AttributeError, TypeError) as exc:
            problems.append(f"--set {key}: cannot set this key path ({exc})")
        _taskset_shorthand(data)
    return problems


def _taskset_shorthand(data: dict[str, Any]) -> None:
    """`taskset: NAME` is `taskset: {path: NAME}`, so that `taskset.limit` and the like can be set on it."""
    if isinstance(data.get("taskset"), str):
        data["taskset"] = {"path": data["taskset"]}


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The config model found at a key path (list indexes skipped), or None past a free-form mapping."""
    model: type[BaseModel] = ExperimentConfig
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get(part)
        if field is None:
            return None
        nested = [inner for arg in (field.annotation, *typing.get_args(field.annotation))
                  for inner in (arg, *typing.get_args(arg)) if isinstance(inner, type) and issubclass(inner, BaseModel)]
        if not nested:
            return None
        model = nested[0]
    return model


_REPLACED: dict[tuple[str, ...], str] = {
    ("model", "max_retries"): "model.retry_budget_s (seconds a request may keep failing before the run is lost "
                              "to the endpoint)"}
"""Keys of earlier versions -> what replaced them."""


def _unknown_key(loc: tuple[Any, ...]) -> str:
    """An unknown key, with the closest key of the config model it is in (or what replaced it)."""
    replaced = _REPLACED.get(tuple(str(p) for p in loc))
    if replaced:
        return f"unknown key; replaced by {replaced}"
    model = _model_at(loc[:-1])
    return "unknown key" + (did_you_mean(str(loc[-1]), model.model_fields) if model else "")


def select_strategies(strategies: Any, names: list[str]) -> list[Any]:
    """Only the arms named in `names` (each arm's label, or its name when it has none), in file order.

    Raises:
        InputError: a name that is no arm of the experiment (with the closest arm).
    """
    arms = [s for s in strategies if isinstance(s, dict)] if isinstance(strategies, list) else []
    keys = [str(arm_key(s)) for s in arms]
    unknown = [n for n in names if n not in keys]
    if unknown:
        lines = [f"--strategies: {n!r} is not an arm of the experiment{did_you_mean(n, keys)} "
                 f"(arms: {', '.join(map(str, keys))})" for n in unknown]
        raise InputError(*lines)
    return [arm for arm, key in zip(arms, keys) if key in names]


def builtin_experiments_dir() -> Path:
    """Where the ready-to-run experiment files live (`experiments/`, package data when installed)."""
    return Path(__file__).resolve().parents[2] / "experiments"


def resolve_experiment_path(spec: str | Path) -> Path:
    """An experiment file: a path as given, or the name of a built-in experiment (`quickstart`)."""
    p = Path(spec)
    if p.exists() or p.suffix in (".yaml", ".yml") or len(p.parts) > 1:
        return p
    builtin = builtin_experiments_dir() / f"{p}.yaml"
    if builtin.is_file():
        return builtin
    names = sorted(f.stem for f in builtin_experiments_dir().glob("*.yaml"))
    raise InputError(f"{spec}: no such experiment file (built-in experiments: {', '.join(names)})")


ArmCheck = Callable[[Any], list[tuple[str, str]]]
"""Checks the `strategies` list against the strategy registry: `(key.path, problem)` pairs."""


def load_config(path: str | Path, overrides: list[str] | None = None,
                strategies: list[str] | None = None, check_arms: ArmCheck | None = None) -> ExperimentConfig:
    """Read, override and validate an experiment file. The registry sits above the config, so strategy
    names and params are checked by `check_arms` when given (ctxbench.harness.run.runner.load_experiment
    passes ctxbench.strategies.arm_problems), with the file's other problems.

    Args:
        path: The experiment file, or the name of a built-in experiment.
        overrides: `KEY.PATH=VALUE` items, applied in order before validation.
        strategies: Keep only these arms (by label, or name), as `--strategies` does; applied before
            `overrides`, so `strategies.N` in an override counts the arms kept.
        check_arms: Checks the arms against the strategy registry.

    Raises:
        InputError: every problem of the file at once, one `file: key.path: problem` line each.
    """
    path = resolve_experiment_path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such experiment file")
    data = read_yaml(path, "experiment file")
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping at the top level")
    borrowed = borrow_agents(data, path, resolve_experiment_path)
    _taskset_shorthand(data)
    if strategies:
        data["strategies"] = select_strategies(data.get("strategies"), strategies)
    set_problems = _apply_overrides(data, overrides or [])
    problems: list[tuple[str, str]] = [(f"{key}.from", msg) for key, msg in borrowed]
    config = None
    try:
        config = ExperimentConfig.model_validate(data)
    except ValidationError as exc:
        problems += [(key, msg) for key, msg in validation_details(exc, unknown=_unknown_key) if key != "(top level)"]
        arms = data.get("strategies")
        arms = [a for a in arms if isinstance(a, dict)] if isinstance(arms, list) else []
        problems += _cross_problems(arms, data.get("system_prompt"), data.get("system_prompt_file"))
    if check_arms is not None:
        problems += check_arms(data.get("strategies"))
    if problems or set_problems:
        set_keys = [item.split("=", 1)[0].strip() for item in overrides or []]
        raise InputError(*set_problems,
                         *dict.fromkeys(f"{_origin(key, set_keys, path)}: {msg}" for key, msg in problems))
    assert config is not None
    return config


def _origin(key: str, set_keys: list[str], path: Path) -> str:
    """`key` prefixed with where its value came from: the last `--set` that wrote it (or a key above
    it), else the experiment file."""
    for set_key in reversed(set_keys):
        if key == set_key:
            return f"--set {key}"
        if key.startswith(set_key + "."):
            return f"--set {set_key}: {key}"
    return f"{path}: {key}"


def config_hash(value: Any) -> str:
    """Stable hash of a JSON-able value."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()
