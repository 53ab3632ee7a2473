"""Load a results folder: its manifest, its runs as a DataFrame, and the context fill from transcripts."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd
from pydantic import ValidationError

from ctxbench.harness.errors import InputError, validation_problems
from ctxbench.harness.records import Manifest, RunResult, SandboxInfo, TranscriptTurn
from ctxbench.harness.results import read_results
from ctxbench.harness.transcript import read_transcript

__all__ = ["Manifest", "SandboxInfo", "ResultsFolder", "load_results", "runs_frame", "fill_frame", "FillPoint"]


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
        raise InputError(f"{file}: invalid manifest ({'; '.join(validation_problems(exc))})") from exc


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

    Returns an empty frame (with the FillPoint columns) when the folder has no transcripts.

    Raises:
        InputError: a transcript is not of the version ctxbench reads.
    """
    points: list[FillPoint] = []
    root = Path(path) / "transcripts"
    for file in sorted(root.glob(f"*/*{_SUFFIX}")):
        task_id, _, repeat = file.name[: -len(_SUFFIX)].rpartition(".")
        try:
            for record in read_transcript(file):
                if isinstance(record, TranscriptTurn):
                    points.append(FillPoint(file.parent.name, task_id, int(repeat), record.turn, record.fill,
                                            record.context_tokens))
        except ValueError as exc:
            raise InputError(f"{file}: not a transcript this version of ctxbench reads ({str(exc)[:300]})") from None
    return pd.DataFrame(points, columns=list(FillPoint.__dataclass_fields__))
