"""Readers for ``taskcli import``.

Supported inputs:

* ``json`` - a document written by ``taskcli export --format json``;
* ``csv`` - a file written by ``taskcli export --format csv`` (or edited by
  hand in a spreadsheet with the same header);
* ``toggl`` - a "detailed report" CSV from Toggl Track, imported as tasks
  (one per description and project) with their time entries.

Readers return :class:`ImportBatch` objects; the CLI decides how to merge
them into the database (new ids, duplicate detection by uuid).
"""

from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime

from taskcli.models import (Task, TimeEntry, ValidationError, normalize_priority,
                            normalize_project, normalize_tag)


class ImportError_(ValueError):
    """The input cannot be imported.  (Named to avoid shadowing the builtin.)"""


@dataclass
class ImportBatch:
    tasks: list[Task] = field(default_factory=list)
    entries: list[TimeEntry] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


_ISO_DURATION_RE = re.compile(r"^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$")


def parse_duration(value: str) -> int:
    """Parse the durations found in third-party exports.

    Toggl writes ``HH:MM:SS`` (hours may exceed 24); some tools write
    ISO 8601 durations such as ``PT1H30M``.  Returns whole seconds.
    """
    value = value.strip()
    if value.count(":") == 2:
        hours, minutes, seconds = value.split(":")
        return int(hours) * 3600 + int(minutes) * 60 + int(seconds)
    match = _ISO_DURATION_RE.match(value.upper())
    if match and any(match.groups()):
        days, hours, minutes, seconds = match.groups()
        return (int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes or 0) * 60
                + int(round(float(seconds or 0))))
    raise ImportError_(f"unrecognised duration {value!r}")


def read_json(text: str) -> ImportBatch:
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportError_(f"not valid JSON: {exc}") from exc
    if isinstance(document, list):
        document = {"tasks": document, "entries": []}
    if not isinstance(document, dict) or "tasks" not in document:
        raise ImportError_("JSON input must be a taskcli export or a list of tasks")
    batch = ImportBatch()
    for index, data in enumerate(document["tasks"], start=1):
        try:
            batch.tasks.append(Task.from_dict(data))
        except (KeyError, ValueError, TypeError) as exc:
            batch.warnings.append(f"task #{index}: skipped ({exc})")
    for index, data in enumerate(document.get("entries", []), start=1):
        try:
            batch.entries.append(TimeEntry.from_dict(data))
        except (KeyError, ValueError, TypeError) as exc:
            batch.warnings.append(f"entry #{index}: skipped ({exc})")
    return batch


def _csv_task(row: dict, line: int, fallback_id: int) -> Task:
    description = (row.get("description") or "").strip()
    if not description:
        raise ImportError_(f"line {line}: empty description")
    created_text = (row.get("created") or "").strip()
    created = datetime.fromisoformat(created_text) if created_text else datetime.now().replace(microsecond=0)
    completed_text = (row.get("completed") or "").strip()
    status = (row.get("status") or "pending").strip().lower()
    if status not in ("pending", "done"):
        raise ImportError_(f"line {line}: unknown status {status!r}")
    estimate_text = (row.get("estimate") or "").strip()
    task = Task(
        id=int(row["id"]) if (row.get("id") or "").strip().isdigit() else fallback_id,
        description=description,
        created=created,
        status=status,
        project=normalize_project(row.get("project") or None),
        tags=sorted({normalize_tag(t) for t in (row.get("tags") or "").split()}),
        priority=normalize_priority(row.get("priority") or None),
        due=date.fromisoformat(row["due"].strip()) if (row.get("due") or "").strip() else None,
        completed=datetime.fromisoformat(completed_text) if completed_text else None,
        estimate=int(float(estimate_text) * 60) if estimate_text else None,
        recur=(row.get("recur") or "").strip() or None,
        archived=(row.get("archived") or "").strip().lower() in ("yes", "true", "1"),
    )
    if (row.get("uuid") or "").strip():
        task.uuid = row["uuid"].strip()
    return task


def read_csv(text: str) -> ImportBatch:
    reader = csv.DictReader(io.StringIO(text))
    if not reader.fieldnames or "description" not in reader.fieldnames:
        raise ImportError_("CSV input needs at least a 'description' column")
    batch = ImportBatch()
    for line, row in enumerate(reader, start=2):
        try:
            batch.tasks.append(_csv_task(row, line, fallback_id=line - 1))
        except (ImportError_, ValidationError, ValueError) as exc:
            batch.warnings.append(f"line {line}: skipped ({exc})")
    return batch


def read_toggl(text: str) -> ImportBatch:
    """Toggl detailed report: one task per (description, project), entries attached."""
    reader = csv.DictReader(io.StringIO(text))
    required = {"Description", "Start date", "Start time", "Duration"}
    if not reader.fieldnames or not required <= set(reader.fieldnames):
        raise ImportError_("Toggl CSV needs Description, Start date, Start time and Duration columns")
    batch = ImportBatch()
    task_ids: dict[tuple[str, str | None], int] = {}
    for line, row in enumerate(reader, start=2):
        description = (row.get("Description") or "").strip() or "(no description)"
        try:
            project = normalize_project((row.get("Project") or "").strip().replace(" ", "-") or None)
            start = datetime.fromisoformat(f"{row['Start date'].strip()}T{row['Start time'].strip()}")
            seconds = parse_duration(row["Duration"])
        except (ValueError, ImportError_) as exc:
            batch.warnings.append(f"line {line}: skipped ({exc})")
            continue
        key = (description, project)
        if key not in task_ids:
            task_id = len(task_ids) + 1
            task_ids[key] = task_id
            tags = []
            for tag in (row.get("Tags") or "").split(","):
                if tag.strip():
                    tags.append(normalize_tag(tag.strip().replace(" ", "-")))
            batch.tasks.append(Task(id=task_id, description=description, created=start,
                                    project=project, tags=sorted(set(tags))))
        batch.entries.append(TimeEntry(id=len(batch.entries) + 1, task_id=task_ids[key],
                                       start=start, seconds=seconds,
                                       note=(row.get("Client") or "").strip()))
    return batch


READERS = {"json": read_json, "csv": read_csv, "toggl": read_toggl}


def detect_format(filename: str, text: str) -> str:
    """Guess the format from the file name and first line."""
    lowered = filename.lower()
    if lowered.endswith(".json"):
        return "json"
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    if first.startswith(("{", "[")):
        return "json"
    if "Start date" in first and "Duration" in first:
        return "toggl"
    return "csv"
