"""A run's workspace as strategies see it: its current text files, read-only (`RepoView`)."""

from __future__ import annotations

from pathlib import Path

from ctxbench.harness.loop.tools import walk_files

__all__ = ["WorkspaceFiles"]


class WorkspaceFiles:
    """RepoView over a workspace folder: current text files, read-only."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def paths(self) -> list[str]:
        """The files the agent's tools see (`list_files` of the whole workspace)."""
        return [p.relative_to(self.root).as_posix() for p in walk_files(self.root)[0]]

    def read(self, path: str) -> str:
        return (self.root / path).read_text(errors="replace")
