"""The ``taskcli`` command line.

Every sub-command is a pair of functions: ``setup_<name>(parser)`` declares
its arguments and ``cmd_<name>(ctx, args)`` runs it against a
:class:`Context`, which owns the loaded database, the configuration and the
output streams.  :func:`main` is the entry point; it takes an ``argv`` list so
that the whole tool can be driven in-process::

    from taskcli.cli import main
    main(["--data-dir", "/tmp/t", "add", "Write report", "--due", "friday"])

Exit codes: 0 success, 1 a command failed (unknown id, nothing to do...),
2 bad usage (unparseable date, unknown option), 3 storage problems.
"""

from __future__ import annotations

import argparse
import calendar
import copy
import functools
import json
import logging
import os
import re
import shutil
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path

from taskcli import __version__, dates, durations, exporters, importers, reports
from taskcli.config import SETTINGS, Config, ConfigError
from taskcli.formatting import (Column, bar, colorize, format_clock, format_tags, indent,
                                plural, render_table, terminal_width, truncate)
from taskcli.models import (PRIORITIES, PRIORITY_RANK, Note, Task, TimeEntry,
                            ValidationError, normalize_priority, normalize_project,
                            normalize_tag)
from taskcli.storage import (BACKENDS, Database, JsonStore, NotFound, SqliteStore,
                             StorageError, open_store, resolve_data_dir)

log = logging.getLogger("taskcli")

EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_STORAGE = 3

LIST_COLUMNS = ("id", "pri", "due", "project", "tags", "description", "urgency", "age", "spent", "status")
DEFAULT_LIST_COLUMNS = ("id", "pri", "due", "project", "tags", "description")
SORT_FIELDS = ("id", "due", "priority", "urgency", "created", "project", "description")


class CLIError(Exception):
    """A failure to report to the user as ``taskcli: error: ...``."""

    def __init__(self, message: str, code: int = EXIT_FAILURE):
        super().__init__(message)
        self.code = code


class UsageError(CLIError):
    def __init__(self, message: str):
        super().__init__(message, EXIT_USAGE)


class _ArgumentParser(argparse.ArgumentParser):
    """argparse that raises instead of calling ``sys.exit`` on bad usage."""

    def error(self, message):
        raise UsageError(message)


# ---------------------------------------------------------------------------
# Context
# ---------------------------------------------------------------------------

@dataclass
class Context:
    """State shared by a single invocation: paths, settings, data and streams."""

    data_dir: Path
    config: Config
    backend: str
    out: object = field(default_factory=lambda: sys.stdout)
    err: object = field(default_factory=lambda: sys.stderr)
    color: bool = False
    dry_run: bool = False
    _store: object = None
    _db: Database | None = None
    dirty: bool = False
    now: datetime = field(default_factory=dates.now)

    @property
    def today(self) -> date:
        return self.now.date()

    @property
    def store(self):
        if self._store is None:
            self._store = open_store(self.data_dir, self.backend)
        return self._store

    @property
    def db(self) -> Database:
        if self._db is None:
            log.debug("loading %s store from %s", self.backend, self.data_dir)
            self._db = self.store.load()
            self._db.undo_depth = int(self.config.get("undo_depth"))
            log.debug("loaded %d tasks, %d entries", len(self._db.tasks), len(self._db.entries))
        return self._db

    def changed(self) -> None:
        """Mark the database as modified so it is written on exit."""
        self.dirty = True

    def save(self) -> None:
        if self.dirty and self._db is not None and not self.dry_run:
            log.debug("saving %d tasks to %s", len(self._db.tasks), self.data_dir)
            self.store.save(self._db)
            self.dirty = False

    def echo(self, text: str = "") -> None:
        print(text, file=self.out)

    def warn(self, text: str) -> None:
        print(f"taskcli: warning: {text}", file=self.err)

    def paint(self, text: str, color: str | None) -> str:
        return colorize(text, color, self.color)

    def fmt_date(self, value: date | None) -> str:
        if value is None:
            return ""
        return value.strftime(self.config.get("date_format"))

    def width(self) -> int:
        return terminal_width(int(self.config.get("width")))


# ---------------------------------------------------------------------------
# Argument helpers
# ---------------------------------------------------------------------------

_ID_RANGE_RE = re.compile(r"^(\d+)-(\d+)$")


def parse_ids(values: list[str]) -> list[int]:
    """Expand ``["1", "3-5", "7,9"]`` into ``[1, 3, 4, 5, 7, 9]`` (order kept, no repeats)."""
    result: list[int] = []
    for value in values:
        for part in str(value).split(","):
            part = part.strip()
            if not part:
                continue
            match = _ID_RANGE_RE.match(part)
            if match:
                low, high = int(match.group(1)), int(match.group(2))
                if low > high:
                    raise UsageError(f"bad id range {part!r}")
                if high - low > 10000:
                    raise UsageError(f"id range {part!r} is too large")
                candidates = range(low, high + 1)
            elif part.isdigit():
                candidates = [int(part)]
            else:
                raise UsageError(f"not a task id: {part!r}")
            for task_id in candidates:
                if task_id not in result:
                    result.append(task_id)
    if not result:
        raise UsageError("no task ids given")
    return result


def parse_date_arg(text: str, ctx: Context) -> date:
    try:
        return dates.parse_date(text, today=ctx.today)
    except dates.DateParseError as exc:
        raise UsageError(str(exc)) from exc


def parse_datetime_arg(text: str, ctx: Context) -> datetime:
    try:
        return dates.parse_datetime(text, reference=ctx.now)
    except dates.DateParseError as exc:
        raise UsageError(str(exc)) from exc


def parse_duration_arg(text: str) -> int:
    try:
        return durations.parse_duration(text)
    except durations.DurationError as exc:
        raise UsageError(str(exc)) from exc


def parse_priority_arg(text: str | None) -> str | None:
    try:
        return normalize_priority(text)
    except ValidationError as exc:
        raise UsageError(str(exc)) from exc


def parse_project_arg(text: str | None) -> str | None:
    try:
        return normalize_project(text)
    except ValidationError as exc:
        raise UsageError(str(exc)) from exc


def parse_tags_arg(values: list[str] | None) -> list[str]:
    tags: list[str] = []
    for value in values or []:
        for piece in value.split(","):
            if not piece.strip():
                continue
            try:
                tag = normalize_tag(piece)
            except ValidationError as exc:
                raise UsageError(str(exc)) from exc
            if tag not in tags:
                tags.append(tag)
    return tags


def get_tasks(ctx: Context, ids: list[int], include_archived: bool = True) -> list[Task]:
    """Look up tasks by id, failing with one message that lists every unknown id."""
    found, missing = [], []
    for task_id in ids:
        task = ctx.db.find_task(task_id)
        if task is None or (task.archived and not include_archived):
            missing.append(str(task_id))
        else:
            found.append(task)
    if missing:
        raise CLIError(f"no task with id {', '.join(missing)}")
    return found


def touch(task: Task, ctx: Context) -> None:
    task.modified = ctx.now


def spent_seconds(ctx: Context, task_id: int) -> int:
    return sum(entry.duration(ctx.now) for entry in ctx.db.entries_for(task_id))


# ---------------------------------------------------------------------------
# Filters shared by list, search, export, count, archive and friends
# ---------------------------------------------------------------------------

@dataclass
class TaskFilter:
    """A conjunction of conditions on tasks.

    Built from options (``--project``, ``--tag``...) and from free terms in
    the taskwarrior style: ``project:work``, ``+urgent``, ``-someday``,
    ``pri:H``, ``due.before:friday``, ``status:done`` and bare words, which
    must all appear in the description.
    """

    projects: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    without_tags: list[str] = field(default_factory=list)
    priorities: list[str | None] = field(default_factory=list)
    status: str = "pending"
    due_before: date | None = None
    due_after: date | None = None
    overdue: bool = False
    has_due: bool | None = None
    words: list[str] = field(default_factory=list)
    include_archived: bool = False
    only_archived: bool = False
    blocked: bool | None = None

    def matches(self, task: Task, ctx: Context) -> bool:
        if self.only_archived and not task.archived:
            return False
        if task.archived and not (self.include_archived or self.only_archived):
            return False
        if self.status != "all" and task.status != self.status:
            return False
        if self.projects and not any(task.in_project(p) for p in self.projects):
            return False
        if any(tag not in task.tags for tag in self.tags):
            return False
        if any(tag in task.tags for tag in self.without_tags):
            return False
        if self.priorities and task.priority not in self.priorities:
            return False
        if self.due_before is not None and (task.due is None or task.due >= self.due_before):
            return False
        if self.due_after is not None and (task.due is None or task.due <= self.due_after):
            return False
        if self.overdue and not task.is_overdue(ctx.today):
            return False
        if self.has_due is not None and (task.due is not None) != self.has_due:
            return False
        if self.blocked is not None and is_blocked(task, ctx.db) != self.blocked:
            return False
        text = task.description.lower()
        return all(word in text for word in self.words)


def is_blocked(task: Task, db: Database) -> bool:
    """A task is blocked while any task it depends on is still pending."""
    for dep_id in task.depends:
        dep = db.find_task(dep_id)
        if dep is not None and dep.is_pending:
            return True
    return False


_TERM_RE = re.compile(r"^([a-z.]+):(.*)$")


def build_filter(ctx: Context, args, terms: list[str] | None = None) -> TaskFilter:
    """Combine the common filter options in ``args`` with free filter terms."""
    flt = TaskFilter()
    status = getattr(args, "status", None)
    if status:
        flt.status = status
    if getattr(args, "all", False):
        flt.status = "all"
    for project in getattr(args, "project", None) or []:
        flt.projects.append(parse_project_arg(project))
    flt.tags.extend(parse_tags_arg(getattr(args, "tag", None)))
    flt.without_tags.extend(parse_tags_arg(getattr(args, "exclude_tag", None)))
    for priority in getattr(args, "priority", None) or []:
        flt.priorities.append(parse_priority_arg(priority))
    if getattr(args, "due_before", None):
        flt.due_before = parse_date_arg(args.due_before, ctx)
    if getattr(args, "due_after", None):
        flt.due_after = parse_date_arg(args.due_after, ctx)
    if getattr(args, "overdue", False):
        flt.overdue = True
    if getattr(args, "archived", False):
        flt.only_archived = True
        if flt.status == "pending":
            flt.status = "all"
    if getattr(args, "include_archived", False):
        flt.include_archived = True

    for term in terms or []:
        if term.startswith("+") and len(term) > 1:
            flt.tags.extend(parse_tags_arg([term[1:]]))
            continue
        if term.startswith("-") and len(term) > 1 and not term[1:].isdigit():
            flt.without_tags.extend(parse_tags_arg([term[1:]]))
            continue
        match = _TERM_RE.match(term)
        if not match:
            flt.words.append(term.lower())
            continue
        name, value = match.groups()
        if name in ("project", "proj", "pro"):
            flt.projects.append(parse_project_arg(value))
        elif name in ("priority", "pri"):
            flt.priorities.append(parse_priority_arg(value))
        elif name == "status":
            if value not in ("pending", "done", "all"):
                raise UsageError(f"unknown status {value!r}")
            flt.status = value
        elif name in ("due.before", "due.by"):
            flt.due_before = parse_date_arg(value, ctx)
        elif name == "due.after":
            flt.due_after = parse_date_arg(value, ctx)
        elif name == "due":
            if value in ("", "none"):
                flt.has_due = False
            elif value == "any":
                flt.has_due = True
            else:
                day = parse_date_arg(value, ctx)
                flt.due_after = day - timedelta(days=1)
                flt.due_before = day + timedelta(days=1)
        elif name == "tag":
            flt.tags.extend(parse_tags_arg([value]))
        elif name == "blocked":
            flt.blocked = value.lower() in ("yes", "true", "1")
        else:
            raise UsageError(f"unknown filter {name!r}")
    return flt


def add_filter_options(parser: argparse.ArgumentParser, status_default: str | None = "pending") -> None:
    group = parser.add_argument_group("filters")
    group.add_argument("-p", "--project", action="append", help="only tasks in PROJECT (and sub-projects)")
    group.add_argument("-t", "--tag", action="append", help="only tasks with TAG (repeatable)")
    group.add_argument("-x", "--exclude-tag", action="append", metavar="TAG", help="skip tasks with TAG")
    group.add_argument("--priority", action="append", metavar="PRI", help="only priority H, M, L or none")
    group.add_argument("--status", choices=("pending", "done", "all"), default=status_default,
                       help="task status (default: %(default)s)")
    group.add_argument("-a", "--all", action="store_true", help="same as --status all")
    group.add_argument("--due-before", metavar="DATE", help="due strictly before DATE")
    group.add_argument("--due-after", metavar="DATE", help="due strictly after DATE")
    group.add_argument("--overdue", action="store_true", help="only pending tasks past their due date")
    group.add_argument("--include-archived", action="store_true", help="also consider archived tasks")
    group.add_argument("--archived", action="store_true", help="only archived tasks")


def select_tasks(ctx: Context, flt: TaskFilter) -> list[Task]:
    return [task for task in ctx.db.tasks if flt.matches(task, ctx)]


# ---------------------------------------------------------------------------
# Presentation helpers
# ---------------------------------------------------------------------------

def due_color(task: Task, ctx: Context) -> str | None:
    if task.due is None or task.is_done:
        return None
    if task.due < ctx.today:
        return "red"
    if task.due == ctx.today:
        return "yellow"
    return None


def task_cell(task: Task, column: str, ctx: Context) -> str:
    """The text shown for ``task`` in list column ``column``."""
    if column == "id":
        return str(task.id)
    if column == "pri":
        return task.priority or ""
    if column == "due":
        return ctx.paint(ctx.fmt_date(task.due), due_color(task, ctx))
    if column == "project":
        return task.project or ""
    if column == "tags":
        return " ".join(task.tags)
    if column == "description":
        text = task.description
        if task.notes:
            text += f" [{len(task.notes)}]"
        if task.recur:
            text += " (R)"
        if is_blocked(task, ctx.db):
            text += " (blocked)"
        return text
    if column == "urgency":
        return f"{task.urgency(ctx.today):.1f}"
    if column == "age":
        return dates.describe_relative(task.created.date(), ctx.today).replace(" ago", "")
    if column == "spent":
        seconds = spent_seconds(ctx, task.id)
        return durations.format_duration(seconds) if seconds else ""
    if column == "status":
        return task.status + (" (archived)" if task.archived else "")
    raise UsageError(f"unknown column {column!r}")


COLUMN_SPECS = {
    "id": Column("ID", "right"),
    "pri": Column("Pri"),
    "due": Column("Due"),
    "project": Column("Project"),
    "tags": Column("Tags", flex=True),
    "description": Column("Description", flex=True),
    "urgency": Column("Urg", "right"),
    "age": Column("Age", "right"),
    "spent": Column("Spent", "right"),
    "status": Column("Status"),
}


