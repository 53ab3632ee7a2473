"""Shared fixtures: the built-in smoke taskset and experiment files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest


ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def smoke_dir() -> Path:
    return ROOT / "tasksets" / "smoke"


@pytest.fixture
def experiment_file(tmp_path: Path):
    """Write an experiment YAML into tmp_path and return its path."""

    def make(**overrides: Any) -> Path:
        import yaml

        data = {"name": "t", "taskset": str(ROOT / "tasksets" / "smoke"), "strategies": [{"name": "baseline"}],
                "repeats": 1, "workers": 1, "sandbox": "none"}
        data.update(overrides)
        path = tmp_path / "exp.yaml"
        path.write_text(yaml.safe_dump(data))
        return path

    return make
