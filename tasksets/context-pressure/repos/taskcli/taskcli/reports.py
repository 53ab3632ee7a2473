"""Aggregations behind ``report``, ``stats`` and the exporters.

These functions take plain lists of tasks and entries and return plain data;
rendering is left to the CLI.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from taskcli.models import PRIORITY_RANK, Task, TimeEntry

NO_PROJECT = "(none)"


def entries_between(entries: list[TimeEntry], start: date, end: date,
                    at: datetime | None = None) -> list[TimeEntry]:
    """Entries whose start falls on a day from ``start`` to ``end`` inclusive.

    Running timers are included only when ``at`` is given (their length is
    measured up to ``at``).
    """
    chosen = []
    for entry in entries:
        if entry.running and at is None:
            continue
        if start <= entry.start.date() <= end:
            chosen.append(entry)
    return chosen


def project_of(task: Task | None) -> str:
    if task is None or not task.project:
        return NO_PROJECT
    return task.project


def top_level(project: str) -> str:
    return project.split(".", 1)[0]


@dataclass
class Group:
    """Total time for one row of a report."""

    key: str
    seconds: int = 0
    entries: int = 0
    tasks: set = field(default_factory=set)


def group_entries(entries: list[TimeEntry], tasks: dict[int, Task], by: str,
                  at: datetime | None = None) -> list[Group]:
    """Sum entry durations grouped ``by`` ``project``, ``task``, ``tag`` or ``day``.

    With ``by="tag"`` an entry counts once for each tag of its task (so the
    totals can add up to more than the overall time); untagged tasks are
    grouped under ``(none)``.  Groups come back sorted by key.
    """
    groups: dict[str, Group] = {}

    def add(key: str, entry: TimeEntry) -> None:
        group = groups.setdefault(key, Group(key))
        group.seconds += entry.duration(at)
        group.entries += 1
        group.tasks.add(entry.task_id)

    for entry in entries:
        task = tasks.get(entry.task_id)
        if by == "project":
            add(project_of(task), entry)
        elif by == "task":
            add(str(entry.task_id), entry)
        elif by == "day":
            add(entry.start.date().isoformat(), entry)
        elif by == "tag":
            for tag in (task.tags if task and task.tags else [NO_PROJECT]):
                add(tag, entry)
        else:
            raise ValueError(f"cannot group by {by!r}")
    if by == "task":
        return sorted(groups.values(), key=lambda g: int(g.key))
    return sorted(groups.values(), key=lambda g: g.key)


def daily_totals(entries: list[TimeEntry], start: date, end: date,
                 at: datetime | None = None) -> dict[date, int]:
    """Seconds per day for every day in the range, including empty days."""
    totals = {start + timedelta(days=offset): 0 for offset in range((end - start).days + 1)}
    for entry in entries_between(entries, start, end, at):
        totals[entry.start.date()] += entry.duration(at)
    return totals


def sort_tasks(tasks: list[Task], key: str = "id", reverse: bool = False,
               today: date | None = None) -> list[Task]:
    """Order tasks for exports and printed reports.

    Tasks without a value for the sort field (no due date, no priority, no
    project) always come last, whichever direction is chosen.
    """
    def value(task: Task):
        if key == "due":
            return task.due
        if key == "priority":
            return -PRIORITY_RANK[task.priority] if task.priority else None
        if key == "project":
            return task.project.lower() if task.project else None
        if key == "created":
            return task.created
        if key == "urgency":
            return -task.urgency(today or date.today())
        if key == "description":
            return task.description.lower()
        return task.id

    present = [t for t in tasks if value(t) is not None]
    missing = [t for t in tasks if value(t) is None]
    present.sort(key=lambda t: (value(t), t.id), reverse=reverse)
    missing.sort(key=lambda t: t.id)
    return present + missing


@dataclass
class Stats:
    total: int = 0
    pending: int = 0
    done: int = 0
    archived: int = 0
    overdue: int = 0
    completion_rate: float = 0.0
    average_lead_days: float | None = None
    tracked_seconds: int = 0
    projects: Counter = field(default_factory=Counter)
    tags: Counter = field(default_factory=Counter)
    completed_per_day: dict = field(default_factory=dict)
    streak: int = 0


def compute_stats(tasks: list[Task], entries: list[TimeEntry], today: date,
                  days: int = 14) -> Stats:
    """Counts, completion rate, lead time and the current completion streak."""
    stats = Stats()
    lead_times = []
    completed_days = defaultdict(int)
    for task in tasks:
        stats.total += 1
        if task.archived:
            stats.archived += 1
        if task.is_done:
            stats.done += 1
            if task.completed:
                lead_times.append((task.completed - task.created).total_seconds() / 86400)
                completed_days[task.completed.date()] += 1
        else:
            stats.pending += 1
            if task.is_overdue(today):
                stats.overdue += 1
        if not task.archived:
            stats.projects[task.project or NO_PROJECT] += 1
            for tag in task.tags:
                stats.tags[tag] += 1
    if stats.total:
        stats.completion_rate = stats.done / stats.total
    if lead_times:
        stats.average_lead_days = sum(lead_times) / len(lead_times)
    stats.tracked_seconds = sum(entry.duration() for entry in entries if not entry.running)
    first = today - timedelta(days=days - 1)
    stats.completed_per_day = {first + timedelta(days=i): completed_days.get(first + timedelta(days=i), 0)
                               for i in range(days)}
    day = today if completed_days.get(today) else today - timedelta(days=1)
    while completed_days.get(day):
        stats.streak += 1
        day -= timedelta(days=1)
    return stats
