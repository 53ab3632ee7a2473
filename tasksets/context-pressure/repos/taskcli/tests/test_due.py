"""Due dates as users type them on the command line."""


def task(tc, task_id):
    return next(t for t in tc.data()["tasks"] if t["id"] == task_id)


def test_add_due_weekday_name(tc):
    tc.add("Submit timesheet", "--due", "friday")
    assert task(tc, 1)["due"] == "2024-05-10"


def test_add_due_next_weekday(tc):
    result = tc("add", "Team retro", "--due", "next monday")
    assert "due Mon 2024-05-13" in result.out
    assert task(tc, 1)["due"] == "2024-05-13"


def test_next_weekday_due_then_list(tc):
    tc.add("Pay invoice", "--due", "next friday")
    tc.add("Plan sprint")
    result = tc("list", "--sort", "id")
    assert "2024-05-10" in result.lines[2]
    assert result.lines[-1] == "2 tasks shown"


def test_edit_due_next_weekday_then_agenda(tc):
    tc.add("Dentist")
    tc("edit", "1", "--due", "next tue")
    out = tc("agenda", "--days", "10").out
    assert "Tuesday 2024-05-14 (in 6d)" in out


def test_overdue_shown_first_in_agenda(tc):
    tc.add("Late", "--due", "2024-05-01")
    tc.add("Soon", "--due", "tomorrow")
    lines = tc("agenda").lines
    assert lines[0] == "Overdue"
    assert lines[1].split()[:2] == ["1", "Late"]
    assert lines[3] == "Thursday 2024-05-09 (tomorrow)"


def test_snooze_by_days_and_until(tc):
    tc.add("a", "--due", "2024-05-01")
    tc.add("b", "--due", "2024-05-20")
    tc("snooze", "1,2", "--by", "2d")
    assert [task(tc, 1)["due"], task(tc, 2)["due"]] == ["2024-05-10", "2024-05-22"]
    tc("snooze", "1", "--until", "2024-06-01")
    assert task(tc, 1)["due"] == "2024-06-01"


def test_snooze_rejects_partial_days(tc):
    tc.add("a", "--due", "2024-05-10")
    tc("snooze", "1", "--by", "5h", expect=2)


def test_calendar_marks_due_days(tc):
    tc.add("a", "--due", "2024-05-10")
    tc.add("b", "--due", "2024-05-10")
    out = tc("calendar", "2024-05").out
    assert "10(2)" in out
    assert "2 tasks due this month." in out


def test_unparseable_due_is_usage_error(tc):
    result = tc("add", "x", "--due", "someday", expect=2)
    assert "could not understand date" in result.err
