"""The model section alone, for the commands that serve a model (`serve-sim`, `gateway`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ctxbench.harness.config import (ModelConfig, TasksetSpec, _apply_overrides, _unknown_key, load_config,
                                     resolve_experiment_path)
from ctxbench.harness.errors import InputError, validation_problems

__all__ = ["load_model_section"]


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
