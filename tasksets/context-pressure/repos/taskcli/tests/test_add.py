from taskcli.cli import main


def test_add_creates_task_with_fields(tc):
    task_id = tc.add("Write report", "-p", "work", "-t", "docs,writing", "-P", "high", "--due", "2024-05-20")
    assert task_id == 1
    task = tc.data()["tasks"][0]
    assert task["description"] == "Write report"
    assert task["project"] == "work"
    assert task["tags"] == ["docs", "writing"]
    assert task["priority"] == "H"
    assert task["due"] == "2024-05-20"
    assert task["created"] == "2024-05-08T10:00:00"


def test_add_extracts_inline_tags_and_project(tc):
    tc("add", "Call", "+phone", "the", "bank", "project:home", "pri:L")
    task = tc.data()["tasks"][0]
    assert task["description"] == "Call the bank"
    assert task["tags"] == ["phone"]
    assert task["project"] == "home"
    assert task["priority"] == "L"


def test_add_ids_increase(tc):
    assert [tc.add("one"), tc.add("two"), tc.add("three")] == [1, 2, 3]


def test_add_uses_configured_defaults(tc):
    tc("config", "set", "default_project", "inbox")
    tc("config", "set", "default_priority", "m")
    tc.add("Sort mail")
    task = tc.data()["tasks"][0]
    assert task["project"] == "inbox"
    assert task["priority"] == "M"


def test_add_estimate_is_stored_in_seconds(tc):
    tc.add("Refactor", "--estimate", "1h30m")
    assert tc.data()["tasks"][0]["estimate"] == 5400


def test_add_relative_due_date(tc):
    tc.add("Renew passport", "--due", "+2w")
    assert tc.data()["tasks"][0]["due"] == "2024-05-22"


def test_add_recurring_needs_due(tc):
    result = tc("add", "Water plants", "--recur", "weekly", expect=2)
    assert "needs a due date" in result.err


def test_add_rejects_unknown_dependency(tc):
    result = tc("add", "Deploy", "--depends", "7", expect=1)
    assert "unknown task 7" in result.err


def test_add_rejects_bad_priority(tc):
    result = tc("add", "Thing", "-P", "urgent", expect=2)
    assert "unknown priority" in result.err


def test_add_empty_description_is_usage_error(tc):
    result = tc("add", "+only", "+tags", expect=2)
    assert "description is empty" in result.err


def test_add_with_note(tc):
    tc.add("Book flights", "-n", "window seat")
    assert tc.data()["tasks"][0]["notes"][0]["text"] == "window seat"


def test_main_without_command_prints_help(capsys, tmp_path):
    assert main(["--data-dir", str(tmp_path)]) == 2
    assert "Tasks and time tracking" in capsys.readouterr().out
