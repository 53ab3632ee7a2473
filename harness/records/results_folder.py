"""The layout of a results folder and its one manifest reader.

```
<folder>/manifest.json                                  Manifest, written once when the experiment starts
<folder>/runs.jsonl                                     one RunResult per line (ctxbench.harness.records.results)
<folder>/transcripts/<strategy>/<task>.<repeat>.jsonl.gz  one run's transcript (ctxbench.harness.records.transcript)
```
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from ctxbench.harness.errors import InputError
from ctxbench.harness.records import Manifest

__all__ = ["MANIFEST_FILE", "RUNS_FILE", "TRANSCRIPTS_DIR", "transcript_path", "transcript_files", "transcript_run",
           "read_manifest"]

MANIFEST_FILE = "manifest.json"
RUNS_FILE = "runs.jsonl"
TRANSCRIPTS_DIR = "transcripts"
_SUFFIX = ".jsonl.gz"


def transcript_path(folder: Path, strategy: str, task_id: str, repeat: int) -> Path:
    """Where a results folder keeps a recorded run's transcript (gzipped)."""
    return folder / TRANSCRIPTS_DIR / strategy / f"{task_id}.{repeat}{_SUFFIX}"


def transcript_files(folder: str | Path) -> list[Path]:
    """Every transcript of a results folder, sorted (an arm `AGENT/STRATEGY` keeps its own in a folder
    below its agent's)."""
    return sorted((Path(folder) / TRANSCRIPTS_DIR).rglob(f"*{_SUFFIX}"))


def transcript_run(file: Path) -> tuple[str, str, int]:
    """(strategy, task id, repeat) of a `transcript_path`."""
    task_id, _, repeat = file.name[: -len(_SUFFIX)].rpartition(".")
    top = next(p for p in file.parents if p.name == TRANSCRIPTS_DIR)
    return file.parent.relative_to(top).as_posix(), task_id, int(repeat)


def read_manifest(folder: Path, doing: str = "") -> Manifest:
    """Read and validate `<folder>/manifest.json`.

    Args:
        doing: What fails without it (`"cannot resume"`), said first in an error.

    Raises:
        InputError: the file is missing (the folder is no results folder) or is not a manifest this
            version of ctxbench reads (the first problems named).
    """
    file = folder / MANIFEST_FILE
    prefix = f"{doing}, " if doing else ""
    if not file.is_file():
        raise InputError(f"{folder}: {prefix}not a results folder (no {MANIFEST_FILE})")
    try:
        return Manifest.model_validate_json(file.read_bytes())
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}"
                             for e in exc.errors()[:3])
        raise InputError(f"{file}: {prefix}not a ctxbench manifest this version reads ({problems})") from None
    except OSError as exc:
        raise InputError(f"{file}: {prefix}cannot be read ({exc.strerror})") from None
