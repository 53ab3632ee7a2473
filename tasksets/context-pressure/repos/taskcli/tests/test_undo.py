def task(tc, task_id):
    return next((t for t in tc.data()["tasks"] if t["id"] == task_id), None)


def test_undo_with_empty_history(tc):
    tc("list")
    assert tc("undo", expect=1).out.strip() == "Nothing to undo."


def test_undo_add_removes_task(tc):
    tc.add("a")
    tc.add("b")
    assert "Undid 'add 2'" in tc("undo").out
    assert [t["id"] for t in tc.data()["tasks"]] == [1]


def test_undo_delete_restores_task(tc):
    tc.add("a", "-t", "keep")
    tc("delete", "1")
    tc("undo")
    assert task(tc, 1)["tags"] == ["keep"]


def test_undo_several_steps(tc):
    tc.add("a")
    tc.add("b")
    tc.add("c")
    tc("undo", "--steps", "2")
    assert [t["id"] for t in tc.data()["tasks"]] == [1]


def test_history_lists_actions_newest_first(tc):
    tc.add("a")
    tc.add("b")
    rows = tc("history").lines[2:]
    assert rows[0].split()[3:5] == ["add", "2"]
    assert rows[1].split()[3:5] == ["add", "1"]


def test_undo_edit_restores_previous_values(tc):
    tc.add("Draft", "-P", "L", "--due", "2024-05-20")
    tc("edit", "1", "-D", "Final", "-P", "H", "--due", "none")
    tc("undo")
    data = task(tc, 1)
    assert data["description"] == "Draft"
    assert data["priority"] == "L"
    assert data["due"] == "2024-05-20"


def test_undo_tag_removes_added_tags(tc):
    tc.add("a", "-t", "x")
    tc("tag", "1", "y")
    tc("undo")
    assert task(tc, 1)["tags"] == ["x"]


def test_undo_done_makes_task_pending_again(tc):
    tc.add("Send invoice")
    tc("done", "1")
    assert "Undid 'done 1'" in tc("undo").out
    data = task(tc, 1)
    assert data["status"] == "pending"
    assert data["completed"] is None
    assert tc("list", "--format", "ids").out.split() == ["1"]


def test_undo_done_of_recurring_task_removes_follow_up(tc):
    tc.add("Pay rent", "--due", "2024-05-01", "--recur", "monthly")
    tc("done", "1")
    tc("undo")
    data = tc.data()
    assert [t["id"] for t in data["tasks"]] == [1]
    assert data["tasks"][0]["status"] == "pending"
    assert data["tasks"][0]["due"] == "2024-05-01"
