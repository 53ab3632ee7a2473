"""Load a results folder: its manifest and its runs as a DataFrame (the turns: `frames.turns_df`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ctxbench.harness.errors import InputError, did_you_mean, validation_problems
from ctxbench.harness.records import Manifest, RunResult, SandboxInfo
from ctxbench.harness.records.results import read_results
from ctxbench.harness.records.results_folder import read_manifest

__all__ = ["Manifest", "SandboxInfo", "ResultsFolder", "load_results", "runs_frame"]


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

    def check_strategy(self, name: str, what: str = "strategy") -> str:
        """`name` when it names a strategy with runs here.

        Raises:
            InputError: it does not; the one line says "did you mean" and lists the strategies.
        """
        if name not in self.strategies:
            raise InputError(f"{self.path}: no runs of the {what} {name!r}{did_you_mean(name, self.strategies)} "
                             f"(strategies: {', '.join(self.strategies)})")
        return name


def runs_frame(results: list[RunResult]) -> pd.DataFrame:
    """One row per run, one column per RunResult field."""
    columns = list(RunResult.model_fields)
    return pd.DataFrame([r.model_dump() for r in results], columns=columns)


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
