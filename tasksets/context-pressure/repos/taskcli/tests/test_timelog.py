"""Logging time and reading it back through reports: the main time-tracking workflow."""


def test_log_and_daily_report(tc):
    tc.add("Write report", "-p", "work")
    tc.add("Groceries", "-p", "home")
    tc("log", "1", "1h30m")
    tc("log", "2", "45m")
    lines = tc("report").lines
    assert lines[0] == "Wednesday 2024-05-08"
    assert lines[4].split() == ["home", "0:45", "0.75"]
    assert lines[5].split() == ["work", "1:30", "1.50"]
    assert lines[6].split() == ["Total", "2:15", "2.25"]


def test_log_clock_notation(tc):
    tc.add("a")
    tc("log", "1", "1:15")
    assert tc("report", "--format", "json").json()["total_seconds"] == 4500


def test_log_fractional_hours_then_daily_report(tc):
    tc.add("Write report", "-p", "work")
    tc.add("Groceries", "-p", "home")
    tc("log", "1", "1.5h")
    tc("log", "2", "0.25h")
    lines = tc("report").lines
    assert lines[4].split() == ["home", "0:15", "0.25"]
    assert lines[5].split() == ["work", "1:30", "1.50"]
    assert lines[6].split() == ["Total", "1:45", "1.75"]


def test_log_fractional_hours_weekly_report_by_day(tc):
    tc.add("Client work", "-p", "acme")
    for day, amount in [("2024-05-06", "7.5h"), ("2024-05-07", "6.25h"), ("2024-05-08", "2.5h")]:
        tc("log", "1", amount, "--date", day)
    lines = tc("report", "--weekly", "--by", "day").lines
    assert lines[4].split() == ["Mon", "2024-05-06", "7:30", "7.50"]
    assert lines[-1].split() == ["Total", "16:15", "16.25"]


def test_fractional_entry_is_stored_in_whole_seconds(tc):
    tc.add("a")
    tc("log", "1", "0.1h")
    seconds = tc.data()["entries"][0]["seconds"]
    assert seconds == 360 and isinstance(seconds, int)
