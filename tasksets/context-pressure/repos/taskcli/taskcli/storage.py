"""Persistence: an in-memory :class:`Database` plus JSON and SQLite backends.

A command loads the whole database, changes it, and saves it back.  Every
mutating command also records a :class:`JournalEntry` holding the tasks as they
were *before* the change, which is what ``taskcli undo`` restores.

The data directory is chosen, in order, from the ``--data-dir`` option, the
``TASKCLI_DIR`` environment variable, and ``~/.local/share/taskcli``.
"""

from __future__ import annotations

import copy
import json
import os
import sqlite3
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from taskcli.models import Task, TimeEntry

FORMAT_VERSION = 2
DEFAULT_UNDO_DEPTH = 20
BACKENDS = ("json", "sqlite")


class StorageError(Exception):
    """The data files are missing, unreadable, or from an unknown version."""


class NotFound(LookupError):
    """No task or entry with the requested id."""


def resolve_data_dir(option: str | None = None, environ=None) -> Path:
    """Pick the data directory from the option, ``TASKCLI_DIR`` or the default."""
    environ = os.environ if environ is None else environ
    if option:
        return Path(option).expanduser()
    if environ.get("TASKCLI_DIR"):
        return Path(environ["TASKCLI_DIR"]).expanduser()
    base = environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "taskcli"


@dataclass
class JournalEntry:
    """One undoable action: the touched tasks before it ran and the ids it created."""

    action: str
    at: datetime
    before: list[Task] = field(default_factory=list)
    created: list[int] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {
            "action": self.action,
            "at": self.at.isoformat(),
            "before": [task.to_dict() for task in self.before],
            "created": list(self.created),
        }

    @classmethod
    def from_dict(cls, data: dict) -> "JournalEntry":
        return cls(
            action=data["action"],
            at=datetime.fromisoformat(data["at"]),
            before=[Task.from_dict(t) for t in data.get("before", [])],
            created=[int(i) for i in data.get("created", [])],
        )


@dataclass
class Database:
    """Everything taskcli stores, held in memory while a command runs."""

    tasks: list[Task] = field(default_factory=list)
    entries: list[TimeEntry] = field(default_factory=list)
    journal: list[JournalEntry] = field(default_factory=list)
    next_task_id: int = 1
    next_entry_id: int = 1
    undo_depth: int = DEFAULT_UNDO_DEPTH

    # -- tasks -------------------------------------------------------------
    def task(self, task_id: int) -> Task:
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise NotFound(f"no task with id {task_id}")

    def find_task(self, task_id: int) -> Task | None:
        try:
            return self.task(task_id)
        except NotFound:
            return None

    def task_by_uuid(self, value: str) -> Task | None:
        for task in self.tasks:
            if task.uuid == value:
                return task
        return None

    def allocate_task_id(self) -> int:
        used = {task.id for task in self.tasks}
        task_id = max(self.next_task_id, max(used, default=0) + 1)
        self.next_task_id = task_id + 1
        return task_id

    def add_task(self, task: Task) -> Task:
        if self.find_task(task.id) is not None:
            raise ValueError(f"duplicate task id {task.id}")
        self.tasks.append(task)
        self.next_task_id = max(self.next_task_id, task.id + 1)
        return task

    def remove_task(self, task_id: int) -> Task:
        task = self.task(task_id)
        self.tasks.remove(task)
        return task

    def replace_task(self, task: Task) -> None:
        """Put ``task`` in place of the task with the same id (or append it)."""
        for index, existing in enumerate(self.tasks):
            if existing.id == task.id:
                self.tasks[index] = task
                return
        self.tasks.append(task)
        self.tasks.sort(key=lambda t: t.id)

    # -- time entries ------------------------------------------------------
    def add_entry(self, task_id: int, start: datetime, end: datetime | None = None,
                  seconds: int | None = None, note: str = "") -> TimeEntry:
        entry = TimeEntry(self.next_entry_id, task_id, start, end, seconds, note)
        self.next_entry_id += 1
        self.entries.append(entry)
        return entry

    def running_entry(self) -> TimeEntry | None:
        for entry in self.entries:
            if entry.running:
                return entry
        return None

    def entries_for(self, task_id: int) -> list[TimeEntry]:
        return [entry for entry in self.entries if entry.task_id == task_id]

    def remove_entry(self, entry_id: int) -> TimeEntry:
        for entry in self.entries:
            if entry.id == entry_id:
                self.entries.remove(entry)
                return entry
        raise NotFound(f"no time entry with id {entry_id}")

    # -- journal -----------------------------------------------------------
    def record(self, action: str, before=(), created=(), at: datetime | None = None) -> JournalEntry:
        """Remember the state of ``before`` tasks so ``undo`` can restore it.

        Call this *before* changing the tasks.
        """
        entry = JournalEntry(action=action, at=at or datetime.now().replace(microsecond=0),
                             before=list(before), created=list(created))
        self.journal.append(entry)
        if self.undo_depth >= 0 and len(self.journal) > self.undo_depth:
            del self.journal[: len(self.journal) - self.undo_depth]
        return entry

    def undo(self) -> JournalEntry | None:
        """Revert the most recent journal entry and return it (None if empty)."""
        if not self.journal:
            return None
        entry = self.journal.pop()
        for task_id in entry.created:
            if self.find_task(task_id) is not None:
                self.remove_task(task_id)
        for task in entry.before:
            self.replace_task(copy.deepcopy(task))
        return entry

    # -- serialisation -----------------------------------------------------
    def to_dict(self) -> dict:
        return {
            "version": FORMAT_VERSION,
            "next_task_id": self.next_task_id,
            "next_entry_id": self.next_entry_id,
            "tasks": [task.to_dict() for task in self.tasks],
            "entries": [entry.to_dict() for entry in self.entries],
            "journal": [entry.to_dict() for entry in self.journal],
        }

    @classmethod
    def from_dict(cls, data: dict) -> "Database":
        version = data.get("version", 1)
        if version > FORMAT_VERSION:
            raise StorageError(f"data file version {version} is newer than this taskcli supports")
        tasks = [Task.from_dict(t) for t in data.get("tasks", [])]
        entries = [TimeEntry.from_dict(e) for e in data.get("entries", [])]
        db = cls(tasks=tasks, entries=entries,
                 journal=[JournalEntry.from_dict(j) for j in data.get("journal", [])])
        db.next_task_id = max(int(data.get("next_task_id", 1)), max((t.id for t in tasks), default=0) + 1)
        db.next_entry_id = max(int(data.get("next_entry_id", 1)), max((e.id for e in entries), default=0) + 1)
        return db


