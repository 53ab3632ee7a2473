import json
import sqlite3
from datetime import datetime

import pytest

from taskcli.models import Task
from taskcli.storage import Database, JsonStore, SqliteStore, StorageError, open_store, resolve_data_dir


def sample_db():
    db = Database()
    task = Task(id=db.allocate_task_id(), description="Backup laptop", created=datetime(2024, 5, 1, 9, 0),
                tags=["home"], project="chores")
    db.add_task(task)
    db.add_entry(task.id, datetime(2024, 5, 2, 10, 0), end=datetime(2024, 5, 2, 10, 30))
    return db


@pytest.mark.parametrize("store_class", [JsonStore, SqliteStore], ids=["json", "sqlite"])
def test_round_trip(tmp_path, store_class):
    store = store_class(tmp_path)
    store.save(sample_db())
    loaded = store.load()
    assert loaded.tasks[0].description == "Backup laptop"
    assert loaded.tasks[0].tags == ["home"]
    assert loaded.entries[0].duration() == 1800
    assert loaded.next_task_id == 2


def test_missing_store_loads_empty(tmp_path):
    assert JsonStore(tmp_path).load().tasks == []


def test_corrupt_json_is_storage_error(tmp_path):
    (tmp_path / "tasks.json").write_text("{not json")
    with pytest.raises(StorageError):
        JsonStore(tmp_path).load()


def test_newer_version_is_rejected(tmp_path):
    (tmp_path / "tasks.json").write_text(json.dumps({"version": 99, "tasks": []}))
    with pytest.raises(StorageError):
        JsonStore(tmp_path).load()


def test_unknown_backend():
    with pytest.raises(StorageError):
        open_store("/tmp", "xml")


def test_resolve_data_dir_precedence(tmp_path):
    env = {"TASKCLI_DIR": str(tmp_path / "env"), "XDG_DATA_HOME": str(tmp_path / "xdg")}
    assert resolve_data_dir(str(tmp_path / "opt"), env) == tmp_path / "opt"
    assert resolve_data_dir(None, env) == tmp_path / "env"
    assert resolve_data_dir(None, {"XDG_DATA_HOME": str(tmp_path / "xdg")}) == tmp_path / "xdg" / "taskcli"


def test_data_dir_from_environment(tc, monkeypatch, tmp_path, capsys):
    from taskcli.cli import main
    monkeypatch.setenv("TASKCLI_DIR", str(tmp_path / "envdir"))
    assert main(["add", "From env"]) == 0
    assert (tmp_path / "envdir" / "tasks.json").exists()


def test_sqlite_backend_via_cli(tc):
    tc("init", "--store", "sqlite")
    tc.add("In sqlite", "-t", "db")
    conn = sqlite3.connect(tc.data_dir / "tasks.db")
    rows = conn.execute("SELECT data FROM tasks").fetchall()
    conn.close()
    assert json.loads(rows[0][0])["tags"] == ["db"]
    assert "In sqlite" in tc("list").out


def test_migrate_json_to_sqlite(tc):
    tc.add("Keep me")
    tc("migrate", "--to", "sqlite")
    assert tc("config", "get", "store").out.strip() == "sqlite"
    assert "Keep me" in tc("list").out


def test_init_refuses_existing(tc):
    tc("init")
    assert "already exists" in tc("init", expect=1).err


def test_backup_and_restore(tc):
    tc.add("Original")
    backup_line = tc("backup").out.splitlines()[0]
    backup_path = backup_line.split(" to ", 1)[1]
    tc("delete", "1")
    assert "--yes" in tc("restore", backup_path, expect=1).err
    tc("restore", backup_path, "--yes")
    assert "Original" in tc("list").out


def test_check_finds_and_fixes_problems(tc):
    tc.add("a")
    tc("log", "1", "30m")
    data = tc.data()
    data["tasks"][0]["depends"] = [42]
    data["entries"][0]["task_id"] = 7
    (tc.data_dir / "tasks.json").write_text(json.dumps(data))
    out = tc("check", expect=1).out
    assert "dangling-dependency: (1, 42)" in out
    assert "orphan-entry: 1" in out
    tc("check", "--fix")
    assert tc("check").out.strip() == "No problems found."


def test_renumber_compacts_ids(tc):
    for name in "abcd":
        tc.add(name)
    tc("delete", "1")
    tc("done", "2")
    tc("renumber")
    assert [(t["id"], t["description"]) for t in tc.data()["tasks"]] == [(1, "c"), (2, "d"), (3, "b")]
