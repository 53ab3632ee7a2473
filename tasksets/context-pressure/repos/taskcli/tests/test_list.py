import json

import pytest

# A realistic backlog: (description, project, due, priority)
BACKLOG = [
    ("Renew TLS certificates", "ops", "2024-05-14", "H"),
    ("Write quarterly report", "work", None, "M"),
    ("Book dentist appointment", "home", "2024-05-09", None),
    ("Review pull request #412", "work", "2024-05-08", "H"),
    ("Plan team offsite", "work", None, "L"),
    ("Replace bike tyre", "home", None, None),
    ("Update onboarding docs", "work", "2024-05-31", "L"),
    ("Pay electricity bill", "home", "2024-05-12", "M"),
    ("Migrate CI to new runners", "ops", None, "M"),
    ("Prepare conference talk", "work", "2024-06-20", "M"),
    ("Clean garage", "home", None, "L"),
    ("Rotate database passwords", "ops", "2024-05-07", "H"),
    ("Order birthday present", "home", "2024-05-18", None),
    ("Benchmark search service", "work", None, None),
    ("File tax return", "home", "2024-07-31", "H"),
    ("Archive old Jira tickets", "work", None, "L"),
    ("Set up backup monitoring", "ops", "2024-05-20", "M"),
    ("Read 'Designing Data-Intensive Applications'", None, None, None),
    ("Fix flaky login test", "work", "2024-05-10", "H"),
    ("Call grandma", None, "2024-05-11", None),
    ("Upgrade Postgres to 16", "ops", None, "M"),
    ("Draft hiring plan", "work", "2024-05-24", "M"),
    ("Return library books", "home", "2024-05-08", None),
    ("Tune alert thresholds", "ops", None, None),
    ("Write blog post on caching", None, None, "L"),
    ("Submit expense report", "work", "2024-05-15", None),
    ("Service the boiler", "home", None, "M"),
    ("Decommission old VPN", "ops", "2024-06-01", "L"),
]


def add_backlog(tc):
    for description, project, due, priority in BACKLOG:
        argv = [description]
        if project:
            argv += ["-p", project]
        if due:
            argv += ["--due", due]
        if priority:
            argv += ["-P", priority]
        tc.add(*argv)


def listed_ids(tc, *argv):
    return [int(x) for x in tc("list", "--format", "ids", *argv).out.split()]


def test_list_shows_table_and_count(tc):
    tc.add("First", "-p", "work")
    tc.add("Second", "-t", "home")
    result = tc("list")
    assert result.lines[0].split() == ["ID", "Pri", "Due", "Project", "Tags", "Description"]
    assert "First" in result.out and "Second" in result.out
    assert result.lines[-1] == "2 tasks shown"


def test_list_empty(tc):
    assert tc("list").out.strip() == "No matching tasks."


def test_list_filters_by_project_including_subprojects(tc):
    tc.add("a", "-p", "work")
    tc.add("b", "-p", "work.ops")
    tc.add("c", "-p", "workshop")
    tc.add("d")
    assert listed_ids(tc, "--project", "work") == [1, 2]
    assert listed_ids(tc, "project:work.ops") == [2]


def test_list_filters_by_tags(tc):
    tc.add("a", "-t", "phone,urgent")
    tc.add("b", "-t", "phone")
    tc.add("c")
    assert listed_ids(tc, "+phone") == [1, 2]
    assert listed_ids(tc, "--", "+phone", "-urgent") == [2]
    assert listed_ids(tc, "--exclude-tag", "phone") == [3]


def test_list_filters_overdue_and_due_before(tc):
    tc.add("late", "--due", "2024-05-01")
    tc.add("today", "--due", "2024-05-08")
    tc.add("later", "--due", "2024-06-01")
    assert listed_ids(tc, "--overdue") == [1]
    assert listed_ids(tc, "due.before:2024-05-09") == [1, 2]
    assert listed_ids(tc, "due:none") == []


def test_list_words_must_all_match(tc):
    tc.add("Write quarterly report")
    tc.add("Read report")
    assert listed_ids(tc, "report", "write") == [1]


def test_list_hides_done_unless_asked(tc):
    tc.add("a")
    tc.add("b")
    tc("done", "1")
    assert listed_ids(tc) == [2]
    assert listed_ids(tc, "--status", "done") == [1]
    assert listed_ids(tc, "--all") == [1, 2]


def test_sort_by_priority(tc):
    add_backlog(tc)
    ids = listed_ids(tc, "--sort", "priority", "--project", "ops")
    assert ids == [1, 12, 9, 17, 21, 28, 24]


def test_sort_by_project_puts_unassigned_last(tc):
    add_backlog(tc)
    ids = listed_ids(tc, "--sort", "project")
    assert ids[:2] == [3, 6]
    assert ids[-3:] == [18, 20, 25]


def test_sort_by_description_with_limit(tc):
    add_backlog(tc)
    ids = listed_ids(tc, "--sort", "description", "--limit", "3")
    expected = sorted(range(1, len(BACKLOG) + 1), key=lambda i: BACKLOG[i - 1][0].lower())[:3]
    assert ids == expected


def test_sort_due_orders_dated_tasks_and_puts_undated_last(tc):
    add_backlog(tc)
    ids = listed_ids(tc, "--sort", "due")
    dated = [i for i, row in enumerate(BACKLOG, start=1) if row[2]]
    undated = [i for i, row in enumerate(BACKLOG, start=1) if not row[2]]
    assert ids[: len(dated)] == sorted(dated, key=lambda i: (BACKLOG[i - 1][2], i))
    assert ids[len(dated):] == undated


def test_sort_due_table_starts_with_overdue_task(tc):
    add_backlog(tc)
    result = tc("list", "--sort", "due")
    first_row = result.lines[2].split()
    assert first_row[0] == "12"
    assert first_row[2] == "2024-05-07"
    last_row = result.lines[-3].split()
    assert last_row[0] == "27"
    assert result.lines[-1] == "28 tasks shown"


def test_default_sort_setting_due(tc):
    tc("config", "set", "default_sort", "due")
    add_backlog(tc)
    ids = listed_ids(tc, "--project", "home")
    assert ids == [23, 3, 8, 13, 15, 6, 11, 27]


def test_limit_reports_total(tc):
    add_backlog(tc)
    assert tc("list", "--limit", "2").lines[-1] == "2 tasks shown of 28"


def test_negative_limit_is_rejected(tc):
    tc.add("a")
    assert "must not be negative" in tc("list", "--limit", "-1", expect=2).err


def test_json_format_includes_computed_fields(tc):
    tc.add("a", "--due", "2024-05-01", "-P", "H")
    payload = json.loads(tc("list", "--format", "json").out)
    assert payload[0]["id"] == 1
    assert payload[0]["blocked"] is False
    assert payload[0]["spent"] == 0
    assert payload[0]["urgency"] > 15


def test_custom_columns(tc):
    tc.add("a", "-e", "2h")
    result = tc("list", "--columns", "id,description,status")
    assert result.lines[0].split() == ["ID", "Description", "Status"]


def test_unknown_column_is_rejected(tc):
    tc.add("a")
    assert "unknown column" in tc("list", "--columns", "id,colour", expect=2).err


@pytest.mark.parametrize("term", ["pri:X", "status:open", "colour:red"])
def test_bad_filter_terms(tc, term):
    tc.add("a")
    tc("list", term, expect=2)
