"""The content hash of a taskset: the fixed variable `taskset` of an experiment's manifest."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from ctxbench.harness.paths import repo_entries
from ctxbench.harness.records.taskset_records import Taskset

__all__ = ["taskset_hash"]


def taskset_hash(taskset: Taskset) -> str:
    """Hash of everything that defines the tasks: statements, commands, patches, repository files (of
    folder repositories; a git repository is fixed by its `base_commit`), environments."""
    h = hashlib.sha256()
    seen: set[Path] = set()
    for t in taskset.tasks:
        fields: list[Any] = [t.id, t.problem_statement, t.test_cmd, t.FAIL_TO_PASS, t.PASS_TO_PASS,
                  t.patch, t.test_patch, t.test_files, t.tags, t.base_commit]
        if t.environment is not None:  # absent from the hash otherwise: older hashes still hold
            fields.append(t.environment.model_dump())
        h.update(json.dumps(fields).encode())
        if t.repo_dir not in seen and t.base_commit is None:
            seen.add(t.repo_dir)
            for f in sorted(repo_entries(t.repo_dir)):
                h.update(str(f.relative_to(t.repo_dir)).encode())
                h.update(os.readlink(f).encode() if f.is_symlink() else f.read_bytes())
    h.update(taskset.environment.model_dump_json().encode())
    return h.hexdigest()
