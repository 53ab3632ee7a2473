def entries(tc):
    return tc.data()["entries"]


def test_start_and_stop(tc, monkeypatch):
    tc.add("Write code")
    tc.set_now(monkeypatch, "2024-05-08T09:00:00")
    assert "Started timer on task 1" in tc("start", "1").out
    tc.set_now(monkeypatch, "2024-05-08T10:15:00")
    assert "1h15m" in tc("stop").out
    entry = entries(tc)[0]
    assert (entry["start"], entry["end"]) == ("2024-05-08T09:00:00", "2024-05-08T10:15:00")


def test_stop_without_timer(tc):
    tc.add("a")
    assert tc("stop", expect=1).out.strip() == "No timer is running."


def test_start_switches_running_timer(tc, monkeypatch):
    tc.add("a")
    tc.add("b")
    tc("start", "1", "--at", "08:00")
    result = tc("start", "2", "--at", "09:30")
    assert "Stopped timer on task 1" in result.out
    assert [e["end"] for e in entries(tc)] == ["2024-05-08T09:30:00", None]


def test_start_refuses_switch_without_auto_stop(tc):
    tc("config", "set", "auto_stop", "no")
    tc.add("a")
    tc.add("b")
    tc("start", "1")
    assert "stop it first" in tc("start", "2", expect=1).err


def test_start_on_done_task_fails(tc):
    tc.add("a")
    tc("done", "1")
    assert "reopen it" in tc("start", "1", expect=1).err


def test_start_in_future_is_rejected(tc):
    tc.add("a")
    tc("start", "1", "--at", "23:00", expect=2)


def test_stop_before_start_is_rejected(tc):
    tc.add("a")
    tc("start", "1", "--at", "09:00")
    assert "before the timer started" in tc("stop", "--at", "08:00", expect=2).err


def test_status_and_cancel(tc):
    tc.add("Review")
    tc("start", "1", "--at", "09:30", "-n", "PR 12")
    out = tc("status").out
    assert "Tracking task 1: Review" in out
    assert "(30m)" in out and "note: PR 12" in out
    assert tc("status", "--short").out.strip() == "#1 30m"
    tc("cancel")
    assert entries(tc) == []


def test_log_whole_minutes(tc):
    tc.add("a")
    assert "Logged 45m on task 1" in tc("log", "1", "45m").out
    entry = entries(tc)[0]
    assert entry["seconds"] == 2700
    assert entry["start"] == "2024-05-08T09:15:00"


def test_log_on_earlier_day(tc):
    tc.add("a")
    tc("log", "1", "2h", "--date", "2024-05-06", "--at", "14:00")
    entry = entries(tc)[0]
    assert (entry["start"], entry["end"]) == ("2024-05-06T14:00:00", "2024-05-06T16:00:00")


def test_log_rejects_future_and_zero(tc):
    tc.add("a")
    tc("log", "1", "1h", "--date", "tomorrow", expect=2)
    tc("log", "1", "0m", expect=2)


def test_entries_listing_and_unlog(tc):
    tc.add("a")
    tc.add("b", "-p", "work")
    tc("log", "1", "30m", "--date", "2024-05-06")
    tc("log", "2", "1h")
    out = tc("entries").out
    assert "Total: 1h30m in 2 entries" in out
    assert "Total: 1h in 1 entry" in tc("entries", "-p", "work").out
    tc("unlog", "1")
    assert [e["task_id"] for e in entries(tc)] == [2]


def test_retime_changes_length(tc):
    tc.add("a")
    tc("log", "1", "1h", "--at", "08:00")
    tc("retime", "1", "--duration", "1h30m")
    entry = entries(tc)[0]
    assert entry["end"] == "2024-05-08T09:30:00"
    assert entry["seconds"] == 5400


def test_timesheet_grid(tc):
    tc.add("a")
    tc("log", "1", "2h", "--date", "2024-05-06")
    tc("log", "1", "30m")
    lines = tc("timesheet").lines
    assert lines[0] == "Timesheet 2024-05-06 - 2024-05-12"
    assert lines[3].split() == ["#1", "a", "2.00", ".", "0.50", ".", ".", ".", ".", "2.50"]
