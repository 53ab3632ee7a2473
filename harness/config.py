"""The experiment config: one validated model with every default in one place."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ctxbench.harness.errors import InputError
from ctxbench.harness.yamlfile import read_text, read_yaml

__all__ = ["ExperimentConfig", "ModelConfig", "SimParams", "Limits", "TasksetSpec", "StrategySpec",
           "load_config", "apply_overrides", "config_hash", "DEFAULT_SYSTEM_PROMPT"]

DEFAULT_SYSTEM_PROMPT = """You are a careful software engineer fixing a bug in a repository.
Use the tools to run the tests, search the code, read files and edit them. Make the smallest
change that fixes the reported problem, run the tests to check it, then call `finish`."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SimParams(_Strict):
    """The simulated model's attention and error model (see README, "The simulated model")."""

    r0: float = Field(0.95, ge=0, le=1, description="Chance to notice a visible piece of evidence in an empty context.")
    fill_onset: float = Field(0.25, ge=0, le=1, description="Context fill (tokens / window) where attention starts to degrade (f0).")
    fill_slope: float = Field(1.1, ge=0, description="How fast attention falls past fill_onset (a).")
    middle_penalty: float = Field(0.6, ge=0, le=1, description="Loss of attention in the middle of the context (m).")
    middle_full_at: float = Field(0.5, gt=0, le=1, description="Fill at which the middle penalty reaches full strength.")
    detour_rate: float = Field(0.5, ge=0, le=1, description="Chance per turn of a detour, times the share of noise (d).")
    slip_rate: float = Field(0.03, ge=0, le=1, description="Chance that an edit is wrong (s).")
    read_window: int = Field(60, ge=5, description="Lines read around a line of interest (search hit, traceback frame).")
    max_searches: int = Field(6, ge=1, description="Most names from the task statement it will search for.")


class ModelConfig(_Strict):
    provider: Literal["sim", "openai"] = Field("sim", description="`sim` (embedded simulator) or `openai` (any OpenAI-compatible endpoint).")
    name: str = Field("sim-coder", description="Model name sent to the provider.")
    base_url: str | None = Field(None, description="Endpoint for `openai` (e.g. http://127.0.0.1:8000/v1).")
    api_key_env: str | None = Field(None, description="Name of the environment variable holding the API key (never the key).")
    temperature: float = Field(0.0, ge=0, le=2)
    top_p: float = Field(1.0, gt=0, le=1)
    max_output_tokens: int = Field(1024, ge=16, description="Output reserve; also sent as max_tokens.")
    seed: int | None = Field(None, description="Sampling seed sent to the provider; default: the run's seed.")
    context_window: int = Field(16000, ge=512, description="Context window in tokens; requests over it are rejected.")
    tokenizer: str = Field("cl100k_base", description="tiktoken encoding used for every count.")
    max_retries: int = Field(4, ge=0, description="Retries on rate limits, 5xx and timeouts.")
    request_timeout_s: float = Field(120.0, gt=0)
    sim: SimParams = Field(default_factory=SimParams)


class TasksetSpec(_Strict):
    path: str = Field(description="Folder with taskset.yaml, a .jsonl of SWE-bench instances, or a built-in name.")
    ids: list[str] | None = None
    include_tags: list[str] | None = None
    exclude_tags: list[str] | None = None
    repos: str | None = Field(None, description="For .jsonl tasksets: folder of local git repositories `<owner>__<name>`.")


class StrategySpec(_Strict):
    name: str
    params: dict[str, Any] = Field(default_factory=dict)
    label: str | None = Field(None, description="Name in results; default the strategy name. Needed to run one strategy twice.")

    @property
    def key(self) -> str:
        return self.label or self.name


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
    repeats: int = Field(3, ge=1, le=1000)
    seed: int = 0
    limits: Limits = Field(default_factory=Limits)
    system_prompt: str | None = None
    system_prompt_file: str | None = None
    workers: int | None = Field(None, ge=1, description="Parallel runs; default the number of cores.")
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = Field(None, description="Existing Ray cluster to join; default a local one.")
    sandbox: Literal["bwrap", "none"] = Field("bwrap", description="How test commands are contained.")
    output_dir: str | None = Field(None, description="Default results/<name>-<UTC time>.")
    keep_workspaces: bool = False

    @model_validator(mode="before")
    @classmethod
    def _taskset_shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("taskset"), str):
            data = {**data, "taskset": {"path": data["taskset"]}}
        return data

    @model_validator(mode="after")
    def _checks(self) -> ExperimentConfig:
        keys = [s.key for s in self.strategies]
        dup = {k for k in keys if keys.count(k) > 1}
        if dup:
            raise ValueError(f"strategies: duplicate names {sorted(dup)}; give each a distinct `label`")
        if self.system_prompt and self.system_prompt_file:
            raise ValueError("give system_prompt or system_prompt_file, not both")
        return self

    def resolved_system_prompt(self, base: Path) -> str:
        if self.system_prompt_file:
            return read_text(base / self.system_prompt_file, "system_prompt_file")
        return self.system_prompt or DEFAULT_SYSTEM_PROMPT

    @property
    def resolved_workers(self) -> int:
        return self.workers or os.cpu_count() or 1


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


def apply_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """Apply `KEY.PATH=VALUE` overrides; values are parsed as YAML."""
    for item in overrides:
        if "=" not in item:
            raise InputError(f"--set {item!r}: expected KEY.PATH=VALUE")
        key, raw = item.split("=", 1)
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            raise InputError(f"--set {key}: value is not valid YAML: {exc}") from exc
        try:
            _set_path(data, key.strip(), value)
        except (ValueError, IndexError, AttributeError) as exc:
            raise InputError(f"--set {key}: cannot set this key path ({exc})") from exc
    return data


def _describe(errors: list[dict[str, Any]]) -> str:
    lines = []
    for e in errors:
        loc = ".".join(str(p) for p in e["loc"]) or "(top level)"
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        elif "input" in e and e["type"] not in ("missing",):
            msg = f"{msg} (got {e['input']!r})"
        lines.append(f"  {loc}: {msg}")
    return "\n".join(lines)


def builtin_experiments_dir() -> Path:
    """Where the ready-to-run experiment files live (`experiments/`, package data when installed)."""
    return Path(__file__).resolve().parent.parent / "experiments"


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


def load_config(path: str | Path, overrides: list[str] | None = None) -> ExperimentConfig:
    """Read, override and validate an experiment file; strategy names and params are checked too.

    Raises:
        InputError: naming the file, the key path and what was expected.
    """
    path = resolve_experiment_path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such experiment file")
    data = read_yaml(path, "experiment file")
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping at the top level")
    if isinstance(data.get("taskset"), str):
        data["taskset"] = {"path": data["taskset"]}
    data = apply_overrides(data, overrides or [])
    try:
        config = ExperimentConfig.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{path}: invalid experiment config\n{_describe(exc.errors())}") from exc
    from ctxbench.strategies import StrategyError, validate_params

    for i, spec in enumerate(config.strategies):
        try:
            validate_params(spec.name, spec.params)
        except StrategyError as exc:
            raise InputError(f"{path}: strategies.{i}: {exc}") from exc
    return config


def config_hash(value: Any) -> str:
    """Stable hash of a JSON-able value."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()
