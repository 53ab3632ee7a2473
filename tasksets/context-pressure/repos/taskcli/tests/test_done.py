def task(tc, task_id):
    return next(t for t in tc.data()["tasks"] if t["id"] == task_id)


def test_done_marks_completed(tc):
    tc.add("a")
    result = tc("done", "1")
    assert "Completed task 1: a" in result.out
    data = task(tc, 1)
    assert data["status"] == "done"
    assert data["completed"] == "2024-05-08T10:00:00"


def test_done_twice_fails(tc):
    tc.add("a")
    tc("done", "1")
    assert "already done" in tc("done", "1", expect=1).out


def test_done_with_explicit_time(tc):
    tc.add("a")
    tc("done", "1", "--at", "yesterday 18:30")
    assert task(tc, 1)["completed"] == "2024-05-07T18:30:00"


def test_done_blocked_task_needs_force(tc):
    tc.add("a")
    tc.add("b", "--depends", "1")
    assert "blocked by #1" in tc("done", "2", expect=1).err
    tc("done", "2", "--force")
    assert task(tc, 2)["status"] == "done"


def test_done_stops_running_timer(tc, monkeypatch):
    tc.add("a")
    tc.set_now(monkeypatch, "2024-05-08T09:00:00")
    tc("start", "1")
    tc.set_now(monkeypatch, "2024-05-08T09:45:00")
    assert "after 45m" in tc("done", "1").out
    assert tc.data()["entries"][0]["end"] == "2024-05-08T09:45:00"


def test_done_recurring_creates_next_occurrence(tc):
    tc.add("Pay rent", "--due", "2024-05-01", "--recur", "monthly")
    result = tc("done", "1")
    assert "next occurrence due 2024-06-01" in result.out
    follow_up = task(tc, 2)
    assert follow_up["status"] == "pending"
    assert follow_up["recur"] == "monthly"
    assert follow_up["uuid"] != task(tc, 1)["uuid"]


def test_done_overdue_weekly_skips_past_occurrences(tc):
    tc.add("Water plants", "--due", "2024-04-20", "--recur", "weekly")
    tc("done", "1")
    assert task(tc, 2)["due"] == "2024-05-11"


def test_reopen(tc):
    tc.add("a")
    tc("done", "1")
    tc("reopen", "1")
    data = task(tc, 1)
    assert data["status"] == "pending" and data["completed"] is None
    assert "is not done" in tc("reopen", "1", expect=1).out


def test_next_prefers_urgent_unblocked(tc):
    tc.add("low")
    tc.add("urgent", "-P", "H", "--due", "2024-05-08")
    tc.add("blocked", "-P", "H", "--due", "2024-05-01", "--depends", "1")
    assert tc("next").out.split()[0] == "2"
