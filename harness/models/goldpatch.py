"""The gold patch as the simulator reads it: its hunks (parsed by ctxbench.harness.unidiff, the one
unified-diff parser, which the workspace uses too)."""

from __future__ import annotations

from ctxbench.harness.unidiff import Hunk, parse_patch

__all__ = ["Hunk", "parse_patch"]