class JsonStore:
    """A single ``tasks.json`` file, replaced atomically on every save."""

    filename = "tasks.json"

    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / self.filename

    def exists(self) -> bool:
        return self.path.exists()

    def load(self) -> Database:
        if not self.path.exists():
            return Database()
        try:
            with open(self.path, encoding="utf-8") as handle:
                data = json.load(handle)
        except json.JSONDecodeError as exc:
            raise StorageError(f"{self.path} is not valid JSON: {exc}") from exc
        return Database.from_dict(data)

    def save(self, db: Database) -> None:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tasks-", suffix=".json", dir=self.data_dir)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(db.to_dict(), handle, indent=1, sort_keys=True)
                handle.write("\n")
            os.replace(tmp, self.path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


class SqliteStore:
    """An SQLite file with one table per record type.

    Tasks and journal entries are kept as JSON documents; time entries get
    real columns so that they can be queried by other tools.
    """

    filename = "tasks.db"

    SCHEMA = """
        CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS tasks (id INTEGER PRIMARY KEY, data TEXT NOT NULL);
        CREATE TABLE IF NOT EXISTS entries (
            id INTEGER PRIMARY KEY,
            task_id INTEGER NOT NULL,
            start TEXT NOT NULL,
            end TEXT,
            seconds INTEGER,
            note TEXT NOT NULL DEFAULT ''
        );
        CREATE TABLE IF NOT EXISTS journal (seq INTEGER PRIMARY KEY, data TEXT NOT NULL);
    """

    def __init__(self, data_dir: Path):
        self.data_dir = Path(data_dir)
        self.path = self.data_dir / self.filename

    def exists(self) -> bool:
        return self.path.exists()

    def _connect(self) -> sqlite3.Connection:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path)
        conn.executescript(self.SCHEMA)
        return conn

    def load(self) -> Database:
        if not self.path.exists():
            return Database()
        conn = self._connect()
        try:
            meta = dict(conn.execute("SELECT key, value FROM meta"))
            data = {
                "version": int(meta.get("version", FORMAT_VERSION)),
                "next_task_id": int(meta.get("next_task_id", 1)),
                "next_entry_id": int(meta.get("next_entry_id", 1)),
                "tasks": [json.loads(row[0]) for row in conn.execute("SELECT data FROM tasks ORDER BY id")],
                "entries": [
                    {"id": row[0], "task_id": row[1], "start": row[2], "end": row[3],
                     "seconds": row[4], "note": row[5]}
                    for row in conn.execute(
                        "SELECT id, task_id, start, end, seconds, note FROM entries ORDER BY id")
                ],
                "journal": [json.loads(row[0]) for row in conn.execute("SELECT data FROM journal ORDER BY seq")],
            }
        except sqlite3.DatabaseError as exc:
            raise StorageError(f"cannot read {self.path}: {exc}") from exc
        finally:
            conn.close()
        return Database.from_dict(data)

    def save(self, db: Database) -> None:
        data = db.to_dict()
        conn = self._connect()
        try:
            with conn:
                conn.execute("DELETE FROM tasks")
                conn.execute("DELETE FROM entries")
                conn.execute("DELETE FROM journal")
                conn.executemany("INSERT INTO tasks (id, data) VALUES (?, ?)",
                                 [(t["id"], json.dumps(t, sort_keys=True)) for t in data["tasks"]])
                conn.executemany(
                    "INSERT INTO entries (id, task_id, start, end, seconds, note) VALUES (?, ?, ?, ?, ?, ?)",
                    [(e["id"], e["task_id"], e["start"], e["end"], e["seconds"], e["note"])
                     for e in data["entries"]])
                conn.executemany("INSERT INTO journal (seq, data) VALUES (?, ?)",
                                 [(i, json.dumps(j, sort_keys=True)) for i, j in enumerate(data["journal"])])
                conn.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", [
                    ("version", str(FORMAT_VERSION)),
                    ("next_task_id", str(data["next_task_id"])),
                    ("next_entry_id", str(data["next_entry_id"])),
                ])
        finally:
            conn.close()


def open_store(data_dir: Path, backend: str = "json"):
    """Return the store object for ``backend`` (``json`` or ``sqlite``)."""
    if backend == "json":
        return JsonStore(data_dir)
    if backend == "sqlite":
        return SqliteStore(data_dir)
    raise StorageError(f"unknown storage backend {backend!r} (choose from {', '.join(BACKENDS)})")
