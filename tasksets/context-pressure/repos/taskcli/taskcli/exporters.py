"""Writers for ``taskcli export``: CSV, JSON and iCalendar (RFC 5545)."""

from __future__ import annotations

import csv
import io
import json
from datetime import datetime, timedelta

from taskcli import __version__
from taskcli.models import Task, TimeEntry

CSV_FIELDS = ("id", "uuid", "description", "status", "project", "tags", "priority",
              "due", "created", "completed", "estimate", "recur", "archived")

ICAL_PRIORITY = {"H": 1, "M": 5, "L": 9}
ICAL_LINE_LIMIT = 75


def export_csv(tasks: list[Task]) -> str:
    """One row per task; tags are space separated, the estimate is in minutes."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, lineterminator="\n")
    writer.writeheader()
    for task in tasks:
        writer.writerow({
            "id": task.id,
            "uuid": task.uuid,
            "description": task.description,
            "status": task.status,
            "project": task.project or "",
            "tags": " ".join(task.tags),
            "priority": task.priority or "",
            "due": task.due.isoformat() if task.due else "",
            "created": task.created.isoformat(),
            "completed": task.completed.isoformat() if task.completed else "",
            "estimate": task.estimate // 60 if task.estimate else "",
            "recur": task.recur or "",
            "archived": "yes" if task.archived else "no",
        })
    return buffer.getvalue()


def export_entries_csv(entries: list[TimeEntry], tasks: dict[int, Task]) -> str:
    """Time entries as a timesheet: date, start, end, minutes, task, project, note."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["date", "start", "end", "minutes", "task_id", "task", "project", "note"])
    for entry in entries:
        if entry.running:
            continue
        task = tasks.get(entry.task_id)
        end = entry.end or entry.start + timedelta(seconds=entry.duration())
        writer.writerow([
            entry.start.date().isoformat(),
            entry.start.strftime("%H:%M"),
            end.strftime("%H:%M"),
            round(entry.duration() / 60),
            entry.task_id,
            task.description if task else "",
            (task.project or "") if task else "",
            entry.note,
        ])
    return buffer.getvalue()


def export_json(tasks: list[Task], entries: list[TimeEntry], exported_at: datetime) -> str:
    """The full records, suitable for ``taskcli import`` on another machine."""
    document = {
        "format": "taskcli",
        "version": __version__,
        "exported": exported_at.isoformat(),
        "tasks": [task.to_dict() for task in tasks],
        "entries": [entry.to_dict() for entry in entries],
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"


def escape_text(value: str) -> str:
    """Escape a TEXT property value (RFC 5545 section 3.3.11)."""
    return (value.replace(";", "\\;")
                 .replace(",", "\\,")
                 .replace("\n", "\\n")
                 .replace("\\", "\\\\"))


def fold_line(line: str) -> str:
    """Fold a content line to at most 75 octets per physical line.

    Continuation lines start with a single space; multi-byte UTF-8
    characters are never split.
    """
    encoded = line.encode("utf-8")
    if len(encoded) <= ICAL_LINE_LIMIT:
        return line
    pieces = []
    current = ""
    limit = ICAL_LINE_LIMIT
    for char in line:
        if len((current + char).encode("utf-8")) > limit:
            pieces.append(current)
            current = char
            limit = ICAL_LINE_LIMIT - 1
        else:
            current += char
    pieces.append(current)
    return "\r\n ".join(pieces)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y%m%dT%H%M%S")


def export_ical(tasks: list[Task], entries: list[TimeEntry], exported_at: datetime,
                include_entries: bool = False) -> str:
    """A VCALENDAR with one VTODO per task and, optionally, a VEVENT per time entry.

    Times are written as floating local times, matching how taskcli stores them.
    """
    lines = [
        "BEGIN:VCALENDAR",
        "VERSION:2.0",
        f"PRODID:-//taskcli//taskcli {__version__}//EN",
        "CALSCALE:GREGORIAN",
    ]
    for task in tasks:
        lines.append("BEGIN:VTODO")
        lines.append(f"UID:{task.uuid}@taskcli")
        lines.append(f"DTSTAMP:{_stamp(exported_at)}")
        lines.append(f"CREATED:{_stamp(task.created)}")
        lines.append(f"SUMMARY:{escape_text(task.description)}")
        if task.due:
            lines.append(f"DUE;VALUE=DATE:{task.due.strftime('%Y%m%d')}")
        if task.priority:
            lines.append(f"PRIORITY:{ICAL_PRIORITY[task.priority]}")
        if task.tags:
            lines.append("CATEGORIES:" + ",".join(escape_text(tag) for tag in task.tags))
        if task.project:
            lines.append(f"X-TASKCLI-PROJECT:{escape_text(task.project)}")
        if task.notes:
            lines.append("DESCRIPTION:" + escape_text("\n".join(note.text for note in task.notes)))
        if task.is_done:
            lines.append("STATUS:COMPLETED")
            if task.completed:
                lines.append(f"COMPLETED:{_stamp(task.completed)}")
        else:
            lines.append("STATUS:NEEDS-ACTION")
        lines.append("END:VTODO")
    if include_entries:
        by_id = {task.id: task for task in tasks}
        for entry in entries:
            if entry.running:
                continue
            task = by_id.get(entry.task_id)
            end = entry.end or entry.start + timedelta(seconds=entry.duration())
            summary = task.description if task else f"task {entry.task_id}"
            lines.append("BEGIN:VEVENT")
            lines.append(f"UID:entry-{entry.id}-{task.uuid if task else entry.task_id}@taskcli")
            lines.append(f"DTSTAMP:{_stamp(exported_at)}")
            lines.append(f"DTSTART:{_stamp(entry.start)}")
            lines.append(f"DTEND:{_stamp(end)}")
            lines.append(f"SUMMARY:{escape_text(summary)}")
            if entry.note:
                lines.append(f"DESCRIPTION:{escape_text(entry.note)}")
            if task:
                lines.append(f"RELATED-TO:{task.uuid}@taskcli")
            lines.append("END:VEVENT")
    lines.append("END:VCALENDAR")
    return "\r\n".join(fold_line(line) for line in lines) + "\r\n"
