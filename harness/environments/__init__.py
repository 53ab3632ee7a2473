"""Where a run's tools act and its tests run: a workspace prepared from a task's repository, locally or in
a container, and evaluation in a fresh copy."""

from __future__ import annotations

from ctxbench.harness.environments.workspace import Workspace

__all__ = ["Workspace"]
