"""Records stored by taskcli: tasks, their notes, and time entries."""

from __future__ import annotations

import uuid as uuidlib
from dataclasses import dataclass, field
from datetime import date, datetime

PRIORITIES = ("H", "M", "L")
PRIORITY_RANK = {"H": 3, "M": 2, "L": 1, None: 0}
PRIORITY_NAMES = {"h": "H", "high": "H", "m": "M", "medium": "M", "med": "M",
                  "l": "L", "low": "L"}
STATUSES = ("pending", "done")


class ValidationError(ValueError):
    """Raised when a field value is not acceptable."""


def normalize_priority(value: str | None) -> str | None:
    """Map ``high``/``h``/``H`` etc. to ``H``/``M``/``L``; ``none`` or empty clears it."""
    if value is None:
        return None
    key = value.strip().lower()
    if key in ("", "none", "-"):
        return None
    if key not in PRIORITY_NAMES:
        raise ValidationError(f"unknown priority {value!r} (use H, M or L)")
    return PRIORITY_NAMES[key]


def normalize_tag(value: str) -> str:
    """Tags are lower case, without a leading ``+`` and without spaces."""
    tag = value.strip().lstrip("+").lower()
    if not tag:
        raise ValidationError("empty tag")
    if any(ch.isspace() for ch in tag) or "," in tag:
        raise ValidationError(f"tags may not contain spaces or commas: {value!r}")
    return tag


def normalize_project(value: str | None) -> str | None:
    """Projects keep their case but lose surrounding whitespace; dots nest (``work.ops``)."""
    if value is None:
        return None
    project = value.strip()
    if not project or project.lower() == "none":
        return None
    if project.startswith(".") or project.endswith(".") or ".." in project:
        raise ValidationError(f"invalid project name {value!r}")
    return project


def _parse_dt(value):
    return datetime.fromisoformat(value) if value else None


def _parse_d(value):
    return date.fromisoformat(value) if value else None


@dataclass
class Note:
    """A timestamped annotation on a task."""

    created: datetime
    text: str

    def to_dict(self) -> dict:
        return {"created": self.created.isoformat(), "text": self.text}

    @classmethod
    def from_dict(cls, data: dict) -> "Note":
        return cls(created=datetime.fromisoformat(data["created"]), text=data["text"])


@dataclass
class Task:
    """One task.  ``id`` is the short number users type; ``uuid`` is stable across exports."""

    id: int
    description: str
    created: datetime
    status: str = "pending"
    project: str | None = None
    tags: list[str] = field(default_factory=list)
    priority: str | None = None
    due: date | None = None
    completed: datetime | None = None
    estimate: int | None = None
    recur: str | None = None
    depends: list[int] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    archived: bool = False
    modified: datetime | None = None
    uuid: str = field(default_factory=lambda: str(uuidlib.uuid4()))

    @property
    def is_done(self) -> bool:
        return self.status == "done"

    @property
    def is_pending(self) -> bool:
        return self.status == "pending"

    def has_tag(self, tag: str) -> bool:
        return tag in self.tags

    def add_tag(self, tag: str) -> bool:
        """Add ``tag``; return False if it was already present."""
        tag = normalize_tag(tag)
        if tag in self.tags:
            return False
        self.tags.append(tag)
        self.tags.sort()
        return True

    def remove_tag(self, tag: str) -> bool:
        """Remove ``tag``; return False if it was not present."""
        tag = normalize_tag(tag)
        if tag not in self.tags:
            return False
        self.tags.remove(tag)
        return True

    def in_project(self, project: str) -> bool:
        """True if the task is in ``project`` or one of its sub-projects."""
        if self.project is None:
            return False
        return self.project == project or self.project.startswith(project + ".")

    def is_overdue(self, today: date) -> bool:
        return self.is_pending and self.due is not None and self.due < today

    def urgency(self, today: date) -> float:
        """A score used by ``next`` and ``list --sort urgency``.

        Priority contributes most, then how close (or how late) the due date
        is, then age; blocked tasks are pushed down.
        """
        score = {"H": 6.0, "M": 3.9, "L": 1.8}.get(self.priority, 0.0)
        if self.due is not None:
            days_left = (self.due - today).days
            if days_left < 0:
                score += 12.0
            elif days_left <= 14:
                score += 12.0 * (1 - days_left / 14) * 0.8 + 2.4
            else:
                score += 2.4
        age_days = (today - self.created.date()).days
        score += min(age_days, 365) / 365 * 2.0
        if "next" in self.tags:
            score += 15.0
        if self.tags:
            score += 1.0
        if self.project:
            score += 1.0
        return round(score, 2)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "uuid": self.uuid,
            "description": self.description,
            "status": self.status,
            "project": self.project,
            "tags": list(self.tags),
            "priority": self.priority,
            "due": self.due.isoformat() if self.due else None,
            "created": self.created.isoformat(),
            "modified": self.modified.isoformat() if self.modified else None,
            "completed": self.completed.isoformat() if self.completed else None,
            "estimate": self.estimate,
            "recur": self.recur,
            "depends": list(self.depends),
            "notes": [note.to_dict() for note in self.notes],
            "archived": self.archived,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "Task":
        return cls(
            id=int(data["id"]),
            uuid=data.get("uuid") or str(uuidlib.uuid4()),
            description=data["description"],
            status=data.get("status", "pending"),
            project=data.get("project"),
            tags=list(data.get("tags") or []),
            priority=data.get("priority"),
            due=_parse_d(data.get("due")),
            created=datetime.fromisoformat(data["created"]),
            modified=_parse_dt(data.get("modified")),
            completed=_parse_dt(data.get("completed")),
            estimate=data.get("estimate"),
            recur=data.get("recur"),
            depends=[int(d) for d in data.get("depends") or []],
            notes=[Note.from_dict(n) for n in data.get("notes") or []],
            archived=bool(data.get("archived", False)),
        )


@dataclass
class TimeEntry:
    """Time spent on a task.  A running timer has ``end`` set to None."""

    id: int
    task_id: int
    start: datetime
    end: datetime | None = None
    seconds: int | None = None
    note: str = ""

    @property
    def running(self) -> bool:
        """True for a timer that is still going (no end and no recorded length)."""
        return self.end is None and self.seconds is None

    def duration(self, at: datetime | None = None) -> int:
        """Length in seconds; for a running timer, up to ``at``."""
        if self.seconds is not None:
            return self.seconds
        if self.end is not None:
            return int((self.end - self.start).total_seconds())
        if at is None:
            return 0
        return max(0, int((at - self.start).total_seconds()))

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "task_id": self.task_id,
            "start": self.start.isoformat(),
            "end": self.end.isoformat() if self.end else None,
            "seconds": self.seconds,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: dict) -> "TimeEntry":
        return cls(
            id=int(data["id"]),
            task_id=int(data["task_id"]),
            start=datetime.fromisoformat(data["start"]),
            end=_parse_dt(data.get("end")),
            seconds=data.get("seconds"),
            note=data.get("note") or "",
        )