def parse_columns(text: str | None) -> list[str]:
    if not text:
        return list(DEFAULT_LIST_COLUMNS)
    columns = [c.strip().lower() for c in text.split(",") if c.strip()]
    unknown = [c for c in columns if c not in LIST_COLUMNS]
    if unknown:
        raise UsageError(f"unknown column(s): {', '.join(unknown)}; choose from {', '.join(LIST_COLUMNS)}")
    return columns


def render_task_table(ctx: Context, tasks: list[Task], columns: list[str]) -> str:
    rows = [[task_cell(task, column, ctx) for column in columns] for task in tasks]
    return render_table([COLUMN_SPECS[c] for c in columns], rows, width=ctx.width())


def task_summary(task: Task) -> str:
    """One line used in confirmations: ``#3 "Write report"``."""
    return f'#{task.id} "{truncate(task.description, 50)}"'


def task_to_json(task: Task, ctx: Context) -> dict:
    data = task.to_dict()
    data["urgency"] = task.urgency(ctx.today)
    data["spent"] = spent_seconds(ctx, task.id)
    data["blocked"] = is_blocked(task, ctx.db)
    return data


def _list_sort_key(field_name: str, ctx: Context):
    """Key function for ``list --sort FIELD``; ties are broken by id."""
    if field_name == "id":
        return lambda t: t.id
    if field_name == "due":
        return lambda t: (t.due or date.min, t.id)
    if field_name == "priority":
        return lambda t: (-PRIORITY_RANK[t.priority], t.id)
    if field_name == "urgency":
        return lambda t: (-t.urgency(ctx.today), t.id)
    if field_name == "created":
        return lambda t: (t.created, t.id)
    if field_name == "project":
        return lambda t: (t.project is None, (t.project or "").lower(), t.id)
    if field_name == "description":
        return lambda t: (t.description.lower(), t.id)
    raise UsageError(f"cannot sort by {field_name!r}; choose from {', '.join(SORT_FIELDS)}")


def sort_for_list(ctx: Context, tasks: list[Task], field_name: str, reverse: bool = False) -> list[Task]:
    return sorted(tasks, key=_list_sort_key(field_name, ctx), reverse=reverse)


# ---------------------------------------------------------------------------
# init
# ---------------------------------------------------------------------------

def setup_init(parser):
    parser.add_argument("--store", choices=BACKENDS, help="storage backend (default: config `store` or json)")
    parser.add_argument("--force", action="store_true", help="re-initialise even if data exists")


def cmd_init(ctx: Context, args) -> int:
    """Create the data directory, the configuration file and an empty store."""
    backend = args.store or ctx.config.get("store")
    if args.store:
        ctx.config.set("store", args.store)
    store = open_store(ctx.data_dir, backend)
    if store.exists() and not args.force:
        raise CLIError(f"{store.path} already exists (use --force to reset it)")
    ctx.data_dir.mkdir(parents=True, exist_ok=True)
    store.save(Database())
    ctx.config.save()
    ctx.echo(f"Initialised {backend} store in {ctx.data_dir}")
    return EXIT_OK


# ---------------------------------------------------------------------------
# add
# ---------------------------------------------------------------------------

def setup_add(parser):
    parser.add_argument("description", nargs="+", help="task description; +tag and project:NAME words are extracted")
    parser.add_argument("-p", "--project", help="project (dots for sub-projects, e.g. work.ops)")
    parser.add_argument("-t", "--tag", action="append", help="tag (repeatable or comma separated)")
    parser.add_argument("-P", "--priority", help="H, M or L")
    parser.add_argument("-d", "--due", help="due date: 2024-05-10, tomorrow, friday, +3d, eom...")
    parser.add_argument("-e", "--estimate", help="estimated effort, e.g. 2h or 45m")
    parser.add_argument("-r", "--recur", help="recurrence: daily, weekly, monthly, every 2w... (needs --due)")
    parser.add_argument("--depends", action="append", metavar="ID", help="ids this task waits for")
    parser.add_argument("-n", "--note", help="initial note")


def _extract_inline(words: list[str]) -> tuple[str, list[str], str | None, str | None]:
    """Pull ``+tag``, ``project:x`` and ``pri:H`` out of a description."""
    kept, tags = [], []
    project = priority = None
    for word in words:
        if word.startswith("+") and len(word) > 1 and not word[1:].isdigit():
            tags.append(word[1:])
        elif word.startswith(("project:", "proj:")) and word.split(":", 1)[1]:
            project = word.split(":", 1)[1]
        elif word.startswith(("pri:", "priority:")) and word.split(":", 1)[1]:
            priority = word.split(":", 1)[1]
        else:
            kept.append(word)
    return " ".join(kept).strip(), tags, project, priority


def cmd_add(ctx: Context, args) -> int:
    """Create a task."""
    description, inline_tags, inline_project, inline_priority = _extract_inline(args.description)
    if not description:
        raise UsageError("the description is empty")
    project = parse_project_arg(args.project or inline_project or ctx.config.get("default_project"))
    priority = parse_priority_arg(args.priority or inline_priority or ctx.config.get("default_priority"))
    tags = parse_tags_arg((args.tag or []) + inline_tags)
    due = parse_date_arg(args.due, ctx) if args.due else None
    estimate = parse_duration_arg(args.estimate) if args.estimate else None
    recur = None
    if args.recur:
        if due is None:
            raise UsageError("a recurring task needs a due date (--due)")
        try:
            dates.parse_recurrence(args.recur)
        except dates.DateParseError as exc:
            raise UsageError(str(exc)) from exc
        recur = args.recur.strip().lower()
    depends = parse_ids(args.depends) if args.depends else []
    for dep_id in depends:
        if ctx.db.find_task(dep_id) is None:
            raise CLIError(f"cannot depend on unknown task {dep_id}")

    task = Task(
        id=ctx.db.allocate_task_id(),
        description=description,
        created=ctx.now,
        project=project,
        tags=sorted(tags),
        priority=priority,
        due=due,
        estimate=estimate,
        recur=recur,
        depends=depends,
    )
    if args.note:
        task.notes.append(Note(ctx.now, args.note))
    ctx.db.add_task(task)
    ctx.db.record(f"add {task.id}", created=[task.id], at=ctx.now)
    ctx.changed()
    message = f"Created task {task.id}: {task.description}"
    if due:
        message += f" (due {due.strftime('%a')} {ctx.fmt_date(due)})"
    ctx.echo(message)
    return EXIT_OK


# ---------------------------------------------------------------------------
# list
# ---------------------------------------------------------------------------

def setup_list(parser):
    parser.add_argument("terms", nargs="*", help="filter terms: project:X +tag -tag pri:H due.before:DATE words")
    add_filter_options(parser)
    parser.add_argument("-s", "--sort", choices=SORT_FIELDS, help="sort field (default: config default_sort)")
    parser.add_argument("-r", "--reverse", action="store_true", help="reverse the order")
    parser.add_argument("-l", "--limit", type=int, help="show at most N tasks")
    parser.add_argument("-c", "--columns", help=f"comma separated columns from: {', '.join(LIST_COLUMNS)}")
    parser.add_argument("-f", "--format", choices=("table", "plain", "json", "ids"), default="table")
    parser.add_argument("--width", type=int, help="table width (overrides config)")


def cmd_list(ctx: Context, args) -> int:
    """Show tasks matching the filters as a table, plain lines, JSON or bare ids."""
    if args.width:
        ctx.config.values["width"] = args.width
    flt = build_filter(ctx, args, args.terms)
    tasks = select_tasks(ctx, flt)
    sort_field = args.sort or ctx.config.get("default_sort")
    tasks = sort_for_list(ctx, tasks, sort_field, args.reverse)
    total = len(tasks)
    if args.limit is not None:
        if args.limit < 0:
            raise UsageError("--limit must not be negative")
        tasks = tasks[: args.limit]

    if args.format == "json":
        ctx.echo(json.dumps([task_to_json(task, ctx) for task in tasks], indent=2, sort_keys=True))
        return EXIT_OK
    if args.format == "ids":
        ctx.echo(" ".join(str(task.id) for task in tasks))
        return EXIT_OK
    if not tasks:
        ctx.echo("No matching tasks.")
        return EXIT_OK
    if args.format == "plain":
        for task in tasks:
            parts = [f"{task.id}", task.description]
            if task.project:
                parts.append(f"project:{task.project}")
            if task.tags:
                parts.append(format_tags(task.tags))
            if task.priority:
                parts.append(f"pri:{task.priority}")
            if task.due:
                parts.append(f"due:{task.due.isoformat()}")
            ctx.echo(" ".join(parts))
        return EXIT_OK

    columns = parse_columns(args.columns)
    ctx.echo(render_task_table(ctx, tasks, columns))
    ctx.echo()
    shown = plural(len(tasks), "task")
    ctx.echo(f"{shown} shown" + (f" of {total}" if total != len(tasks) else ""))
    return EXIT_OK


# ---------------------------------------------------------------------------
# show
# ---------------------------------------------------------------------------

