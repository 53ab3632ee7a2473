"""Time reports: periods, grouping, rounding and output formats."""

import pytest


@pytest.fixture
def week(tc):
    """A week of logged work.  "Today" is Wednesday 2024-05-08."""
    tc.add("Write report", "-p", "work", "-t", "docs")
    tc.add("Fix CI", "-p", "work.ops", "-t", "ci")
    tc.add("Groceries", "-p", "home")
    tc("log", "1", "2h", "--date", "2024-05-04")   # Saturday, previous week
    tc("log", "3", "1h", "--date", "2024-05-05")   # Sunday
    tc("log", "1", "3h", "--date", "2024-05-06")   # Monday
    tc("log", "2", "1h30m", "--date", "2024-05-07")
    tc("log", "1", "45m")                          # today
    return tc


def test_daily_report_is_default(week):
    lines = week("report").lines
    assert lines[0] == "Wednesday 2024-05-08"
    assert lines[4].split() == ["work", "0:45", "0.75"]
    assert lines[-1].split() == ["Total", "0:45", "0.75"]


def test_daily_report_for_other_day(week):
    lines = week("report", "--date", "2024-05-07").lines
    assert lines[4].split() == ["work.ops", "1:30", "1.50"]


def test_weekly_report_default_starts_monday(week):
    lines = week("report", "--weekly").lines
    assert lines[0] == "Week of Mon 2024-05-06 - Sun 2024-05-12"
    assert [line.split()[0] for line in lines[4:-1]] == ["work", "work.ops"]
    assert lines[-1].split() == ["Total", "5:15", "5.25"]


def test_weekly_report_respects_week_start_setting(week):
    week("config", "set", "week_start", "sunday")
    lines = week("report", "--weekly").lines
    assert lines[0] == "Week of Sun 2024-05-05 - Sat 2024-05-11"
    assert [line.split()[0] for line in lines[4:-1]] == ["home", "work", "work.ops"]
    assert lines[-1].split() == ["Total", "6:15", "6.25"]


def test_weekly_report_by_day_with_saturday_week_start(week):
    week("config", "set", "week_start", "sat")
    lines = week("report", "--weekly", "--by", "day").lines
    assert lines[0] == "Week of Sat 2024-05-04 - Fri 2024-05-10"
    days = [line.split()[0] for line in lines[4:-1]]
    assert days == ["Sat", "Sun", "Mon", "Tue", "Wed", "Thu", "Fri"]
    assert lines[-1].split() == ["Total", "8:15", "8.25"]


def test_weekly_report_by_day_lists_every_day(week):
    lines = week("report", "--weekly", "--by", "day").lines
    assert len(lines[4:-1]) == 7
    assert lines[4].split() == ["Mon", "2024-05-06", "3:00", "3.00"]


def test_monthly_report_by_task(week):
    lines = week("report", "--monthly", "--by", "task").lines
    assert lines[0] == "May 2024"
    assert lines[4].split()[:2] == ["#1", "Write"]
    assert lines[-1].split() == ["Total", "8:15", "8.25"]


def test_report_by_tag(week):
    payload = week("report", "--weekly", "--by", "tag", "--format", "json").json()
    assert {row["key"]: row["seconds"] for row in payload["rows"]} == {"ci": 5400, "docs": 13500}


def test_report_range_and_project_filter(week):
    payload = week("report", "--range", "--from", "2024-05-01", "--to", "2024-05-08",
                   "--project", "work", "--format", "json").json()
    assert payload["total_seconds"] == 2 * 3600 + 3 * 3600 + 5400 + 2700


def test_report_rounding(week):
    week("log", "3", "10m")
    payload = week("report", "--round", "15m", "--format", "json").json()
    assert {row["key"]: row["seconds"] for row in payload["rows"]} == {"home": 900, "work": 2700}


def test_report_csv(week):
    out = week("report", "--weekly", "--format", "csv").out
    assert out.splitlines()[0] == "project,hours,minutes"
    assert "work,3.75,225" in out


def test_report_without_time(tc):
    tc.add("a")
    assert tc("report").lines[1] == "No time tracked."


def test_range_needs_from(tc):
    tc("report", "--range", expect=2)
