"""Read-only access to the current files of a run's workspace, for strategies that select code."""

from __future__ import annotations

from typing import Mapping, Protocol

__all__ = ["RepoView", "StaticRepo"]


class RepoView(Protocol):
    """The workspace's current text files. Read-only; reflects the agent's edits."""

    def paths(self) -> list[str]:
        """Workspace-relative paths of text files, sorted."""
        ...

    def read(self, path: str) -> str:
        """The file's current text."""
        ...


class StaticRepo:
    """A RepoView over an in-memory mapping (tests, fixtures)."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self._files = dict(files)

    def paths(self) -> list[str]:
        return sorted(self._files)

    def read(self, path: str) -> str:
        return self._files[path]