def setup_show(parser):
    parser.add_argument("ids", nargs="+", help="task ids (1 3-5 7,8)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def _show_one(ctx: Context, task: Task) -> None:
    label_width = 12

    def line(label: str, value: str) -> None:
        ctx.echo(f"{label + ':':<{label_width}} {value}")

    ctx.echo(ctx.paint(f"Task {task.id}: {task.description}", "bold"))
    line("Status", task.status + (" (archived)" if task.archived else ""))
    if task.project:
        line("Project", task.project)
    if task.tags:
        line("Tags", format_tags(task.tags))
    if task.priority:
        line("Priority", task.priority)
    if task.due:
        line("Due", f"{ctx.fmt_date(task.due)} ({dates.describe_relative(task.due, ctx.today)})")
    if task.recur:
        line("Recurs", task.recur)
    line("Created", task.created.strftime("%Y-%m-%d %H:%M"))
    if task.modified:
        line("Modified", task.modified.strftime("%Y-%m-%d %H:%M"))
    if task.completed:
        line("Completed", task.completed.strftime("%Y-%m-%d %H:%M"))
    spent = spent_seconds(ctx, task.id)
    if task.estimate:
        ratio = f" ({spent / task.estimate:.0%} used)" if spent else ""
        line("Estimate", durations.format_duration(task.estimate) + ratio)
    if spent:
        entries = ctx.db.entries_for(task.id)
        running = " (timer running)" if any(e.running for e in entries) else ""
        line("Spent", f"{durations.format_duration(spent)} in {plural(len(entries), 'entry', 'entries')}{running}")
    if task.depends:
        parts = []
        for dep_id in task.depends:
            dep = ctx.db.find_task(dep_id)
            state = "missing" if dep is None else dep.status
            parts.append(f"#{dep_id} ({state})")
        line("Depends on", ", ".join(parts))
    blockers = [t.id for t in ctx.db.tasks if task.id in t.depends and t.is_pending]
    if blockers:
        line("Blocking", ", ".join(f"#{i}" for i in blockers))
    line("Urgency", f"{task.urgency(ctx.today):.2f}")
    line("UUID", task.uuid)
    if task.notes:
        ctx.echo("Notes:")
        for note in task.notes:
            ctx.echo(f"  {note.created.strftime('%Y-%m-%d %H:%M')}  {note.text}")


def cmd_show(ctx: Context, args) -> int:
    """Print every field of one or more tasks."""
    tasks = get_tasks(ctx, parse_ids(args.ids))
    if args.json:
        payload = [task_to_json(task, ctx) for task in tasks]
        ctx.echo(json.dumps(payload[0] if len(payload) == 1 else payload, indent=2, sort_keys=True))
        return EXIT_OK
    for index, task in enumerate(tasks):
        if index:
            ctx.echo()
        _show_one(ctx, task)
    return EXIT_OK


# ---------------------------------------------------------------------------
# edit / modify
# ---------------------------------------------------------------------------

def setup_edit(parser):
    parser.add_argument("ids", nargs="+", help="task ids")
    parser.add_argument("-D", "--description", help="new description")
    parser.add_argument("-p", "--project", help="new project ('none' clears it)")
    parser.add_argument("-P", "--priority", help="new priority ('none' clears it)")
    parser.add_argument("-d", "--due", help="new due date ('none' clears it)")
    parser.add_argument("-e", "--estimate", help="new estimate ('none' clears it)")
    parser.add_argument("-r", "--recur", help="new recurrence ('none' clears it)")
    parser.add_argument("--add-tag", action="append", metavar="TAG", help="add a tag")
    parser.add_argument("--remove-tag", action="append", metavar="TAG", help="remove a tag")
    parser.add_argument("--depends", action="append", metavar="ID", help="add a dependency")
    parser.add_argument("--no-depends", action="append", metavar="ID", help="remove a dependency")


def _clears(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("none", "", "-")


def _would_cycle(db: Database, task_id: int, new_dep: int) -> bool:
    """True if making ``task_id`` depend on ``new_dep`` creates a dependency cycle."""
    stack, seen = [new_dep], set()
    while stack:
        current = stack.pop()
        if current == task_id:
            return True
        if current in seen:
            continue
        seen.add(current)
        dep_task = db.find_task(current)
        if dep_task is not None:
            stack.extend(dep_task.depends)
    return False


def cmd_edit(ctx: Context, args) -> int:
    """Change fields of one or more tasks; prints what changed."""
    tasks = get_tasks(ctx, parse_ids(args.ids))
    if args.description is not None and not args.description.strip():
        raise UsageError("the description cannot be empty")
    updates: dict = {}
    if args.description is not None:
        updates["description"] = args.description.strip()
    if args.project is not None:
        updates["project"] = parse_project_arg(args.project)
    if args.priority is not None:
        updates["priority"] = parse_priority_arg(args.priority)
    if args.due is not None:
        updates["due"] = None if _clears(args.due) else parse_date_arg(args.due, ctx)
    if args.estimate is not None:
        updates["estimate"] = None if _clears(args.estimate) else parse_duration_arg(args.estimate)
    if args.recur is not None:
        if _clears(args.recur):
            updates["recur"] = None
        else:
            try:
                dates.parse_recurrence(args.recur)
            except dates.DateParseError as exc:
                raise UsageError(str(exc)) from exc
            updates["recur"] = args.recur.strip().lower()
    add_tags = parse_tags_arg(args.add_tag)
    remove_tags = parse_tags_arg(args.remove_tag)
    add_deps = parse_ids(args.depends) if args.depends else []
    remove_deps = parse_ids(args.no_depends) if args.no_depends else []
    if not (updates or add_tags or remove_tags or add_deps or remove_deps):
        raise UsageError("nothing to change; give at least one option such as --due or --add-tag")

    ctx.db.record("edit " + ",".join(str(t.id) for t in tasks), before=tasks, at=ctx.now)
    for task in tasks:
        changes = []
        for name, value in updates.items():
            old = getattr(task, name)
            if old != value:
                setattr(task, name, value)
                changes.append(f"{name}: {old if old is not None else '-'} -> {value if value is not None else '-'}")
        if task.recur and task.due is None:
            raise UsageError(f"task {task.id} recurs and needs a due date")
        for tag in add_tags:
            if task.add_tag(tag):
                changes.append(f"+{tag}")
        for tag in remove_tags:
            if task.remove_tag(tag):
                changes.append(f"-{tag}")
        for dep_id in add_deps:
            if dep_id == task.id or ctx.db.find_task(dep_id) is None:
                raise CLIError(f"task {task.id} cannot depend on {dep_id}")
            if _would_cycle(ctx.db, task.id, dep_id):
                raise CLIError(f"making {task.id} depend on {dep_id} would create a cycle")
            if dep_id not in task.depends:
                task.depends.append(dep_id)
                changes.append(f"depends +{dep_id}")
        for dep_id in remove_deps:
            if dep_id in task.depends:
                task.depends.remove(dep_id)
                changes.append(f"depends -{dep_id}")
        if changes:
            touch(task, ctx)
            ctx.echo(f"Modified task {task.id}: " + "; ".join(changes))
        else:
            ctx.echo(f"Task {task.id} unchanged.")
    ctx.changed()
    return EXIT_OK


# ---------------------------------------------------------------------------
# done / reopen / undo / delete
# ---------------------------------------------------------------------------

def setup_done(parser):
    parser.add_argument("ids", nargs="+", help="task ids")
    parser.add_argument("--at", help="completion time (default: now)")
    parser.add_argument("-f", "--force", action="store_true", help="complete even if blocked")


def _next_recurrence(ctx: Context, task: Task) -> Task:
    """The follow-up copy of a recurring task, due at its next occurrence."""
    follow_up = copy.deepcopy(task)
    follow_up.id = ctx.db.allocate_task_id()
    follow_up.uuid = Task(id=0, description="", created=ctx.now).uuid
    follow_up.status = "pending"
    follow_up.completed = None
    follow_up.created = ctx.now
    follow_up.modified = None
    follow_up.notes = []
    follow_up.due = dates.next_occurrence(task.due, task.recur, after=ctx.today)
    return follow_up


def cmd_done(ctx: Context, args) -> int:
    """Mark tasks done; stops their timer and schedules the next occurrence of recurring tasks."""
    tasks = get_tasks(ctx, parse_ids(args.ids))
    when = parse_datetime_arg(args.at, ctx) if args.at else ctx.now
    pending = []
    for task in tasks:
        if task.is_done:
            ctx.echo(f"Task {task.id} is already done.")
        elif is_blocked(task, ctx.db) and not args.force:
            waiting = ", ".join(f"#{d}" for d in task.depends)
            raise CLIError(f"task {task.id} is blocked by {waiting} (use --force to complete it anyway)")
        else:
            pending.append(task)
    if not pending:
        return EXIT_FAILURE

    created = []
    for task in pending:
        running = ctx.db.running_entry()
        if running is not None and running.task_id == task.id:
            running.end = max(when, running.start)
            ctx.echo(f"Stopped timer on task {task.id} after {durations.format_duration(running.duration())}.")
        task.status = "done"
        task.completed = when
        touch(task, ctx)
        ctx.echo(f"Completed task {task.id}: {task.description}")
        if task.recur and task.due:
            follow_up = _next_recurrence(ctx, task)
            ctx.db.add_task(follow_up)
            created.append(follow_up.id)
            ctx.echo(f"Created task {follow_up.id}: next occurrence due {ctx.fmt_date(follow_up.due)}")
    ctx.db.record("done " + ",".join(str(t.id) for t in pending), before=pending,
                  created=created, at=ctx.now)
    ctx.changed()
    return EXIT_OK


def setup_reopen(parser):
    parser.add_argument("ids", nargs="+", help="ids of completed tasks")


def cmd_reopen(ctx: Context, args) -> int:
    """Set completed tasks back to pending (unlike undo, works on any past completion)."""
    tasks = get_tasks(ctx, parse_ids(args.ids))
    done = [task for task in tasks if task.is_done]
    for task in tasks:
        if not task.is_done:
            ctx.echo(f"Task {task.id} is not done.")
    if not done:
        return EXIT_FAILURE
    ctx.db.record("reopen " + ",".join(str(t.id) for t in done), before=done, at=ctx.now)
    for task in done:
        task.status = "pending"
        task.completed = None
        task.archived = False
        touch(task, ctx)
        ctx.echo(f"Reopened task {task.id}: {task.description}")
    ctx.changed()
    return EXIT_OK


def setup_undo(parser):
    parser.add_argument("-n", "--steps", type=int, default=1, help="how many actions to revert")


def cmd_undo(ctx: Context, args) -> int:
    """Revert the most recent changes recorded in the journal."""
    if args.steps < 1:
        raise UsageError("--steps must be at least 1")
    undone = 0
    for _ in range(args.steps):
        entry = ctx.db.undo()
        if entry is None:
            break
        undone += 1
        ctx.echo(f"Undid '{entry.action}' from {entry.at.strftime('%Y-%m-%d %H:%M')}")
    if not undone:
        ctx.echo("Nothing to undo.")
        return EXIT_FAILURE
    ctx.changed()
    return EXIT_OK


def setup_history(parser):
    parser.add_argument("-n", "--limit", type=int, default=10, help="show the last N actions")


def cmd_history(ctx: Context, args) -> int:
    """List the actions that ``undo`` can revert, newest first."""
    journal = ctx.db.journal
    if not journal:
        ctx.echo("No recorded actions.")
        return EXIT_OK
    rows = []
    for position, entry in enumerate(reversed(journal[-args.limit:] if args.limit > 0 else journal), start=1):
        touched = ", ".join(f"#{t.id}" for t in entry.before) or "-"
        created = ", ".join(f"#{i}" for i in entry.created) or "-"
        rows.append([str(position), entry.at.strftime("%Y-%m-%d %H:%M"), entry.action, touched, created])
    columns = [Column("#", "right"), Column("When"), Column("Action", flex=True),
               Column("Touched"), Column("Created")]
    ctx.echo(render_table(columns, rows, width=ctx.width()))
    return EXIT_OK


def setup_delete(parser):
    parser.add_argument("ids", nargs="+", help="task ids")
    parser.add_argument("-y", "--yes", action="store_true", help="do not ask for confirmation")
    parser.add_argument("--keep-entries", action="store_true", help="keep the tasks' time entries")


def _confirm(ctx: Context, question: str) -> bool:
    stream = sys.stdin
    if not stream or not stream.isatty():
        return False
    print(f"{question} [y/N] ", end="", file=ctx.out, flush=True)
    answer = stream.readline().strip().lower()
    return answer in ("y", "yes")


def cmd_delete(ctx: Context, args) -> int:
    """Remove tasks for good (``undo`` can bring them back, time entries excepted)."""
    tasks = get_tasks(ctx, parse_ids(args.ids))
    if len(tasks) > 1 and ctx.config.get("confirm_delete") and not args.yes:
        if not _confirm(ctx, f"Delete {plural(len(tasks), 'task')}?"):
            raise CLIError("not deleting without confirmation (use --yes)")
    ids = {task.id for task in tasks}
    dependants = [t for t in ctx.db.tasks if t.id not in ids and ids & set(t.depends)]
    ctx.db.record("delete " + ",".join(str(i) for i in sorted(ids)), before=tasks + dependants, at=ctx.now)
    for task in tasks:
        ctx.db.remove_task(task.id)
        ctx.echo(f"Deleted task {task.id}: {task.description}")
    for other in dependants:
        other.depends = [d for d in other.depends if d not in ids]
        touch(other, ctx)
    if not args.keep_entries:
        removed = [e for e in ctx.db.entries if e.task_id in ids]
        for entry in removed:
            ctx.db.remove_entry(entry.id)
        if removed:
            ctx.echo(f"Removed {plural(len(removed), 'time entry', 'time entries')}.")
    ctx.changed()
    return EXIT_OK


# ---------------------------------------------------------------------------
# tags and projects
# ---------------------------------------------------------------------------

def setup_tag(parser):
    parser.add_argument("ids", help="task ids, e.g. 1,3-5")
    parser.add_argument("tags", nargs="+", help="tags to add")


def cmd_tag(ctx: Context, args) -> int:
    """Add tags to tasks."""
    tasks = get_tasks(ctx, parse_ids([args.ids]))
    tags = parse_tags_arg(args.tags)
    ctx.db.record(f"tag {args.ids}", before=tasks, at=ctx.now)
    changed = 0
    for task in tasks:
        added = [tag for tag in tags if task.add_tag(tag)]
        if added:
            touch(task, ctx)
            changed += 1
            ctx.echo(f"Task {task.id}: added {format_tags(added)}")
    if not changed:
        ctx.db.journal.pop()
        ctx.echo("No tags added.")
        return EXIT_OK
    ctx.changed()
    return EXIT_OK


def setup_untag(parser):
    parser.add_argument("ids", help="task ids, e.g. 1,3-5")
    parser.add_argument("tags", nargs="+", help="tags to remove")


def cmd_untag(ctx: Context, args) -> int:
    """Remove tags from tasks."""
    tasks = get_tasks(ctx, parse_ids([args.ids]))
    tags = parse_tags_arg(args.tags)
    ctx.db.record(f"untag {args.ids}", before=tasks, at=ctx.now)
    changed = 0
    for task in tasks:
        removed = [tag for tag in tags if task.remove_tag(tag)]
        if removed:
            touch(task, ctx)
            changed += 1
            ctx.echo(f"Task {task.id}: removed {format_tags(removed)}")
    if not changed:
        ctx.db.journal.pop()
        ctx.echo("No tags removed.")
        return EXIT_OK
    ctx.changed()
    return EXIT_OK


def setup_tags(parser):
    parser.add_argument("-a", "--all", action="store_true", help="count done tasks too")
    parser.add_argument("--rename", nargs=2, metavar=("OLD", "NEW"), help="rename a tag everywhere")


def cmd_tags(ctx: Context, args) -> int:
    """List tags with the number of tasks using them, or rename one."""
    if args.rename:
        old, new = parse_tags_arg([args.rename[0]])[0], parse_tags_arg([args.rename[1]])[0]
        affected = [t for t in ctx.db.tasks if old in t.tags]
        if not affected:
            raise CLIError(f"no task is tagged {old!r}")
        ctx.db.record(f"rename tag {old} -> {new}", before=affected, at=ctx.now)
        for task in affected:
            task.remove_tag(old)
            task.add_tag(new)
            touch(task, ctx)
        ctx.changed()
        ctx.echo(f"Renamed tag {old} to {new} on {plural(len(affected), 'task')}.")
        return EXIT_OK
    counts = Counter()
    for task in ctx.db.tasks:
        if task.archived or (task.is_done and not args.all):
            continue
        counts.update(task.tags)
    if not counts:
        ctx.echo("No tags.")
        return EXIT_OK
    rows = [[tag, str(count)] for tag, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    ctx.echo(render_table([Column("Tag"), Column("Tasks", "right")], rows, width=ctx.width()))
    return EXIT_OK


def setup_projects(parser):
    parser.add_argument("-a", "--all", action="store_true", help="count done tasks too")
    parser.add_argument("--tree", action="store_true", help="show sub-projects indented under parents")


def cmd_projects(ctx: Context, args) -> int:
    """List projects with pending (and optionally done) task counts."""
    pending, done = Counter(), Counter()
    for task in ctx.db.tasks:
        if task.archived or not task.project:
            continue
        if task.is_done:
            done[task.project] += 1
        else:
            pending[task.project] += 1
    names = sorted(set(pending) | (set(done) if args.all else set()), key=str.lower)
    if not names:
        ctx.echo("No projects.")
        return EXIT_OK
    if args.tree:
        expanded = set()
        for name in names:
            parts = name.split(".")
            for depth in range(1, len(parts) + 1):
                expanded.add(".".join(parts[:depth]))
        for name in sorted(expanded, key=str.lower):
            depth = name.count(".")
            own = pending[name] + (done[name] if args.all else 0)
            nested = sum(pending[n] + (done[n] if args.all else 0)
                         for n in names if n == name or n.startswith(name + "."))
            label = name.rsplit(".", 1)[-1]
            suffix = f"{own}" if own == nested else f"{own} ({nested} incl. sub-projects)"
            ctx.echo(f"{'  ' * depth}{label}  {suffix}")
        return EXIT_OK
    columns = [Column("Project"), Column("Pending", "right")]
    if args.all:
        columns.append(Column("Done", "right"))
    rows = []
    for name in names:
        row = [name, str(pending[name])]
        if args.all:
            row.append(str(done[name]))
        rows.append(row)
    ctx.echo(render_table(columns, rows, width=ctx.width()))
    return EXIT_OK


def setup_move(parser):
    parser.add_argument("ids", nargs="+", help="task ids")
    parser.add_argument("--to", required=True, metavar="PROJECT", help="target project ('none' clears it)")


def cmd_move(ctx: Context, args) -> int:
    """Move tasks into another project."""
    tasks = get_tasks(ctx, parse_ids(args.ids))
    target = parse_project_arg(args.to)
    moving = [task for task in tasks if task.project != target]
    if not moving:
        ctx.echo("Nothing to move.")
        return EXIT_OK
    ctx.db.record(f"move to {target or 'none'}", before=moving, at=ctx.now)
    for task in moving:
        task.project = target
        touch(task, ctx)
    ctx.changed()
    ctx.echo(f"Moved {plural(len(moving), 'task')} to {target or 'no project'}.")
    return EXIT_OK


def setup_rename_project(parser):
    parser.add_argument("old", help="current project name")
    parser.add_argument("new", help="new project name")


def cmd_rename_project(ctx: Context, args) -> int:
    """Rename a project and all of its sub-projects (``work`` -> ``job`` renames ``work.ops`` too)."""
    old, new = parse_project_arg(args.old), parse_project_arg(args.new)
    if old is None or new is None:
        raise UsageError("both project names are required")
    affected = [t for t in ctx.db.tasks if t.in_project(old)]
    if not affected:
        raise CLIError(f"no tasks in project {old!r}")
    ctx.db.record(f"rename project {old} -> {new}", before=affected, at=ctx.now)
    for task in affected:
        task.project = new + task.project[len(old):]
        touch(task, ctx)
    ctx.changed()
    ctx.echo(f"Renamed project {old} to {new} ({plural(len(affected), 'task')}).")
    return EXIT_OK


# ---------------------------------------------------------------------------
# search / note / duplicate
# ---------------------------------------------------------------------------

def setup_search(parser):
    parser.add_argument("pattern", help="text (or regular expression with --regex) to look for")
    parser.add_argument("-r", "--regex", action="store_true", help="treat PATTERN as a regular expression")
    parser.add_argument("-C", "--case-sensitive", action="store_true", help="match case exactly")
    parser.add_argument("--notes", action="store_true", help="search notes as well as descriptions")
    parser.add_argument("-a", "--all", action="store_true", help="include done and archived tasks")


def _highlight(ctx: Context, text: str, spans: list[tuple[int, int]]) -> str:
    if not ctx.color or not spans:
        return text
    pieces, last = [], 0
    for start, end in spans:
        pieces.append(text[last:start])
        pieces.append(ctx.paint(text[start:end], "yellow"))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


def cmd_search(ctx: Context, args) -> int:
    """Find tasks whose description (or notes) contain a text or match a regex."""
    flags = 0 if args.case_sensitive else re.IGNORECASE
    pattern = args.pattern if args.regex else re.escape(args.pattern)
    try:
        regex = re.compile(pattern, flags)
    except re.error as exc:
        raise UsageError(f"invalid regular expression: {exc}") from exc
    hits = 0
    for task in ctx.db.tasks:
        if not args.all and (task.archived or task.is_done):
            continue
        spans = [m.span() for m in regex.finditer(task.description) if m.end() > m.start()]
        note_hits = []
        if args.notes:
            note_hits = [note for note in task.notes if regex.search(note.text)]
        if not spans and not note_hits:
            continue
        hits += 1
        marker = " (done)" if task.is_done else ""
        ctx.echo(f"{task.id:>4}  {_highlight(ctx, task.description, spans)}{marker}")
        for note in note_hits:
            ctx.echo(f"      note {note.created.strftime('%Y-%m-%d')}: {note.text}")
    if not hits:
        ctx.echo("No matches.")
        return EXIT_FAILURE
    ctx.echo(f"\n{plural(hits, 'match', 'matches')}.")
    return EXIT_OK


def setup_note(parser):
    parser.add_argument("id", type=int, help="task id")
    parser.add_argument("text", nargs="*", help="note text (omit with --list)")
    parser.add_argument("--list", action="store_true", help="show the task's notes")
    parser.add_argument("--delete", type=int, metavar="N", help="delete the N-th note (1-based)")


def cmd_note(ctx: Context, args) -> int:
    """Append, list or delete notes on a task."""
    task = get_tasks(ctx, [args.id])[0]
    if args.list:
        if not task.notes:
            ctx.echo(f"Task {task.id} has no notes.")
            return EXIT_OK
        for number, note in enumerate(task.notes, start=1):
            ctx.echo(f"{number}. {note.created.strftime('%Y-%m-%d %H:%M')}  {note.text}")
        return EXIT_OK
    if args.delete is not None:
        if not 1 <= args.delete <= len(task.notes):
            raise CLIError(f"task {task.id} has no note {args.delete}")
        ctx.db.record(f"delete note {task.id}/{args.delete}", before=[task], at=ctx.now)
        removed = task.notes.pop(args.delete - 1)
        touch(task, ctx)
        ctx.changed()
        ctx.echo(f"Deleted note from task {task.id}: {truncate(removed.text, 60)}")
        return EXIT_OK
    text = " ".join(args.text).strip()
    if not text:
        raise UsageError("the note text is empty")
    ctx.db.record(f"note {task.id}", before=[task], at=ctx.now)
    task.notes.append(Note(ctx.now, text))
    touch(task, ctx)
    ctx.changed()
    ctx.echo(f"Added note to task {task.id} ({plural(len(task.notes), 'note')}).")
    return EXIT_OK


def setup_duplicate(parser):
    parser.add_argument("id", type=int, help="task to copy")
    parser.add_argument("-d", "--due", help="due date of the copy")
    parser.add_argument("-D", "--description", help="description of the copy")


def cmd_duplicate(ctx: Context, args) -> int:
    """Copy a task (without notes, time or completion) as a new pending task."""
    source = get_tasks(ctx, [args.id])[0]
    clone = Task(
        id=ctx.db.allocate_task_id(),
        description=(args.description or source.description).strip(),
        created=ctx.now,
        project=source.project,
        tags=list(source.tags),
        priority=source.priority,
        due=parse_date_arg(args.due, ctx) if args.due else source.due,
        estimate=source.estimate,
        recur=source.recur,
        depends=list(source.depends),
    )
    ctx.db.add_task(clone)
    ctx.db.record(f"duplicate {source.id}", created=[clone.id], at=ctx.now)
    ctx.changed()
    ctx.echo(f"Created task {clone.id}: copy of task {source.id}")
    return EXIT_OK


# ---------------------------------------------------------------------------
# time tracking: start / stop / status / cancel / log / entries / unlog
# ---------------------------------------------------------------------------

def setup_start(parser):
    parser.add_argument("id", type=int, help="task to work on")
    parser.add_argument("--at", help="start time (default: now), e.g. 09:15 or 'yesterday 16:00'")
    parser.add_argument("-n", "--note", default="", help="note for the time entry")


def _stop_entry(ctx: Context, entry: TimeEntry, when: datetime) -> None:
    if when < entry.start:
        raise UsageError(f"stop time {when:%Y-%m-%d %H:%M} is before the timer started ({entry.start:%H:%M})")
    entry.end = when
    task = ctx.db.find_task(entry.task_id)
    name = task.description if task else f"task {entry.task_id}"
    ctx.echo(f"Stopped timer on task {entry.task_id} ({truncate(name, 40)}): "
             f"{durations.format_duration(entry.duration())}")


def cmd_start(ctx: Context, args) -> int:
    """Start a timer on a task, stopping any running timer first (config auto_stop)."""
    task = get_tasks(ctx, [args.id], include_archived=False)[0]
    if task.is_done:
        raise CLIError(f"task {task.id} is done; reopen it before tracking time")
    when = parse_datetime_arg(args.at, ctx) if args.at else ctx.now
    if when > ctx.now + timedelta(minutes=1):
        raise UsageError("cannot start a timer in the future")
    running = ctx.db.running_entry()
    if running is not None:
        if running.task_id == task.id:
            raise CLIError(f"the timer on task {task.id} is already running (since {running.start:%H:%M})")
        if not ctx.config.get("auto_stop"):
            raise CLIError(f"a timer is running on task {running.task_id}; stop it first")
        _stop_entry(ctx, running, when)
    entry = ctx.db.add_entry(task.id, when, note=args.note)
    ctx.changed()
    ctx.echo(f"Started timer on task {task.id}: {task.description} at {entry.start:%H:%M}")
    return EXIT_OK


def setup_stop(parser):
    parser.add_argument("--at", help="stop time (default: now)")
    parser.add_argument("-n", "--note", help="set or replace the entry's note")


def cmd_stop(ctx: Context, args) -> int:
    """Stop the running timer."""
    running = ctx.db.running_entry()
    if running is None:
        ctx.echo("No timer is running.")
        return EXIT_FAILURE
    when = parse_datetime_arg(args.at, ctx) if args.at else ctx.now
    if args.note is not None:
        running.note = args.note
    _stop_entry(ctx, running, when)
    ctx.changed()
    return EXIT_OK


def setup_status(parser):
    parser.add_argument("--short", action="store_true", help="one line for shell prompts")


def cmd_status(ctx: Context, args) -> int:
    """Show the running timer and today's tracked time."""
    running = ctx.db.running_entry()
    today_total = sum(e.duration(ctx.now) for e in ctx.db.entries if e.start.date() == ctx.today)
    if args.short:
        if running is None:
            ctx.echo("-")
        else:
            ctx.echo(f"#{running.task_id} {durations.format_duration(running.duration(ctx.now))}")
        return EXIT_OK
    if running is None:
        ctx.echo("No timer is running.")
    else:
        task = ctx.db.find_task(running.task_id)
        ctx.echo(f"Tracking task {running.task_id}: {task.description if task else '?'}")
        ctx.echo(f"  since {running.start:%Y-%m-%d %H:%M} "
                 f"({durations.format_duration(running.duration(ctx.now))})")
        if running.note:
            ctx.echo(f"  note: {running.note}")
    ctx.echo(f"Tracked today: {durations.format_duration(today_total)}")
    return EXIT_OK


def setup_cancel(parser):
    pass


def cmd_cancel(ctx: Context, args) -> int:
    """Discard the running timer without recording time."""
    running = ctx.db.running_entry()
    if running is None:
        ctx.echo("No timer is running.")
        return EXIT_FAILURE
    ctx.db.remove_entry(running.id)
    ctx.changed()
    ctx.echo(f"Cancelled timer on task {running.task_id} (started {running.start:%H:%M}).")
    return EXIT_OK


def setup_log(parser):
    parser.add_argument("id", type=int, help="task id")
    parser.add_argument("duration", help="time spent: 1h30m, 45m, 1.5h, 1:30")
    parser.add_argument("-d", "--date", help="day the work was done (default: today)")
    parser.add_argument("--at", help="start time of the work on that day, e.g. 14:00")
    parser.add_argument("-n", "--note", default="", help="note for the entry")


def cmd_log(ctx: Context, args) -> int:
    """Record time spent on a task after the fact."""
    task = get_tasks(ctx, [args.id])[0]
    seconds = parse_duration_arg(args.duration)
    if seconds <= 0:
        raise UsageError("the duration must be positive")
    if seconds > 24 * 3600:
        raise UsageError("cannot log more than 24h in one entry")
    day = parse_date_arg(args.date, ctx) if args.date else ctx.today
    if day > ctx.today:
        raise UsageError("cannot log time in the future")
    if args.at:
        try:
            start = datetime.combine(day, dates.parse_time(args.at))
        except dates.DateParseError as exc:
            raise UsageError(str(exc)) from exc
    elif day == ctx.today:
        start = max(datetime.combine(day, datetime.min.time()), ctx.now - timedelta(seconds=seconds))
    else:
        start = datetime.combine(day, datetime.min.time()).replace(hour=9)
    entry = ctx.db.add_entry(task.id, start, seconds=seconds, note=args.note)
    entry.end = start + timedelta(seconds=seconds)
    ctx.changed()
    ctx.echo(f"Logged {durations.format_duration(seconds)} on task {task.id} for {ctx.fmt_date(day)} "
             f"(entry {entry.id})")
    return EXIT_OK


def setup_entries(parser):
    parser.add_argument("--from", dest="start", help="first day (default: 7 days ago)")
    parser.add_argument("--to", dest="end", help="last day (default: today)")
    parser.add_argument("--task", type=int, help="only entries of this task")
    parser.add_argument("-p", "--project", help="only entries of tasks in PROJECT")
    parser.add_argument("--csv", action="store_true", help="print a CSV timesheet")


def _date_range(ctx: Context, start_text: str | None, end_text: str | None, default_days: int) -> tuple[date, date]:
    end = parse_date_arg(end_text, ctx) if end_text else ctx.today
    start = parse_date_arg(start_text, ctx) if start_text else end - timedelta(days=default_days - 1)
    if start > end:
        raise UsageError(f"--from ({start}) is after --to ({end})")
    return start, end


def cmd_entries(ctx: Context, args) -> int:
    """List time entries in a date range."""
    start, end = _date_range(ctx, args.start, args.end, 7)
    tasks = {task.id: task for task in ctx.db.tasks}
    project = parse_project_arg(args.project) if args.project else None
    chosen = []
    for entry in reports.entries_between(ctx.db.entries, start, end, at=ctx.now):
        if args.task is not None and entry.task_id != args.task:
            continue
        task = tasks.get(entry.task_id)
        if project and not (task and task.in_project(project)):
            continue
        chosen.append(entry)
    chosen.sort(key=lambda e: (e.start, e.id))
    if args.csv:
        ctx.out.write(exporters.export_entries_csv(chosen, tasks))
        return EXIT_OK
    if not chosen:
        ctx.echo("No time entries in this range.")
        return EXIT_OK
    rows = []
    for entry in chosen:
        task = tasks.get(entry.task_id)
        end_text = "running" if entry.running else (entry.end or entry.start).strftime("%H:%M")
        rows.append([
            str(entry.id), entry.start.strftime("%Y-%m-%d"), entry.start.strftime("%H:%M"), end_text,
            durations.format_duration(entry.duration(ctx.now)), str(entry.task_id),
            task.description if task else "(deleted)", entry.note,
        ])
    columns = [Column("Entry", "right"), Column("Date"), Column("Start"), Column("End"),
               Column("Time", "right"), Column("Task", "right"), Column("Description", flex=True),
               Column("Note", flex=True)]
    ctx.echo(render_table(columns, rows, width=ctx.width()))
    total = sum(entry.duration(ctx.now) for entry in chosen)
    ctx.echo(f"\nTotal: {durations.format_duration(total)} in {plural(len(chosen), 'entry', 'entries')}")
    return EXIT_OK


def setup_unlog(parser):
    parser.add_argument("entry_ids", nargs="+", help="ids of time entries (see `entries`)")


def cmd_unlog(ctx: Context, args) -> int:
    """Delete time entries."""
    for entry_id in parse_ids(args.entry_ids):
        try:
            entry = ctx.db.remove_entry(entry_id)
        except NotFound as exc:
            raise CLIError(str(exc)) from exc
        ctx.echo(f"Deleted entry {entry.id} ({durations.format_duration(entry.duration(ctx.now))} "
                 f"on task {entry.task_id}).")
    ctx.changed()
    return EXIT_OK


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

def setup_report(parser):
    period = parser.add_mutually_exclusive_group()
    period.add_argument("--daily", dest="period", action="store_const", const="daily", help="one day (default)")
    period.add_argument("--weekly", dest="period", action="store_const", const="weekly", help="one week")
    period.add_argument("--monthly", dest="period", action="store_const", const="monthly", help="one month")
    period.add_argument("--range", dest="period", action="store_const", const="range", help="use --from/--to")
    parser.add_argument("--date", help="a day inside the period (default: today)")
    parser.add_argument("--from", dest="start", help="first day for --range")
    parser.add_argument("--to", dest="end", help="last day for --range")
    parser.add_argument("--by", choices=("project", "task", "tag", "day"), default="project",
                        help="how to group the totals (default: project)")
    parser.add_argument("-p", "--project", help="only time on tasks in PROJECT")
    parser.add_argument("--round", help="round each row to this increment, e.g. 15m (default: config)")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table")
    parser.add_argument("--chart", action="store_true", help="add a bar chart column")


def report_period(ctx: Context, args) -> tuple[date, date, str]:
    """The first day, last day and title of the report period."""
    period = args.period or "daily"
    reference = parse_date_arg(args.date, ctx) if args.date else ctx.today
    if period == "daily":
        return reference, reference, f"{reference.strftime('%A')} {ctx.fmt_date(reference)}"
    if period == "weekly":
        start, end = dates.week_bounds(reference)
        return start, end, f"Week of {start.strftime('%a')} {ctx.fmt_date(start)} - {end.strftime('%a')} {ctx.fmt_date(end)}"
    if period == "monthly":
        start, end = dates.month_bounds(reference)
        return start, end, reference.strftime("%B %Y")
    if not args.start:
        raise UsageError("--range needs --from (and optionally --to)")
    start, end = _date_range(ctx, args.start, args.end, 1)
    return start, end, f"{ctx.fmt_date(start)} - {ctx.fmt_date(end)}"


def cmd_report(ctx: Context, args) -> int:
    """Tracked time for a day, week, month or range, grouped by project, task, tag or day."""
    start, end, title = report_period(ctx, args)
    tasks = {task.id: task for task in ctx.db.tasks}
    entries = reports.entries_between(ctx.db.entries, start, end, at=ctx.now)
    if args.project:
        project = parse_project_arg(args.project)
        entries = [e for e in entries if tasks.get(e.task_id) and tasks[e.task_id].in_project(project)]
    increment = parse_duration_arg(args.round or ctx.config.get("report_rounding"))
    groups = reports.group_entries(entries, tasks, args.by, at=ctx.now)
    if args.by == "day":
        totals = reports.daily_totals(entries, start, end, at=ctx.now)
        groups = [reports.Group(day.isoformat(), seconds) for day, seconds in totals.items()]
    for group in groups:
        group.seconds = durations.round_duration(group.seconds, increment)
    total = sum(group.seconds for group in groups)
    log.debug("report %s..%s: %d entries, %d groups", start, end, len(entries), len(groups))

    def label(group: reports.Group) -> str:
        if args.by == "task":
            task = tasks.get(int(group.key))
            return f"#{group.key} {task.description if task else '(deleted)'}"
        if args.by == "day":
            return f"{date.fromisoformat(group.key).strftime('%a')} {group.key}"
        return group.key

    if args.format == "json":
        payload = {
            "title": title, "from": start.isoformat(), "to": end.isoformat(), "by": args.by,
            "total_seconds": total,
            "rows": [{"key": g.key, "label": label(g), "seconds": g.seconds} for g in groups],
        }
        ctx.echo(json.dumps(payload, indent=2, sort_keys=True))
        return EXIT_OK
    if args.format == "csv":
        ctx.echo(f"{args.by},hours,minutes")
        for group in groups:
            ctx.echo(f"{label(group)},{group.seconds / 3600:.2f},{group.seconds // 60}")
        return EXIT_OK

    ctx.echo(ctx.paint(title, "bold"))
    if not entries:
        ctx.echo("No time tracked.")
        return EXIT_OK
    ctx.echo()
    columns = [Column(args.by.capitalize(), flex=True), Column("Time", "right"), Column("Hours", "right")]
    if args.chart:
        columns.append(Column(""))
    peak = max((g.seconds for g in groups), default=0)
    rows = []
    for group in groups:
        row = [label(group), format_clock(group.seconds), durations.format_duration(group.seconds, "decimal")]
        if args.chart:
            row.append(bar(group.seconds, peak))
        rows.append(row)
    rows.append(["Total", format_clock(total), durations.format_duration(total, "decimal")]
                + ([""] if args.chart else []))
    ctx.echo(render_table(columns, rows, width=ctx.width()))
    if increment:
        ctx.echo(f"\n(rows rounded to {durations.format_duration(increment)})")
    return EXIT_OK


# ---------------------------------------------------------------------------
# export / import
# ---------------------------------------------------------------------------

def setup_export(parser):
    parser.add_argument("terms", nargs="*", help="filter terms, as for `list`")
    add_filter_options(parser, status_default="all")
    parser.add_argument("-f", "--format", choices=("json", "csv", "ical", "timesheet"), default="json")
    parser.add_argument("-o", "--output", help="write to this file instead of standard output")
    parser.add_argument("--entries", action="store_true", help="ical: add time entries as events")
    parser.add_argument("--sort", choices=SORT_FIELDS, default="id", help="order of exported tasks")


def cmd_export(ctx: Context, args) -> int:
    """Write tasks (and time entries) as JSON, CSV, iCalendar or a CSV timesheet."""
    flt = build_filter(ctx, args, args.terms)
    tasks = reports.sort_tasks(select_tasks(ctx, flt), args.sort, today=ctx.today)
    ids = {task.id for task in tasks}
    entries = [entry for entry in ctx.db.entries if entry.task_id in ids]
    if args.format == "json":
        text = exporters.export_json(tasks, entries, ctx.now)
    elif args.format == "csv":
        text = exporters.export_csv(tasks)
    elif args.format == "ical":
        text = exporters.export_ical(tasks, entries, ctx.now, include_entries=args.entries)
    else:
        text = exporters.export_entries_csv(sorted(entries, key=lambda e: (e.start, e.id)),
                                            {task.id: task for task in tasks})
    if args.output:
        path = Path(args.output).expanduser()
        newline = "" if args.format == "ical" else None
        with open(path, "w", encoding="utf-8", newline=newline) as handle:
            handle.write(text)
        ctx.echo(f"Exported {plural(len(tasks), 'task')} to {path}")
    else:
        ctx.out.write(text)
    return EXIT_OK


def setup_import(parser):
    parser.add_argument("file", help="file to import ('-' for standard input)")
    parser.add_argument("-f", "--format", choices=tuple(importers.READERS), help="input format (default: guess)")
    parser.add_argument("--dry-run", action="store_true", help="show what would be imported")
    parser.add_argument("--update", action="store_true",
                        help="overwrite existing tasks with the same uuid instead of skipping them")
    parser.add_argument("-p", "--project", help="put imported tasks without a project into PROJECT")


def cmd_import(ctx: Context, args) -> int:
    """Read tasks and time entries from a taskcli export, a CSV file or a Toggl report."""
    if args.file == "-":
        text, name = sys.stdin.read(), "<stdin>"
    else:
        path = Path(args.file).expanduser()
        if not path.exists():
            raise CLIError(f"{path} does not exist")
        text, name = path.read_text(encoding="utf-8-sig"), path.name
    fmt = args.format or importers.detect_format(name, text)
    log.debug("importing %s as %s", name, fmt)
    try:
        batch = importers.READERS[fmt](text)
    except importers.ImportError_ as exc:
        raise CLIError(f"cannot import {name}: {exc}") from exc
    for warning in batch.warnings:
        ctx.warn(warning)
    default_project = parse_project_arg(args.project) if args.project else None

    id_map: dict[int, int] = {}
    added = updated = skipped = 0
    created_ids = []
    before = []
    for incoming in batch.tasks:
        existing = ctx.db.task_by_uuid(incoming.uuid)
        if existing is not None:
            id_map[incoming.id] = existing.id
            if not args.update:
                skipped += 1
                continue
            before.append(copy.deepcopy(existing))
            incoming.id = existing.id
            if default_project and not incoming.project:
                incoming.project = default_project
            ctx.db.replace_task(incoming)
            updated += 1
            continue
        new_id = ctx.db.allocate_task_id()
        id_map[incoming.id] = new_id
        incoming.id = new_id
        if default_project and not incoming.project:
            incoming.project = default_project
        ctx.db.add_task(incoming)
        created_ids.append(new_id)
        added += 1
    for task_id in created_ids:
        task = ctx.db.task(task_id)
        task.depends = [id_map[d] for d in task.depends if d in id_map]

    known = {(e.task_id, e.start, e.duration()) for e in ctx.db.entries}
    entries_added = 0
    for entry in batch.entries:
        task_id = id_map.get(entry.task_id)
        if task_id is None:
            ctx.warn(f"time entry {entry.id} refers to unknown task {entry.task_id}; skipped")
            continue
        if (task_id, entry.start, entry.duration()) in known:
            continue
        if entry.running:
            ctx.warn(f"time entry {entry.id} is a running timer; skipped")
            continue
        ctx.db.add_entry(task_id, entry.start, entry.end, entry.seconds, entry.note)
        entries_added += 1

    summary = (f"{plural(added, 'task')} added, {updated} updated, {skipped} skipped, "
               f"{plural(entries_added, 'time entry', 'time entries')} added")
    if args.dry_run:
        ctx.dry_run = True
        ctx.echo(f"Dry run: {summary}.")
        return EXIT_OK
    if added or updated or entries_added:
        ctx.db.record(f"import {name}", before=before, created=created_ids, at=ctx.now)
        ctx.changed()
    ctx.echo(f"Imported from {name}: {summary}.")
    return EXIT_OK


# ---------------------------------------------------------------------------
# archive / unarchive / purge
# ---------------------------------------------------------------------------

def setup_archive(parser):
    parser.add_argument("ids", nargs="*", help="archive these done tasks (default: all old enough)")
    parser.add_argument("--older-than", metavar="AGE",
                        help="only tasks completed at least AGE ago, e.g. 2w (default: config archive_after)")
    parser.add_argument("-n", "--dry-run", action="store_true", help="list what would be archived")


def cmd_archive(ctx: Context, args) -> int:
    """Hide completed tasks from lists and reports' task counts (time entries are kept)."""
    if args.ids:
        candidates = get_tasks(ctx, parse_ids(args.ids))
        not_done = [str(t.id) for t in candidates if not t.is_done]
        if not_done:
            raise CLIError(f"only done tasks can be archived (pending: {', '.join(not_done)})")
    else:
        age = parse_duration_arg(args.older_than or ctx.config.get("archive_after"))
        cutoff = ctx.now - timedelta(seconds=age)
        candidates = [t for t in ctx.db.tasks
                      if t.is_done and t.completed is not None and t.completed <= cutoff]
    candidates = [t for t in candidates if not t.archived]
    if not candidates:
        ctx.echo("Nothing to archive.")
        return EXIT_OK
    if args.dry_run:
        for task in candidates:
            ctx.echo(f"would archive {task_summary(task)}")
        return EXIT_OK
    ctx.db.record("archive", before=candidates, at=ctx.now)
    for task in candidates:
        task.archived = True
        touch(task, ctx)
    ctx.changed()
    ctx.echo(f"Archived {plural(len(candidates), 'task')}.")
    return EXIT_OK


def setup_unarchive(parser):
    parser.add_argument("ids", nargs="+", help="archived task ids")


def cmd_unarchive(ctx: Context, args) -> int:
    """Bring archived tasks back into normal listings."""
    tasks = get_tasks(ctx, parse_ids(args.ids))
    archived = [t for t in tasks if t.archived]
    if not archived:
        ctx.echo("None of these tasks is archived.")
        return EXIT_FAILURE
    ctx.db.record("unarchive", before=archived, at=ctx.now)
    for task in archived:
        task.archived = False
        touch(task, ctx)
        ctx.echo(f"Unarchived {task_summary(task)}")
    ctx.changed()
    return EXIT_OK


def setup_purge(parser):
    parser.add_argument("--yes", action="store_true", help="really delete archived tasks")


def cmd_purge(ctx: Context, args) -> int:
    """Permanently delete archived tasks and their time entries."""
    archived = [t for t in ctx.db.tasks if t.archived]
    if not archived:
        ctx.echo("No archived tasks.")
        return EXIT_OK
    if not args.yes:
        ctx.echo(f"{plural(len(archived), 'archived task')} would be deleted; run with --yes to do it.")
        return EXIT_FAILURE
    ids = {t.id for t in archived}
    ctx.db.tasks = [t for t in ctx.db.tasks if t.id not in ids]
    ctx.db.entries = [e for e in ctx.db.entries if e.task_id not in ids]
    ctx.db.journal.clear()
    ctx.changed()
    ctx.echo(f"Purged {plural(len(archived), 'task')}; the undo history was cleared.")
    return EXIT_OK


# ---------------------------------------------------------------------------
# stats
# ---------------------------------------------------------------------------

def setup_stats(parser):
    parser.add_argument("--days", type=int, default=14, help="length of the completion chart")
    parser.add_argument("--json", action="store_true", help="print JSON")


def cmd_stats(ctx: Context, args) -> int:
    """Counts, completion rate, average lead time, tracked time and a completion chart."""
    if args.days < 1:
        raise UsageError("--days must be at least 1")
    stats = reports.compute_stats(ctx.db.tasks, ctx.db.entries, ctx.today, days=args.days)
    if args.json:
        ctx.echo(json.dumps({
            "total": stats.total, "pending": stats.pending, "done": stats.done,
            "archived": stats.archived, "overdue": stats.overdue,
            "completion_rate": round(stats.completion_rate, 4),
            "average_lead_days": None if stats.average_lead_days is None else round(stats.average_lead_days, 2),
            "tracked_seconds": stats.tracked_seconds,
            "streak": stats.streak,
            "projects": dict(stats.projects), "tags": dict(stats.tags),
            "completed_per_day": {d.isoformat(): n for d, n in stats.completed_per_day.items()},
        }, indent=2, sort_keys=True))
        return EXIT_OK
    ctx.echo(f"Tasks:           {stats.total} ({stats.pending} pending, {stats.done} done, "
             f"{stats.archived} archived)")
    ctx.echo(f"Overdue:         {stats.overdue}")
    ctx.echo(f"Completion rate: {stats.completion_rate:.0%}")
    if stats.average_lead_days is not None:
        ctx.echo(f"Avg lead time:   {stats.average_lead_days:.1f} days")
    ctx.echo(f"Time tracked:    {durations.format_duration(stats.tracked_seconds)}")
    ctx.echo(f"Streak:          {plural(stats.streak, 'day')}")
    if stats.projects:
        ctx.echo("\nTop projects:")
        for name, count in stats.projects.most_common(5):
            ctx.echo(f"  {name:<20} {count}")
    if stats.tags:
        ctx.echo("\nTop tags:")
        for name, count in stats.tags.most_common(5):
            ctx.echo(f"  {name:<20} {count}")
    peak = max(stats.completed_per_day.values(), default=0)
    if peak:
        ctx.echo(f"\nCompleted per day (last {args.days}):")
        for day, count in stats.completed_per_day.items():
            ctx.echo(f"  {day.strftime('%a %m-%d')}  {count:>3} {bar(count, peak, 30)}")
    return EXIT_OK


# ---------------------------------------------------------------------------
# config
# ---------------------------------------------------------------------------

def setup_config(parser):
    sub = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=_ArgumentParser)
    sub.add_parser("list", help="show all settings")
    get = sub.add_parser("get", help="print one setting")
    get.add_argument("key")
    set_ = sub.add_parser("set", help="change a setting")
    set_.add_argument("key")
    set_.add_argument("value")
    unset = sub.add_parser("unset", help="restore a setting's default")
    unset.add_argument("key")
    sub.add_parser("path", help="print the configuration file path")


def _config_value(value) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def cmd_config(ctx: Context, args) -> int:
    """Show or change settings (``config set week_start sunday``)."""
    action = args.action or "list"
    try:
        if action == "list":
            rows = [[name, _config_value(value), "" if explicit else "(default)", SETTINGS[name].help]
                    for name, value, explicit in ctx.config.items()]
            columns = [Column("Setting"), Column("Value"), Column(""), Column("Description", flex=True)]
            ctx.echo(render_table(columns, rows, width=ctx.width()))
        elif action == "get":
            ctx.echo(_config_value(ctx.config.get(args.key)))
        elif action == "set":
            value = ctx.config.set(args.key, args.value)
            ctx.config.save()
            ctx.echo(f"{args.key} = {_config_value(value)}")
        elif action == "unset":
            if ctx.config.unset(args.key):
                ctx.config.save()
                ctx.echo(f"{args.key} reset to {_config_value(ctx.config.get(args.key))}")
            else:
                ctx.echo(f"{args.key} was not set")
        elif action == "path":
            ctx.echo(str(ctx.config.path))
    except ConfigError as exc:
        raise UsageError(str(exc)) from exc
    return EXIT_OK


# ---------------------------------------------------------------------------
# agenda / next / calendar
# ---------------------------------------------------------------------------

def setup_agenda(parser):
    parser.add_argument("--days", type=int, help="how many days ahead (default: config agenda_days)")
    parser.add_argument("-p", "--project", action="append", help="only tasks in PROJECT")
    parser.add_argument("--no-overdue", action="store_true", help="hide overdue tasks")


def _agenda_order(task: Task):
    return (-PRIORITY_RANK[task.priority], task.id)


def cmd_agenda(ctx: Context, args) -> int:
    """Pending tasks grouped by due day for the coming days, overdue ones first."""
    days = args.days if args.days is not None else int(ctx.config.get("agenda_days"))
    if days < 1:
        raise UsageError("--days must be at least 1")
    horizon = ctx.today + timedelta(days=days - 1)
    projects = [parse_project_arg(p) for p in args.project or []]
    overdue, by_day = [], defaultdict(list)
    for task in ctx.db.tasks:
        if not task.is_pending or task.archived or task.due is None:
            continue
        if projects and not any(task.in_project(p) for p in projects):
            continue
        if task.due < ctx.today:
            overdue.append(task)
        elif task.due <= horizon:
            by_day[task.due].append(task)

    def show(task: Task) -> None:
        extras = []
        if task.priority:
            extras.append(f"pri:{task.priority}")
        if task.project:
            extras.append(task.project)
        suffix = f"  ({', '.join(extras)})" if extras else ""
        ctx.echo(f"  {task.id:>4}  {task.description}{suffix}")

    printed = False
    if overdue and not args.no_overdue:
        ctx.echo(ctx.paint("Overdue", "red"))
        for task in sorted(overdue, key=lambda t: (t.due, -PRIORITY_RANK[t.priority], t.id)):
            show(task)
        printed = True
    for day in dates.iter_days(ctx.today, horizon):
        if day not in by_day:
            continue
        if printed:
            ctx.echo()
        relative = dates.describe_relative(day, ctx.today)
        ctx.echo(ctx.paint(f"{day.strftime('%A')} {ctx.fmt_date(day)} ({relative})", "bold"))
        for task in sorted(by_day[day], key=_agenda_order):
            show(task)
        printed = True
    if not printed:
        ctx.echo(f"Nothing due in the next {plural(days, 'day')}.")
    return EXIT_OK


def setup_next(parser):
    parser.add_argument("-n", "--count", type=int, default=1, help="how many tasks to show")
    parser.add_argument("-p", "--project", action="append", help="only tasks in PROJECT")


def cmd_next(ctx: Context, args) -> int:
    """The most urgent unblocked pending tasks."""
    projects = [parse_project_arg(p) for p in args.project or []]
    candidates = [t for t in ctx.db.tasks
                  if t.is_pending and not t.archived and not is_blocked(t, ctx.db)
                  and (not projects or any(t.in_project(p) for p in projects))]
    if not candidates:
        ctx.echo("Nothing to do.")
        return EXIT_OK
    ranked = sorted(candidates, key=lambda t: (-t.urgency(ctx.today), t.id))[: max(1, args.count)]
    for task in ranked:
        details = []
        if task.due:
            details.append(f"due {dates.describe_relative(task.due, ctx.today)}")
        if task.priority:
            details.append(f"pri:{task.priority}")
        if task.project:
            details.append(f"project:{task.project}")
        ctx.echo(f"{task.id:>4}  {task.description}" + (f"  [{', '.join(details)}]" if details else ""))
    return EXIT_OK


def setup_calendar(parser):
    parser.add_argument("month", nargs="?", help="YYYY-MM (default: this month)")


def cmd_calendar(ctx: Context, args) -> int:
    """A month calendar with the number of pending tasks due on each day."""
    if args.month:
        match = re.match(r"^(\d{4})-(\d{1,2})$", args.month)
        if not match or not 1 <= int(match.group(2)) <= 12:
            raise UsageError(f"month must look like 2024-05, not {args.month!r}")
        year, month = int(match.group(1)), int(match.group(2))
    else:
        year, month = ctx.today.year, ctx.today.month
    first_weekday = dates.parse_weekday(ctx.config.get("week_start"))
    due_counts = Counter(t.due for t in ctx.db.tasks
                         if t.is_pending and not t.archived and t.due and (t.due.year, t.due.month) == (year, month))
    cal = calendar.Calendar(firstweekday=first_weekday)
    ctx.echo(f"{calendar.month_name[month]} {year}".center(7 * 6 - 1))
    ctx.echo(" ".join(f"{dates.WEEKDAYS[(first_weekday + i) % 7][:2].title():>5}" for i in range(7)))
    for week in cal.monthdatescalendar(year, month):
        cells = []
        for day in week:
            if day.month != month:
                cells.append(" " * 5)
                continue
            marker = f"({due_counts[day]})" if due_counts[day] else ""
            text = f"{day.day}{marker}"
            if day == ctx.today:
                text = ctx.paint(f"{text:>5}", "bold")
                cells.append(text)
            else:
                cells.append(f"{text:>5}")
        ctx.echo(" ".join(cells))
    total = sum(due_counts.values())
    ctx.echo(f"\n{plural(total, 'task')} due this month.")
    return EXIT_OK


# ---------------------------------------------------------------------------
# snooze / deps / count / estimates
# ---------------------------------------------------------------------------

def setup_snooze(parser):
    parser.add_argument("ids", nargs="+", help="task ids")
    parser.add_argument("--by", default="1d", help="how far to push the due date (default: 1d), e.g. 3d, 1w")
    parser.add_argument("--until", help="set the due date to this day instead")


def cmd_snooze(ctx: Context, args) -> int:
    """Push the due date of tasks back; overdue tasks are pushed relative to today."""
    tasks = [t for t in get_tasks(ctx, parse_ids(args.ids)) if t.is_pending]
    if not tasks:
        ctx.echo("No pending tasks to snooze.")
        return EXIT_FAILURE
    if args.until:
        target = parse_date_arg(args.until, ctx)
        if target < ctx.today:
            raise UsageError("cannot snooze into the past")
        step = None
    else:
        seconds = parse_duration_arg(args.by)
        if seconds < 86400 or seconds % 86400:
            raise UsageError("--by must be a whole number of days, e.g. 1d or 2w")
        step = timedelta(days=seconds // 86400)
        target = None
    ctx.db.record("snooze", before=tasks, at=ctx.now)
    for task in tasks:
        old = task.due
        if step is not None:
            base = task.due if task.due and task.due >= ctx.today else ctx.today
            task.due = base + step
        else:
            task.due = target
        touch(task, ctx)
        ctx.echo(f"Task {task.id}: due {ctx.fmt_date(old) or '-'} -> {ctx.fmt_date(task.due)}")
    ctx.changed()
    return EXIT_OK


def setup_deps(parser):
    parser.add_argument("id", type=int, help="task id")
    parser.add_argument("--reverse", action="store_true", help="show the tasks that wait for this one")


def cmd_deps(ctx: Context, args) -> int:
    """Show the dependency tree of a task (or, with --reverse, what it blocks)."""
    root = get_tasks(ctx, [args.id])[0]

    def children(task: Task) -> list[Task]:
        if args.reverse:
            return sorted((t for t in ctx.db.tasks if task.id in t.depends), key=lambda t: t.id)
        found = []
        for dep_id in task.depends:
            dep = ctx.db.find_task(dep_id)
            if dep is not None:
                found.append(dep)
        return found

    def walk(task: Task, prefix: str, last: bool, seen: set, depth: int) -> None:
        mark = "x" if task.is_done else " "
        connector = "" if depth == 0 else ("`-- " if last else "|-- ")
        ctx.echo(f"{prefix}{connector}[{mark}] {task.id} {task.description}")
        if task.id in seen:
            ctx.echo(f"{prefix}    (cycle)")
            return
        seen = seen | {task.id}
        kids = children(task)
        extension = "" if depth == 0 else ("    " if last else "|   ")
        for index, child in enumerate(kids):
            walk(child, prefix + extension, index == len(kids) - 1, seen, depth + 1)

    walk(root, "", True, set(), 0)
    if not children(root):
        ctx.echo("  (no dependants)" if args.reverse else "  (no dependencies)")
    return EXIT_OK


def setup_count(parser):
    parser.add_argument("terms", nargs="*", help="filter terms, as for `list`")
    add_filter_options(parser)
    parser.add_argument("--by", choices=("project", "tag", "priority", "status"), help="break the count down")


def cmd_count(ctx: Context, args) -> int:
    """Count tasks matching the filters, optionally grouped."""
    tasks = select_tasks(ctx, build_filter(ctx, args, args.terms))
    if not args.by:
        ctx.echo(str(len(tasks)))
        return EXIT_OK
    counts = Counter()
    for task in tasks:
        if args.by == "project":
            counts[task.project or reports.NO_PROJECT] += 1
        elif args.by == "priority":
            counts[task.priority or reports.NO_PROJECT] += 1
        elif args.by == "status":
            counts[task.status] += 1
        else:
            for tag in task.tags or [reports.NO_PROJECT]:
                counts[tag] += 1
    for key, count in sorted(counts.items()):
        ctx.echo(f"{key:<20} {count:>5}")
    ctx.echo(f"{'total':<20} {len(tasks):>5}")
    return EXIT_OK


def setup_estimates(parser):
    parser.add_argument("-p", "--project", help="only tasks in PROJECT")
    parser.add_argument("--over", action="store_true", help="only tasks that took longer than estimated")
    parser.add_argument("-a", "--all", action="store_true", help="include done tasks")


def cmd_estimates(ctx: Context, args) -> int:
    """Compare estimated effort with tracked time, per task and in total."""
    project = parse_project_arg(args.project) if args.project else None
    rows, total_estimate, total_spent = [], 0, 0
    for task in sorted(ctx.db.tasks, key=lambda t: t.id):
        if task.estimate is None or task.archived:
            continue
        if task.is_done and not args.all:
            continue
        if project and not task.in_project(project):
            continue
        spent = spent_seconds(ctx, task.id)
        if args.over and spent <= task.estimate:
            continue
        total_estimate += task.estimate
        total_spent += spent
        ratio = spent / task.estimate if task.estimate else 0
        remaining = task.estimate - spent
        rows.append([
            str(task.id), task.description,
            durations.format_duration(task.estimate),
            durations.format_duration(spent) if spent else "-",
            f"{ratio:.0%}",
            durations.format_duration(remaining) if remaining > 0 else ctx.paint("over", "red"),
        ])
    if not rows:
        ctx.echo("No estimated tasks.")
        return EXIT_OK
    columns = [Column("ID", "right"), Column("Description", flex=True), Column("Estimate", "right"),
               Column("Spent", "right"), Column("Used", "right"), Column("Left", "right")]
    ctx.echo(render_table(columns, rows, width=ctx.width()))
    overall = f"{total_spent / total_estimate:.0%}" if total_estimate else "-"
    ctx.echo(f"\nEstimated {durations.format_duration(total_estimate)}, "
             f"spent {durations.format_duration(total_spent)} ({overall}).")
    return EXIT_OK


# ---------------------------------------------------------------------------
# timesheet
# ---------------------------------------------------------------------------

def setup_timesheet(parser):
    parser.add_argument("--date", help="a day in the week to show (default: today)")
    parser.add_argument("--by", choices=("task", "project"), default="task", help="row grouping")


def cmd_timesheet(ctx: Context, args) -> int:
    """A week grid: one row per task (or project), one column per day, totals on both axes."""
    reference = parse_date_arg(args.date, ctx) if args.date else ctx.today
    start = reference - timedelta(days=reference.weekday())
    days = [start + timedelta(days=i) for i in range(7)]
    tasks = {task.id: task for task in ctx.db.tasks}
    grid: dict[str, dict[date, int]] = defaultdict(lambda: defaultdict(int))
    for entry in reports.entries_between(ctx.db.entries, days[0], days[-1], at=ctx.now):
        task = tasks.get(entry.task_id)
        if args.by == "project":
            key = reports.project_of(task)
        else:
            key = f"#{entry.task_id} {task.description if task else '(deleted)'}"
        grid[key][entry.start.date()] += entry.duration(ctx.now)
    ctx.echo(f"Timesheet {ctx.fmt_date(days[0])} - {ctx.fmt_date(days[-1])}")
    if not grid:
        ctx.echo("No time tracked.")
        return EXIT_OK

    def cell(seconds: int) -> str:
        return durations.format_duration(seconds, "decimal") if seconds else "."

    columns = [Column(args.by.capitalize(), flex=True)]
    columns += [Column(day.strftime("%a"), "right") for day in days]
    columns.append(Column("Total", "right"))
    rows = []
    for key in sorted(grid):
        per_day = grid[key]
        rows.append([key] + [cell(per_day.get(day, 0)) for day in days] + [cell(sum(per_day.values()))])
    day_totals = [sum(grid[key].get(day, 0) for key in grid) for day in days]
    rows.append(["Total"] + [cell(v) for v in day_totals] + [cell(sum(day_totals))])
    ctx.echo(render_table(columns, rows, width=ctx.width()))
    return EXIT_OK


# ---------------------------------------------------------------------------
# maintenance: check / renumber / backup / restore / migrate
# ---------------------------------------------------------------------------

def setup_check(parser):
    parser.add_argument("--fix", action="store_true", help="repair what can be repaired")


def find_problems(db: Database) -> list[tuple[str, object]]:
    """Integrity problems as ``(kind, subject)`` pairs."""
    problems = []
    ids = {task.id for task in db.tasks}
    seen_uuids = {}
    for task in db.tasks:
        for dep_id in task.depends:
            if dep_id not in ids:
                problems.append(("dangling-dependency", (task.id, dep_id)))
        if task.recur and task.due is None:
            problems.append(("recurring-without-due", task.id))
        if task.is_done and task.completed is None:
            problems.append(("done-without-completion-time", task.id))
        if task.is_pending and task.completed is not None:
            problems.append(("pending-with-completion-time", task.id))
        if task.uuid in seen_uuids:
            problems.append(("duplicate-uuid", (seen_uuids[task.uuid], task.id)))
        seen_uuids[task.uuid] = task.id
    running = [entry for entry in db.entries if entry.running]
    for entry in running[:-1]:
        problems.append(("several-running-timers", entry.id))
    for entry in db.entries:
        if entry.task_id not in ids:
            problems.append(("orphan-entry", entry.id))
        if entry.end is not None and entry.end < entry.start:
            problems.append(("negative-entry", entry.id))
    return problems


def cmd_check(ctx: Context, args) -> int:
    """Look for inconsistencies in the data and optionally fix them."""
    problems = find_problems(ctx.db)
    if not problems:
        ctx.echo("No problems found.")
        return EXIT_OK
    for kind, subject in problems:
        ctx.echo(f"{kind}: {subject}")
    if not args.fix:
        ctx.echo(f"\n{plural(len(problems), 'problem')} found; run `taskcli check --fix` to repair.")
        return EXIT_FAILURE
    fixed = 0
    for kind, subject in problems:
        if kind == "dangling-dependency":
            task_id, dep_id = subject
            ctx.db.task(task_id).depends.remove(dep_id)
        elif kind == "recurring-without-due":
            ctx.db.task(subject).recur = None
        elif kind == "done-without-completion-time":
            task = ctx.db.task(subject)
            task.completed = task.modified or task.created
        elif kind == "pending-with-completion-time":
            ctx.db.task(subject).completed = None
        elif kind == "duplicate-uuid":
            ctx.db.task(subject[1]).uuid = Task(id=0, description="", created=ctx.now).uuid
        elif kind == "several-running-timers":
            entry = next(e for e in ctx.db.entries if e.id == subject)
            entry.end = entry.start
        elif kind == "orphan-entry":
            ctx.db.remove_entry(subject)
        elif kind == "negative-entry":
            entry = next(e for e in ctx.db.entries if e.id == subject)
            entry.start, entry.end = entry.end, entry.start
        else:
            continue
        fixed += 1
    ctx.changed()
    ctx.echo(f"\nFixed {plural(fixed, 'problem')}.")
    return EXIT_OK


def setup_renumber(parser):
    parser.add_argument("-n", "--dry-run", action="store_true", help="show the new numbering only")


def cmd_renumber(ctx: Context, args) -> int:
    """Give pending tasks the ids 1..N (in current id order); done tasks follow.

    Dependencies and time entries are updated; the undo history is cleared
    because its ids would no longer match.
    """
    ordered = sorted(ctx.db.tasks, key=lambda t: (t.is_done, t.id))
    mapping = {task.id: number for number, task in enumerate(ordered, start=1)}
    moves = {old: new for old, new in mapping.items() if old != new}
    if not moves:
        ctx.echo("Ids are already compact.")
        return EXIT_OK
    for old, new in sorted(moves.items()):
        ctx.echo(f"{old} -> {new}")
    if args.dry_run:
        return EXIT_OK
    for task in ctx.db.tasks:
        task.id = mapping[task.id]
        task.depends = [mapping[d] for d in task.depends if d in mapping]
    for entry in ctx.db.entries:
        entry.task_id = mapping.get(entry.task_id, entry.task_id)
    ctx.db.tasks.sort(key=lambda t: t.id)
    ctx.db.next_task_id = len(ctx.db.tasks) + 1
    ctx.db.journal.clear()
    ctx.changed()
    ctx.echo(f"Renumbered {plural(len(moves), 'task')}.")
    return EXIT_OK


def setup_backup(parser):
    parser.add_argument("--dir", help="backup directory (default: DATA_DIR/backups)")
    parser.add_argument("--keep", type=int, default=10, help="how many backups to keep")
    parser.add_argument("--list", action="store_true", help="list existing backups")


def _backup_dir(ctx: Context, option: str | None) -> Path:
    return Path(option).expanduser() if option else ctx.data_dir / "backups"


def cmd_backup(ctx: Context, args) -> int:
    """Copy the data file to a timestamped backup and prune old backups."""
    folder = _backup_dir(ctx, args.dir)
    if args.list:
        backups = sorted(folder.glob("tasks-*")) if folder.exists() else []
        if not backups:
            ctx.echo("No backups.")
        for path in backups:
            ctx.echo(f"{path.name}  {path.stat().st_size} bytes")
        return EXIT_OK
    if not ctx.store.exists():
        raise CLIError("there is no data to back up yet")
    if args.keep < 1:
        raise UsageError("--keep must be at least 1")
    folder.mkdir(parents=True, exist_ok=True)
    suffix = ctx.store.path.suffix
    target = folder / f"tasks-{ctx.now:%Y%m%d-%H%M%S}{suffix}"
    counter = 1
    while target.exists():
        target = folder / f"tasks-{ctx.now:%Y%m%d-%H%M%S}-{counter}{suffix}"
        counter += 1
    shutil.copy2(ctx.store.path, target)
    ctx.echo(f"Backed up to {target}")
    backups = sorted(folder.glob(f"tasks-*{suffix}"))
    for old in backups[: max(0, len(backups) - args.keep)]:
        old.unlink()
        ctx.echo(f"Removed old backup {old.name}")
    return EXIT_OK


def setup_restore(parser):
    parser.add_argument("file", help="backup file to restore")
    parser.add_argument("--yes", action="store_true", help="overwrite the current data")


def cmd_restore(ctx: Context, args) -> int:
    """Replace the current data with a backup (the current file is backed up first)."""
    source = Path(args.file).expanduser()
    if not source.exists():
        candidate = _backup_dir(ctx, None) / args.file
        if not candidate.exists():
            raise CLIError(f"{args.file} does not exist")
        source = candidate
    if source.suffix != ctx.store.path.suffix:
        raise CLIError(f"{source.name} is not a {ctx.backend} backup")
    probe = (JsonStore if ctx.backend == "json" else SqliteStore)(ctx.data_dir)
    probe.path = source
    try:
        restored = probe.load()
    except StorageError as exc:
        raise CLIError(f"cannot restore: {exc}", EXIT_STORAGE) from exc
    if ctx.store.exists() and not args.yes:
        raise CLIError("this replaces your current data; run again with --yes")
    if ctx.store.exists():
        safety = ctx.data_dir / f"before-restore-{ctx.now:%Y%m%d-%H%M%S}{source.suffix}"
        shutil.copy2(ctx.store.path, safety)
        ctx.echo(f"Saved current data to {safety.name}")
    ctx.store.save(restored)
    ctx._db = None
    ctx.echo(f"Restored {plural(len(restored.tasks), 'task')} and "
             f"{plural(len(restored.entries), 'time entry', 'time entries')} from {source.name}")
    return EXIT_OK


def setup_migrate(parser):
    parser.add_argument("--to", required=True, choices=BACKENDS, help="target backend")


def cmd_migrate(ctx: Context, args) -> int:
    """Copy all data to another storage backend and make it the default."""
    if args.to == ctx.backend:
        ctx.echo(f"Already using the {args.to} backend.")
        return EXIT_OK
    target = open_store(ctx.data_dir, args.to)
    if target.exists():
        raise CLIError(f"{target.path} already exists; move it away first")
    target.save(ctx.db)
    ctx.config.set("store", args.to)
    ctx.config.save()
    ctx.echo(f"Copied {plural(len(ctx.db.tasks), 'task')} to {target.path}; the {ctx.backend} file was left in place.")
    return EXIT_OK


# ---------------------------------------------------------------------------
# review
# ---------------------------------------------------------------------------

def setup_review(parser):
    parser.add_argument("--days", type=int, default=7, help="length of the review period")


def cmd_review(ctx: Context, args) -> int:
    """What happened in the last days: completed, created, overdue and tracked time."""
    if args.days < 1:
        raise UsageError("--days must be at least 1")
    since = ctx.now - timedelta(days=args.days)
    completed = [t for t in ctx.db.tasks if t.completed and t.completed >= since]
    created = [t for t in ctx.db.tasks if t.created >= since]
    overdue = [t for t in ctx.db.tasks if t.is_overdue(ctx.today) and not t.archived]
    stale = [t for t in ctx.db.tasks if t.is_pending and not t.archived and t.due is None
             and (t.modified or t.created) < ctx.now - timedelta(days=30)]
    tracked = sum(e.duration(ctx.now) for e in ctx.db.entries if e.start >= since)

    def section(title: str, tasks: list[Task]) -> None:
        ctx.echo(f"{title} ({len(tasks)})")
        for task in sorted(tasks, key=lambda t: t.id)[:10]:
            ctx.echo(f"  {task.id:>4}  {truncate(task.description, 60)}")
        if len(tasks) > 10:
            ctx.echo(f"  ... and {len(tasks) - 10} more")

    ctx.echo(ctx.paint(f"Review of the last {plural(args.days, 'day')}", "bold"))
    section("Completed", completed)
    section("Created", created)
    section("Overdue", overdue)
    section("Untouched for 30 days", stale)
    ctx.echo(f"Tracked: {durations.format_duration(tracked)}")
    return EXIT_OK


# ---------------------------------------------------------------------------
# recurring
# ---------------------------------------------------------------------------

def setup_recurring(parser):
    parser.add_argument("--upcoming", type=int, default=3, metavar="N", help="show the next N due dates")


def cmd_recurring(ctx: Context, args) -> int:
    """List recurring tasks with their rule and upcoming due dates."""
    recurring = sorted((t for t in ctx.db.tasks if t.recur and t.is_pending and not t.archived),
                       key=lambda t: (t.due or date.max, t.id))
    if not recurring:
        ctx.echo("No recurring tasks.")
        return EXIT_OK
    rows = []
    for task in recurring:
        upcoming, current = [], task.due
        for _ in range(max(0, args.upcoming)):
            current = dates.next_occurrence(current, task.recur)
            upcoming.append(ctx.fmt_date(current))
        rows.append([str(task.id), task.description, task.recur, ctx.fmt_date(task.due), ", ".join(upcoming)])
    columns = [Column("ID", "right"), Column("Description", flex=True), Column("Rule"),
               Column("Due"), Column("Then", flex=True)]
    ctx.echo(render_table(columns, rows, width=ctx.width()))
    return EXIT_OK


# ---------------------------------------------------------------------------
# retime / burndown / today
# ---------------------------------------------------------------------------

def setup_retime(parser):
    parser.add_argument("entry_id", type=int, help="time entry id (see `entries`)")
    parser.add_argument("--start", help="new start time, e.g. 09:15 or '2024-05-06 09:15'")
    parser.add_argument("--end", help="new end time")
    parser.add_argument("--duration", help="new length (keeps the start, moves the end)")
    parser.add_argument("--task", type=int, help="move the entry to another task")
    parser.add_argument("-n", "--note", help="replace the note")


def cmd_retime(ctx: Context, args) -> int:
    """Correct a time entry's start, end, length, task or note."""
    entry = next((e for e in ctx.db.entries if e.id == args.entry_id), None)
    if entry is None:
        raise CLIError(f"no time entry with id {args.entry_id}")
    if args.end and args.duration:
        raise UsageError("give either --end or --duration, not both")
    reference = datetime.combine(entry.start.date(), datetime.min.time())
    changes = []
    if args.start:
        try:
            new_start = dates.parse_datetime(args.start, reference=reference)
        except dates.DateParseError as exc:
            raise UsageError(str(exc)) from exc
        length = None if entry.running else entry.duration()
        entry.start = new_start
        if length is not None and not args.end and not args.duration:
            entry.end = new_start + timedelta(seconds=length)
        changes.append(f"start {new_start:%Y-%m-%d %H:%M}")
    if args.end:
        try:
            new_end = dates.parse_datetime(args.end, reference=datetime.combine(entry.start.date(),
                                                                                 datetime.min.time()))
        except dates.DateParseError as exc:
            raise UsageError(str(exc)) from exc
        if new_end < entry.start:
            raise UsageError("the end is before the start")
        entry.end = new_end
        changes.append(f"end {new_end:%H:%M}")
    if args.duration:
        seconds = parse_duration_arg(args.duration)
        if seconds <= 0:
            raise UsageError("the duration must be positive")
        entry.end = entry.start + timedelta(seconds=seconds)
        changes.append(f"length {durations.format_duration(seconds)}")
    if entry.end is not None:
        entry.seconds = int((entry.end - entry.start).total_seconds())
    if args.task is not None:
        get_tasks(ctx, [args.task])
        entry.task_id = args.task
        changes.append(f"task {args.task}")
    if args.note is not None:
        entry.note = args.note
        changes.append("note")
    if not changes:
        raise UsageError("nothing to change; use --start, --end, --duration, --task or --note")
    ctx.changed()
    ctx.echo(f"Entry {entry.id}: " + ", ".join(changes))
    return EXIT_OK


def setup_burndown(parser):
    parser.add_argument("--days", type=int, default=14, help="how many days back")
    parser.add_argument("-p", "--project", help="only tasks in PROJECT")


def cmd_burndown(ctx: Context, args) -> int:
    """Open tasks at the end of each day, reconstructed from creation and completion times."""
    if args.days < 1:
        raise UsageError("--days must be at least 1")
    project = parse_project_arg(args.project) if args.project else None
    tasks = [t for t in ctx.db.tasks if not project or t.in_project(project)]
    first = ctx.today - timedelta(days=args.days - 1)
    counts = []
    for day in dates.iter_days(first, ctx.today):
        open_count = 0
        for task in tasks:
            if task.created.date() > day:
                continue
            if task.is_done and task.completed is not None and task.completed.date() <= day:
                continue
            open_count += 1
        counts.append((day, open_count))
    peak = max(count for _, count in counts)
    for day, count in counts:
        ctx.echo(f"{day.strftime('%a %m-%d')}  {count:>4} {bar(count, peak, 40)}")
    change = counts[-1][1] - counts[0][1]
    trend = "up" if change > 0 else "down" if change < 0 else "flat"
    ctx.echo(f"\n{trend} {abs(change)} over {plural(args.days, 'day')}")
    return EXIT_OK


def setup_today(parser):
    pass


def cmd_today(ctx: Context, args) -> int:
    """A one-screen summary: running timer, overdue, due today, done today and time tracked."""
    running = ctx.db.running_entry()
    visible = [t for t in ctx.db.tasks if not t.archived]
    overdue = sorted((t for t in visible if t.is_overdue(ctx.today)), key=lambda t: (t.due, t.id))
    due_today = sorted((t for t in visible if t.is_pending and t.due == ctx.today), key=_agenda_order)
    done_today = [t for t in visible if t.completed and t.completed.date() == ctx.today]
    tracked = sum(e.duration(ctx.now) for e in ctx.db.entries if e.start.date() == ctx.today)
    ctx.echo(ctx.paint(f"{ctx.today.strftime('%A')} {ctx.fmt_date(ctx.today)}", "bold"))
    if running is not None:
        task = ctx.db.find_task(running.task_id)
        ctx.echo(f"Timer: #{running.task_id} {task.description if task else '?'} "
                 f"({durations.format_duration(running.duration(ctx.now))})")
    for title, tasks in (("Overdue", overdue), ("Due today", due_today)):
        if tasks:
            ctx.echo(f"{title}:")
            for task in tasks:
                ctx.echo(f"  {task.id:>4}  {task.description}")
    ctx.echo(f"Done today: {len(done_today)}   Tracked today: {durations.format_duration(tracked)}")
    return EXIT_OK


# ---------------------------------------------------------------------------
# help topics, command list, shell completion, version
# ---------------------------------------------------------------------------

HELP_TOPICS = {
    "dates": """\
Dates (--due, --date, --from, --to, filters such as due.before:DATE)

  2024-05-10          an ISO date
  today, tomorrow, yesterday
  +3d  -1w  +2m  +1y  offsets from today (days, weeks, months, years)
  in 3 days           same as +3d; also "in 2 weeks", "in 1 month"
  2 weeks ago         same as -2w
  friday, fri         the coming Friday; today if today is a Friday
  next friday         the first Friday strictly after today
  eow, eom, eoy       end of this week (Sunday), month or year

Times (--at) accept 09:30, 17:05:10, 9am, 5:30pm, "yesterday 16:00" or an
ISO timestamp.  Set TASKCLI_NOW=2024-05-08T10:00 to pin the current time.
""",
    "durations": """\
Durations (log, --estimate, --round, archive --older-than)

  45m  2h  1h30m  1h 30m  2d4h  1w     units: w d h m s (and long names)
  1.5h  0.25h  2.5d                    fractions are allowed on every unit
  1:30  0:45:30                        clock notation, hours:minutes[:seconds]
  25                                   a bare number means minutes

Everything is stored in whole seconds.  Reports show H:MM and decimal hours.
""",
    "filters": """\
Filters (list, count, export)

  project:work        tasks in project work and its sub-projects (work.ops)
  +urgent  -someday   with / without a tag
  pri:H               priority (H, M, L, or none)
  status:done         pending (default), done or all
  due:friday          due on that day; due:none / due:any
  due.before:DATE     due strictly before DATE; due.after:DATE
  blocked:yes         waiting for another pending task
  words               every other word must appear in the description

All conditions must hold.  The same filters exist as options: --project,
--tag, --exclude-tag, --priority, --status, --due-before, --due-after.
""",
    "recurrence": """\
Recurrence (add --recur, edit --recur)

  daily, weekly, biweekly, monthly, quarterly, yearly
  every 3 days, every 2w, 10d

A recurring task needs a due date.  Completing it creates a copy due at the
next occurrence after today; monthly rules keep the day of month where the
month is long enough (Jan 31 -> Feb 29 -> Mar 31).
""",
    "storage": """\
Storage

Data lives in the directory given by --data-dir, else $TASKCLI_DIR, else
$XDG_DATA_HOME/taskcli (~/.local/share/taskcli).  The backend is JSON
(tasks.json) or SQLite (tasks.db), chosen by --store or the `store` setting;
`taskcli migrate --to sqlite` copies the data across.  Every change is
journalled so that `taskcli undo` can revert it; `taskcli backup` keeps
timestamped copies.
""",
}


def setup_help(parser):
    parser.add_argument("topic", nargs="?", help=f"one of: {', '.join(HELP_TOPICS)} or a command name")


def cmd_help(ctx: Context, args) -> int:
    """Explain date, duration and filter syntax, or show a command's help."""
    if not args.topic:
        ctx.echo("Help topics: " + ", ".join(HELP_TOPICS))
        ctx.echo("Commands:    taskcli commands")
        return EXIT_OK
    topic = args.topic.lower()
    if topic in HELP_TOPICS:
        ctx.out.write(HELP_TOPICS[topic])
        return EXIT_OK
    spec = COMMAND_INDEX.get(topic)
    if spec is None:
        raise UsageError(f"no help for {args.topic!r}")
    parser = build_parser()
    subparser = parser._subparsers._group_actions[0].choices[spec.name]
    ctx.out.write(subparser.format_help())
    return EXIT_OK


def setup_commands(parser):
    parser.add_argument("--names", action="store_true", help="only the names, one per line")


def cmd_commands(ctx: Context, args) -> int:
    """List every command with a one-line description."""
    for spec in COMMANDS:
        if args.names:
            ctx.echo(spec.name)
            continue
        aliases = f" ({', '.join(spec.aliases)})" if spec.aliases else ""
        ctx.echo(f"  {spec.name + aliases:<24} {spec.summary}")
    return EXIT_OK


_BASH_COMPLETION = """\
# bash completion for taskcli; load with: eval "$(taskcli completion bash)"
_taskcli() {
    local cur prev words cword
    _init_completion 2>/dev/null || { cur="${COMP_WORDS[COMP_CWORD]}"; prev="${COMP_WORDS[COMP_CWORD-1]}"; }
    local commands="%(commands)s"
    if [[ $COMP_CWORD -eq 1 ]]; then
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        return
    fi
    case "$prev" in
        --project|-p) COMPREPLY=($(compgen -W "$(taskcli projects --all 2>/dev/null | awk 'NR>2 {print $1}')" -- "$cur")); return ;;
        --tag|-t|--add-tag|--remove-tag) COMPREPLY=($(compgen -W "$(taskcli tags --all 2>/dev/null | awk 'NR>2 {print $1}')" -- "$cur")); return ;;
        --format|-f) COMPREPLY=($(compgen -W "table plain json ids csv ical timesheet toggl" -- "$cur")); return ;;
        --sort|-s) COMPREPLY=($(compgen -W "%(sort_fields)s" -- "$cur")); return ;;
    esac
    COMPREPLY=($(compgen -W "$(taskcli list --format ids 2>/dev/null)" -- "$cur"))
}
complete -F _taskcli taskcli
"""

_ZSH_COMPLETION = """\
#compdef taskcli
# zsh completion for taskcli; load with: eval "$(taskcli completion zsh)"
_taskcli() {
    local -a commands
    commands=(
%(described)s
    )
    if (( CURRENT == 2 )); then
        _describe 'command' commands
    else
        _values 'task id' $(taskcli list --format ids 2>/dev/null)
    fi
}
compdef _taskcli taskcli
"""

_FISH_COMPLETION = """\
# fish completion for taskcli; load with: taskcli completion fish | source
complete -c taskcli -f
%(lines)s
"""


def setup_completion(parser):
    parser.add_argument("shell", choices=("bash", "zsh", "fish"), help="target shell")


def cmd_completion(ctx: Context, args) -> int:
    """Print a shell completion script."""
    names = [spec.name for spec in COMMANDS] + [a for spec in COMMANDS for a in spec.aliases]
    if args.shell == "bash":
        script = _BASH_COMPLETION % {"commands": " ".join(sorted(names)), "sort_fields": " ".join(SORT_FIELDS)}
    elif args.shell == "zsh":
        described = "\n".join(f"        '{spec.name}:{spec.summary.replace(chr(39), '')}'" for spec in COMMANDS)
        script = _ZSH_COMPLETION % {"described": described}
    else:
        lines = "\n".join(
            f"complete -c taskcli -n '__fish_use_subcommand' -a {spec.name} -d '{spec.summary.replace(chr(39), '')}'"
            for spec in COMMANDS)
        script = _FISH_COMPLETION % {"lines": lines}
    ctx.out.write(script)
    return EXIT_OK


def setup_version(parser):
    pass


def cmd_version(ctx: Context, args) -> int:
    """Print the version, the data directory and the backend in use."""
    ctx.echo(f"taskcli {__version__}")
    ctx.echo(f"data directory: {ctx.data_dir}")
    ctx.echo(f"storage backend: {ctx.backend}")
    return EXIT_OK


# ---------------------------------------------------------------------------
# Command registry and parser
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class CommandSpec:
    name: str
    setup: object
    run: object
    summary: str
    aliases: tuple = ()
    reads_only: bool = False


COMMANDS = [
    CommandSpec("init", setup_init, cmd_init, "create the data directory and an empty store"),
    CommandSpec("add", setup_add, cmd_add, "create a task", ("a",)),
    CommandSpec("list", setup_list, cmd_list, "list tasks matching filters", ("ls",), True),
    CommandSpec("show", setup_show, cmd_show, "show every field of tasks", ("info",), True),
    CommandSpec("edit", setup_edit, cmd_edit, "change fields of tasks", ("modify", "mod")),
    CommandSpec("done", setup_done, cmd_done, "mark tasks done", ("do", "complete")),
    CommandSpec("reopen", setup_reopen, cmd_reopen, "set done tasks back to pending"),
    CommandSpec("undo", setup_undo, cmd_undo, "revert the last change"),
    CommandSpec("history", setup_history, cmd_history, "list changes that undo can revert", (), True),
    CommandSpec("delete", setup_delete, cmd_delete, "delete tasks", ("rm",)),
    CommandSpec("tag", setup_tag, cmd_tag, "add tags to tasks"),
    CommandSpec("untag", setup_untag, cmd_untag, "remove tags from tasks"),
    CommandSpec("tags", setup_tags, cmd_tags, "list or rename tags"),
    CommandSpec("projects", setup_projects, cmd_projects, "list projects", (), True),
    CommandSpec("move", setup_move, cmd_move, "move tasks to another project", ("mv",)),
    CommandSpec("rename-project", setup_rename_project, cmd_rename_project, "rename a project and its sub-projects"),
    CommandSpec("search", setup_search, cmd_search, "find tasks by text or regex", ("grep",), True),
    CommandSpec("note", setup_note, cmd_note, "add, list or delete notes", ("annotate",)),
    CommandSpec("duplicate", setup_duplicate, cmd_duplicate, "copy a task", ("dup",)),
    CommandSpec("snooze", setup_snooze, cmd_snooze, "push due dates back"),
    CommandSpec("deps", setup_deps, cmd_deps, "show a task's dependency tree", (), True),
    CommandSpec("start", setup_start, cmd_start, "start a timer on a task"),
    CommandSpec("stop", setup_stop, cmd_stop, "stop the running timer"),
    CommandSpec("status", setup_status, cmd_status, "show the running timer", (), True),
    CommandSpec("cancel", setup_cancel, cmd_cancel, "discard the running timer"),
    CommandSpec("log", setup_log, cmd_log, "record time spent after the fact"),
    CommandSpec("entries", setup_entries, cmd_entries, "list time entries", (), True),
    CommandSpec("unlog", setup_unlog, cmd_unlog, "delete time entries"),
    CommandSpec("retime", setup_retime, cmd_retime, "correct a time entry"),
    CommandSpec("report", setup_report, cmd_report, "tracked time per project, task, tag or day", (), True),
    CommandSpec("timesheet", setup_timesheet, cmd_timesheet, "week grid of tracked time", (), True),
    CommandSpec("estimates", setup_estimates, cmd_estimates, "compare estimates with tracked time", (), True),
    CommandSpec("export", setup_export, cmd_export, "write tasks as JSON, CSV or iCalendar", (), True),
    CommandSpec("import", setup_import, cmd_import, "read tasks from JSON, CSV or Toggl"),
    CommandSpec("archive", setup_archive, cmd_archive, "hide old completed tasks"),
    CommandSpec("unarchive", setup_unarchive, cmd_unarchive, "restore archived tasks"),
    CommandSpec("purge", setup_purge, cmd_purge, "delete archived tasks for good"),
    CommandSpec("stats", setup_stats, cmd_stats, "counts, completion rate and streak", (), True),
    CommandSpec("review", setup_review, cmd_review, "what happened in the last days", (), True),
    CommandSpec("burndown", setup_burndown, cmd_burndown, "open tasks per day", (), True),
    CommandSpec("today", setup_today, cmd_today, "summary of today", (), True),
    CommandSpec("count", setup_count, cmd_count, "count matching tasks", (), True),
    CommandSpec("agenda", setup_agenda, cmd_agenda, "tasks due in the coming days", (), True),
    CommandSpec("next", setup_next, cmd_next, "the most urgent tasks", (), True),
    CommandSpec("calendar", setup_calendar, cmd_calendar, "month calendar with due dates", ("cal",), True),
    CommandSpec("recurring", setup_recurring, cmd_recurring, "recurring tasks and their next dates", (), True),
    CommandSpec("config", setup_config, cmd_config, "show or change settings"),
    CommandSpec("check", setup_check, cmd_check, "find and fix data problems"),
    CommandSpec("renumber", setup_renumber, cmd_renumber, "compact task ids"),
    CommandSpec("backup", setup_backup, cmd_backup, "copy the data file to a backup", (), True),
    CommandSpec("restore", setup_restore, cmd_restore, "restore a backup"),
    CommandSpec("migrate", setup_migrate, cmd_migrate, "move data to another backend", (), True),
    CommandSpec("help", setup_help, cmd_help, "help on dates, durations, filters", (), True),
    CommandSpec("commands", setup_commands, cmd_commands, "list commands", (), True),
    CommandSpec("completion", setup_completion, cmd_completion, "print a shell completion script", (), True),
    CommandSpec("version", setup_version, cmd_version, "print version information", (), True),
]

COMMAND_INDEX = {}
for _spec in COMMANDS:
    COMMAND_INDEX[_spec.name] = _spec
    for _alias in _spec.aliases:
        COMMAND_INDEX[_alias] = _spec


@functools.lru_cache(maxsize=1)
def build_parser() -> argparse.ArgumentParser:
    """The full argument parser (built once per process; it is never modified after)."""
    parser = _ArgumentParser(
        prog="taskcli",
        description="Tasks and time tracking on the command line.",
        epilog="Run `taskcli help dates`, `taskcli help filters` or `taskcli help durations` for input syntax.",
    )
    parser.add_argument("--data-dir", metavar="DIR", help="data directory (default: $TASKCLI_DIR or ~/.local/share/taskcli)")
    parser.add_argument("--store", choices=BACKENDS, help="storage backend (default: config `store`)")
    color = parser.add_mutually_exclusive_group()
    color.add_argument("--color", dest="color", action="store_const", const="always", help="force colour")
    color.add_argument("--no-color", dest="color", action="store_const", const="never", help="disable colour")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log what taskcli does (-vv for more)")
    parser.add_argument("--version", action="version", version=f"taskcli {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_ArgumentParser)
    for spec in COMMANDS:
        command_parser = sub.add_parser(spec.name, aliases=list(spec.aliases), help=spec.summary,
                                        description=(spec.run.__doc__ or spec.summary).strip().splitlines()[0])
        spec.setup(command_parser)
        command_parser.set_defaults(spec=spec)
    return parser


def _use_color(setting: str, option: str | None, stream) -> bool:
    choice = option or setting
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    return hasattr(stream, "isatty") and stream.isatty()


def _configure_logging(verbosity: int) -> None:
    if verbosity <= 0:
        log.setLevel(logging.WARNING)
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("taskcli: %(levelname)s: %(message)s"))
    log.handlers[:] = [handler]
    log.setLevel(logging.DEBUG if verbosity > 1 else logging.INFO)


def main(argv: list[str] | None = None) -> int:
    """Run taskcli with ``argv`` (default: ``sys.argv[1:]``) and return the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    out, err = sys.stdout, sys.stderr
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except UsageError as exc:
        print(f"taskcli: error: {exc}", file=err)
        return EXIT_USAGE
    except SystemExit as exc:  # --help and --version
        return int(exc.code or 0)
    _configure_logging(args.verbose)
    if not args.command:
        parser.print_help(out)
        return EXIT_USAGE

    data_dir = resolve_data_dir(args.data_dir)
    try:
        config = Config.load(data_dir)
        backend = args.store or config.get("store")
        ctx = Context(data_dir=data_dir, config=config, backend=backend, out=out, err=err,
                      color=_use_color(config.get("color"), args.color, out))
        log.info("data directory %s (%s)", data_dir, backend)
        code = args.spec.run(ctx, args)
        ctx.save()
        return code
    except CLIError as exc:
        print(f"taskcli: error: {exc}", file=err)
        return exc.code
    except (ConfigError, dates.DateParseError, durations.DurationError) as exc:
        print(f"taskcli: error: {exc}", file=err)
        return EXIT_USAGE
    except StorageError as exc:
        print(f"taskcli: error: {exc}", file=err)
        return EXIT_STORAGE
    except NotFound as exc:
        print(f"taskcli: error: {exc}", file=err)
        return EXIT_FAILURE
