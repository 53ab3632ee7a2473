import csv
import io
import json

from taskcli.exporters import fold_line


def seed(tc):
    tc.add("Write report", "-p", "work", "-t", "docs", "-P", "H", "--due", "2024-05-10", "-e", "90m")
    tc.add("Buy milk", "-p", "home")
    tc("note", "1", "first draft done")
    tc("log", "1", "1h", "--at", "08:00")
    tc("done", "2")


def test_export_json_round_trip(tc, tmp_path):
    seed(tc)
    target = tmp_path / "out.json"
    tc("export", "-o", str(target))
    document = json.loads(target.read_text())
    assert document["format"] == "taskcli"
    assert [t["description"] for t in document["tasks"]] == ["Write report", "Buy milk"]
    assert document["entries"][0]["seconds"] == 3600

    other = type(tc)(tmp_path / "other")
    result = other("import", str(target))
    assert "2 tasks added, 0 updated, 0 skipped, 1 time entry added" in result.out
    assert other("import", str(target)).out.count("2 skipped") == 1


def test_export_csv_columns(tc):
    seed(tc)
    rows = list(csv.DictReader(io.StringIO(tc("export", "--format", "csv").out)))
    assert rows[0]["tags"] == "docs"
    assert rows[0]["estimate"] == "90"
    assert rows[0]["due"] == "2024-05-10"
    assert rows[1]["status"] == "done"


def test_export_filters(tc):
    seed(tc)
    rows = list(csv.DictReader(io.StringIO(tc("export", "--format", "csv", "--status", "pending").out)))
    assert [r["description"] for r in rows] == ["Write report"]


def test_csv_import_with_bad_rows(tc, tmp_path):
    source = tmp_path / "tasks.csv"
    source.write_text("description,project,tags,priority,due\n"
                      "Paint fence,home,outdoor,L,2024-06-01\n"
                      ",home,,,\n"
                      "Fix sink,home,,urgent,\n")
    result = tc("import", str(source))
    assert "1 task added" in result.out
    assert result.err.count("skipped") == 2
    task = tc.data()["tasks"][0]
    assert (task["description"], task["tags"], task["due"]) == ("Paint fence", ["outdoor"], "2024-06-01")


def test_toggl_import(tc, tmp_path):
    source = tmp_path / "toggl.csv"
    source.write_text(
        "User,Email,Client,Project,Description,Start date,Start time,End date,End time,Duration,Tags\n"
        "Ann,a@x,ACME,Website,Landing page,2024-05-06,09:00:00,2024-05-06,10:30:00,01:30:00,design\n"
        "Ann,a@x,ACME,Website,Landing page,2024-05-07,14:00:00,2024-05-07,14:45:00,00:45:00,design\n"
        "Ann,a@x,,Admin,Email,2024-05-07,08:00:00,2024-05-07,08:20:00,00:20:00,\n")
    result = tc("import", str(source))
    assert "2 tasks added" in result.out and "3 time entries added" in result.out
    payload = tc("report", "--weekly", "--by", "project", "--format", "json").json()
    assert {r["key"]: r["seconds"] for r in payload["rows"]} == {"Admin": 1200, "Website": 8100}


def test_import_dry_run_changes_nothing(tc, tmp_path):
    source = tmp_path / "tasks.csv"
    source.write_text("description\nOne\nTwo\n")
    assert "Dry run: 2 tasks added" in tc("import", str(source), "--dry-run").out
    assert tc("list").out.strip() == "No matching tasks."


def test_ical_export_structure(tc):
    seed(tc)
    text = tc("export", "--format", "ical").out
    lines = text.split("\r\n")
    assert lines[0] == "BEGIN:VCALENDAR"
    assert lines[-2] == "END:VCALENDAR"
    assert "SUMMARY:Write report" in lines
    assert "DUE;VALUE=DATE:20240510" in lines
    assert "PRIORITY:1" in lines
    assert "CATEGORIES:docs" in lines
    assert "STATUS:COMPLETED" in lines
    assert "DESCRIPTION:first draft done" in lines


def test_ical_export_with_entries(tc):
    seed(tc)
    text = tc("export", "--format", "ical", "--entries").out
    assert "BEGIN:VEVENT" in text
    assert "DTSTART:20240508T080000" in text
    assert "DTEND:20240508T090000" in text


def test_fold_line_limits_octets():
    line = "SUMMARY:" + "é" * 60
    folded = fold_line(line)
    parts = folded.split("\r\n")
    assert all(len(p.encode("utf-8")) <= 75 for p in parts)
    assert "".join(p[1:] if i else p for i, p in enumerate(parts)) == line


def test_timesheet_export(tc):
    seed(tc)
    out = tc("export", "--format", "timesheet").out
    assert out.splitlines()[1] == "2024-05-08,08:00,09:00,60,1,Write report,work,"
