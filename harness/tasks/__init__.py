"""Tasks and tasksets: loading (native YAML and SWE-bench JSONL), the taskset's content hash, and
`ctxbench tasks validate`."""

from __future__ import annotations

from ctxbench.harness.tasks.taskset import Task, Taskset, load_taskset

__all__ = ["Task", "Taskset", "load_taskset"]
