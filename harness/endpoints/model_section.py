"""The model section alone, for the commands that serve a model (`serve-sim`, `gateway`), and how a
request's own sampling settings meet it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ctxbench.harness.config import (ModelConfig, TasksetSpec, _apply_overrides, _unknown_key, load_config,
                                     resolve_experiment_path)
from ctxbench.harness.errors import InputError, validation_problems
from ctxbench.harness.wire.base import ModelRequest

__all__ = ["load_model_section", "request_settings"]


def load_model_section(path: Path | None, overrides: list[str]) -> tuple[ModelConfig, TasksetSpec | None, Path]:
    """The model section for a command that serves a model (`serve-sim`, `gateway`): an experiment's,
    with `overrides`, or the defaults with `model.*` overrides alone.

    Returns:
        The model config, the experiment's taskset section (None without one), and the folder its
        paths are relative to.

    Raises:
        InputError: a problem of the experiment file or an override (every one at once), or an override
            of a key outside `model` without an experiment file.
    """
    if path is not None:
        config = load_config(path, overrides)
        return config.model, config.taskset, resolve_experiment_path(path).parent.resolve()
    outside = [item.split("=", 1)[0] for item in overrides if not item.startswith("model.")]
    if outside:
        raise InputError(*(f"--set {key}: only model.* keys apply without --config" for key in outside))
    data: dict[str, Any] = {}
    problems = _apply_overrides(data, overrides)
    if problems:
        raise InputError(*problems)
    try:
        return ModelConfig.model_validate(data.get("model", {})), None, Path.cwd()
    except ValidationError as exc:
        raise InputError(*validation_problems(exc, "model", unknown=lambda loc: _unknown_key(("model", *loc)))) from None


def request_settings(request: ModelRequest, model: ModelConfig) -> tuple[int, int]:
    """The output reserve and seed one request is answered with, the same wherever a model is served:
    the client's `max_tokens` up to the model's `max_output_tokens` (Claude Code asks for 32,000; a
    reserve that large would leave no room in the window), and the client's seed, else the model's,
    else 0."""
    reserve = min(request.max_output_tokens or model.max_output_tokens, model.max_output_tokens)
    seed = request.seed if request.seed is not None else (model.seed or 0)
    return reserve, seed
