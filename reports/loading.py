"""Load a results folder: its manifest, its runs as a DataFrame, and the context fill from transcripts."""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ctxbench.harness.errors import InputError
from ctxbench.harness.results import RunResult, read_results

__all__ = ["Manifest", "SandboxInfo", "ResultsFolder", "load_results", "runs_frame", "fill_frame", "FillPoint"]


class SandboxInfo(BaseModel):
    """How test commands were contained."""

    model_config = ConfigDict(extra="ignore")
    requested: str | None = None
    used: str | None = None
    warning: str | None = Field(None, description="Set when the sandbox fell back to less isolation.")


class Manifest(BaseModel):
    """The part of `manifest.json` (written by ctxbench.harness.runner.manifest_for) the reports read."""

    model_config = ConfigDict(extra="ignore")
    experiment_id: str = Field(description="Hash of the name, the resolved config and the taskset: the experiment.")
    fixed_id: str | None = Field(None, description="Hash of the fixed variables alone (absent in older folders).")
    name: str
    created: str = Field(description="UTC ISO time the experiment started.")
    harness_version: str
    fixed: dict[str, str] = Field(description="Hashes of the fixed variables (model, taskset, ...).")
    config: dict[str, Any] = Field(description="The full resolved experiment config.")
    strategies: list[dict[str, Any]] = Field(default_factory=list)
    simulated: bool = Field(description="The model provider is the simulator.")
    sandbox: SandboxInfo = Field(default_factory=SandboxInfo)
    pricing: dict[str, Any] | None = Field(None, description="$ per million tokens (input, cached_input, output) and their source.")

    @property
    def strategy_labels(self) -> list[str]:
        """Strategy result keys in the order the experiment lists them."""
        return [s.get("label") or s["name"] for s in self.strategies]

    @property
    def model_name(self) -> str:
        return str(self.config.get("model", {}).get("name", "?"))


@dataclass(frozen=True)
class ResultsFolder:
    """A results folder read into memory."""

    path: Path
    """The folder holding manifest.json and runs.jsonl."""
    manifest: Manifest
    runs: pd.DataFrame
    """One row per run, columns = RunResult fields."""

    @property
    def strategies(self) -> list[str]:
        """Strategies with runs, in manifest order (then any others in order of appearance)."""
        seen = list(dict.fromkeys(self.runs["strategy"]))
        return [s for s in self.manifest.strategy_labels if s in seen] + [
            s for s in seen if s not in self.manifest.strategy_labels]


def runs_frame(results: list[RunResult]) -> pd.DataFrame:
    """One row per run, one column per RunResult field."""
    columns = list(RunResult.model_fields)
    return pd.DataFrame([r.model_dump() for r in results], columns=columns)


def read_manifest(path: Path) -> Manifest:
    """Read and validate `<dir>/manifest.json`.

    Raises:
        InputError: the file is missing or lacks a field the reports need.
    """
    file = path / "manifest.json"
    if not file.is_file():
        raise InputError(f"{path}: not a results folder (no manifest.json)")
    try:
        return Manifest.model_validate_json(file.read_text())
    except ValidationError as exc:
        fields = ", ".join(".".join(str(p) for p in e["loc"]) for e in exc.errors())
        raise InputError(f"{file}: invalid manifest ({fields})") from exc


def load_results(path: str | Path) -> ResultsFolder:
    """Read a results folder.

    Args:
        path: Folder with manifest.json and runs.jsonl.

    Raises:
        InputError: no manifest, or no runs recorded.
    """
    path = Path(path)
    manifest = read_manifest(path)
    results = read_results(path / "runs.jsonl")
    if not results:
        raise InputError(f"{path}: runs.jsonl holds no runs")
    return ResultsFolder(path, manifest, runs_frame(results))


@dataclass(frozen=True)
class FillPoint:
    """Context fill at one turn of one run (a transcript line)."""

    strategy: str
    task_id: str
    repeat: int
    turn: int
    fill: float
    """Context tokens / context window."""
    context_tokens: int


_SUFFIX = ".jsonl.gz"


def fill_frame(path: str | Path) -> pd.DataFrame:
    """Context fill per turn of every run, from `<dir>/transcripts/<strategy>/<task>.<repeat>.jsonl.gz`.

    Lines without a `turn` (the closing `stop_detail`) are skipped. Returns an empty frame (with the
    FillPoint columns) when the folder has no transcripts.
    """
    points: list[FillPoint] = []
    root = Path(path) / "transcripts"
    for file in sorted(root.glob(f"*/*{_SUFFIX}")):
        task_id, _, repeat = file.name[: -len(_SUFFIX)].rpartition(".")
        with gzip.open(file, "rt", encoding="utf-8") as fh:
            for line in fh:
                if not line.strip():
                    continue
                record = json.loads(line)
                if "turn" not in record:
                    continue
                points.append(FillPoint(file.parent.name, task_id, int(repeat), int(record["turn"]),
                                        float(record["fill"]), int(record["context_tokens"])))
    return pd.DataFrame(points, columns=list(FillPoint.__dataclass_fields__))
