"""A nightly history folder: the runs of one experiment it holds, oldest first, and the run before the
current one."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ctxbench.harness.errors import InputError
from ctxbench.harness.records import RunResult
from ctxbench.harness.records.results import read_results
from ctxbench.harness.records.results_folder import MANIFEST_FILE, RUNS_FILE, read_manifest
from ctxbench.reports.loading import ResultsFolder, load_results

__all__ = ["History", "read_history", "find_previous_run", "latest_run"]


@dataclass(frozen=True)
class History:
    """Every run of one experiment (same name) in a history folder, oldest first."""

    runs: list[ResultsFolder]
    skipped: list[str]
    """Sub-folders left out, each with the reason."""


def _run_folders(history: Path) -> list[Path]:
    """The sub-folders of `history` that hold a manifest, by name."""
    history = Path(history)
    if not history.is_dir():
        return []
    return sorted(p for p in history.iterdir() if p.is_dir() and (p / MANIFEST_FILE).exists())


def _order_key(folder: ResultsFolder) -> tuple[str, str]:
    return folder.manifest.created, folder.path.name


def read_history(history: Path, current: ResultsFolder) -> History:
    """Every run folder in `history` of the same experiment (same name) as `current`, current included."""
    runs, skipped = [], []
    for sub in _run_folders(history):
        if sub.resolve() == current.path.resolve():
            runs.append(current)
            continue
        try:
            folder = load_results(sub)
        except InputError as exc:
            skipped.append(f"`{sub.name}`: {exc}")
            continue
        if folder.manifest.name != current.manifest.name:
            skipped.append(f"`{sub.name}`: another experiment ({folder.manifest.name})")
            continue
        runs.append(folder)
    if all(f.path.resolve() != current.path.resolve() for f in runs):
        runs.append(current)
    return History(sorted(runs, key=_order_key), skipped)


def find_previous_run(history: History, current: ResultsFolder) -> ResultsFolder | None:
    """The latest run of the history that started before `current`."""
    earlier = [f for f in history.runs if _order_key(f) < _order_key(current)]
    return earlier[-1] if earlier else None


def latest_run(history: Path, name: str) -> tuple[Path, list[RunResult]] | None:
    """The latest readable run in `history` of the experiment called `name`, with its runs (None when
    there is none). Reads manifests to order them, and the runs of the one chosen only."""
    named = []
    for sub in _run_folders(history):
        try:
            manifest = read_manifest(sub)
        except InputError:
            continue
        if manifest.name == name:
            named.append((manifest.created, sub.name, sub))
    for *_, sub in sorted(named, reverse=True):
        try:
            return sub, read_results(sub / RUNS_FILE)
        except InputError:
            continue
    return None
