def task(tc, task_id):
    return next(t for t in tc.data()["tasks"] if t["id"] == task_id)


def test_edit_changes_fields_and_reports_them(tc):
    tc.add("Draft", "-p", "work")
    result = tc("edit", "1", "-D", "Draft proposal", "-P", "M", "--due", "2024-05-30")
    assert "description: Draft -> Draft proposal" in result.out
    data = task(tc, 1)
    assert data["description"] == "Draft proposal"
    assert data["priority"] == "M"
    assert data["due"] == "2024-05-30"
    assert data["modified"] == "2024-05-08T10:00:00"


def test_edit_clears_fields_with_none(tc):
    tc.add("Draft", "-p", "work", "--due", "2024-05-30", "-P", "H")
    tc("edit", "1", "--due", "none", "--project", "none", "--priority", "none")
    data = task(tc, 1)
    assert (data["due"], data["project"], data["priority"]) == (None, None, None)


def test_edit_several_tasks_by_range(tc):
    for name in ("a", "b", "c", "d"):
        tc.add(name)
    tc("edit", "2-3", "--add-tag", "batch")
    assert [t["tags"] for t in tc.data()["tasks"]] == [[], ["batch"], ["batch"], []]


def test_edit_without_changes_is_usage_error(tc):
    tc.add("a")
    assert "nothing to change" in tc("edit", "1", expect=2).err


def test_edit_unknown_id(tc):
    tc.add("a")
    assert "no task with id 4, 5" in tc("edit", "4,5", "-P", "H", expect=1).err


def test_edit_rejects_dependency_cycle(tc):
    tc.add("a")
    tc.add("b", "--depends", "1")
    assert "cycle" in tc("edit", "1", "--depends", "2", expect=1).err


def test_tag_and_untag(tc):
    tc.add("a")
    tc.add("b", "-t", "old")
    tc("tag", "1,2", "new", "+shiny")
    assert task(tc, 2)["tags"] == ["new", "old", "shiny"]
    tc("untag", "2", "old")
    assert task(tc, 2)["tags"] == ["new", "shiny"]
    assert "No tags removed." in tc("untag", "1", "old").out


def test_tags_lists_counts_and_renames(tc):
    tc.add("a", "-t", "x,y")
    tc.add("b", "-t", "x")
    out = tc("tags").out
    assert out.splitlines()[2].split() == ["x", "2"]
    tc("tags", "--rename", "x", "z")
    assert task(tc, 1)["tags"] == ["y", "z"]


def test_move_and_rename_project(tc):
    tc.add("a", "-p", "work")
    tc.add("b", "-p", "work.ops")
    tc.add("c")
    tc("move", "3", "--to", "work")
    tc("rename-project", "work", "job")
    assert [t["project"] for t in tc.data()["tasks"]] == ["job", "job.ops", "job"]


def test_projects_listing(tc):
    tc.add("a", "-p", "work")
    tc.add("b", "-p", "work.ops")
    tc.add("c", "-p", "home")
    rows = tc("projects").lines[2:]
    assert [r.split() for r in rows] == [["home", "1"], ["work", "1"], ["work.ops", "1"]]


def test_note_add_list_delete(tc):
    tc.add("a")
    tc("note", "1", "first", "thought")
    tc("note", "1", "second")
    assert "2. 2024-05-08 10:00  second" in tc("note", "1", "--list").out
    tc("note", "1", "--delete", "1")
    assert [n["text"] for n in task(tc, 1)["notes"]] == ["second"]


def test_delete_removes_task_entries_and_dependencies(tc):
    tc.add("a")
    tc.add("b", "--depends", "1")
    tc("log", "1", "30m")
    tc("delete", "1")
    data = tc.data()
    assert [t["id"] for t in data["tasks"]] == [2]
    assert data["tasks"][0]["depends"] == []
    assert data["entries"] == []


def test_delete_many_needs_confirmation(tc):
    tc.add("a")
    tc.add("b")
    assert "confirmation" in tc("delete", "1,2", expect=1).err
    tc("delete", "1,2", "--yes")
    assert tc.data()["tasks"] == []


def test_duplicate_copies_fields(tc):
    tc.add("Weekly sync notes", "-p", "work", "-t", "meeting", "--due", "2024-05-09")
    tc("duplicate", "1", "--due", "2024-05-16")
    copy = task(tc, 2)
    assert copy["description"] == "Weekly sync notes"
    assert copy["tags"] == ["meeting"]
    assert copy["due"] == "2024-05-16"
    assert copy["uuid"] != task(tc, 1)["uuid"]


def test_search_plain_and_regex(tc):
    tc.add("Fix login bug")
    tc.add("Write LOGIN docs")
    tc.add("Other")
    out = tc("search", "login").out
    assert "Fix login bug" in out and "Write LOGIN docs" in out and "2 matches." in out
    assert "1 match." in tc("search", "--regex", "^Fix").out
    assert tc("search", "nothing", expect=1).out.strip() == "No matches."


def test_search_notes(tc):
    tc.add("Trip")
    tc("note", "1", "remember the passport")
    assert "note 2024-05-08: remember the passport" in tc("search", "passport", "--notes").out


def test_deps_tree(tc):
    tc.add("Release")
    tc.add("Tests", "--depends", "1")
    tc.add("Docs")
    tc("edit", "2", "--depends", "3")
    out = tc("deps", "2").out
    assert out.splitlines() == ["[ ] 2 Tests", "|-- [ ] 1 Release", "`-- [ ] 3 Docs"]
