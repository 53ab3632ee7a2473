def test_stats_counts(tc, monkeypatch):
    tc.set_now(monkeypatch, "2024-05-06T09:00:00")
    tc.add("a", "-p", "work", "-t", "x")
    tc.add("b", "-p", "work")
    tc.add("c", "--due", "2024-05-07")
    tc.set_now(monkeypatch, "2024-05-07T09:00:00")
    tc("done", "1")
    tc.set_now(monkeypatch, "2024-05-08T10:00:00")
    tc("done", "2")
    payload = tc("stats", "--json").json()
    assert (payload["total"], payload["done"], payload["pending"], payload["overdue"]) == (3, 2, 1, 1)
    assert payload["streak"] == 2
    assert payload["projects"] == {"work": 2, "(none)": 1}
    assert payload["average_lead_days"] == 1.52


def test_archive_old_done_tasks(tc, monkeypatch):
    tc.set_now(monkeypatch, "2024-03-01T09:00:00")
    tc.add("old")
    tc("done", "1")
    tc.set_now(monkeypatch, "2024-05-08T10:00:00")
    tc.add("recent")
    tc("done", "2")
    assert "Archived 1 task." in tc("archive").out
    assert [t["archived"] for t in tc.data()["tasks"]] == [True, False]
    assert tc("list", "--format", "ids", "--all").out.split() == ["2"]
    assert tc("list", "--format", "ids", "--archived").out.split() == ["1"]


def test_archive_explicit_ids_must_be_done(tc):
    tc.add("a")
    assert "only done tasks" in tc("archive", "1", expect=1).err


def test_unarchive_and_purge(tc):
    tc.add("a")
    tc.add("b")
    tc("done", "1,2")
    tc("archive", "1,2")
    tc("unarchive", "2")
    tc("purge", expect=1)
    tc("purge", "--yes")
    assert [t["id"] for t in tc.data()["tasks"]] == [2]


def test_count_by_project(tc):
    tc.add("a", "-p", "work")
    tc.add("b", "-p", "work")
    tc.add("c")
    assert tc("count").out.strip() == "3"
    lines = tc("count", "--by", "project").lines
    assert lines == ["(none)                   1", "work                     2", "total                    3"]


def test_review_and_burndown(tc, monkeypatch):
    tc.set_now(monkeypatch, "2024-05-06T09:00:00")
    tc.add("a")
    tc.add("b")
    tc.set_now(monkeypatch, "2024-05-08T10:00:00")
    tc("done", "1")
    out = tc("review").out
    assert "Completed (1)" in out and "Created (2)" in out
    lines = tc("burndown", "--days", "3").lines
    assert [line.split()[2] for line in lines[:3]] == ["2", "2", "1"]
    assert lines[-1] == "down 1 over 3 days"


def test_estimates_report(tc):
    tc.add("a", "-e", "1h")
    tc.add("b", "-e", "30m")
    tc("log", "1", "45m")
    tc("log", "2", "40m")
    out = tc("estimates").out
    assert "Estimated 1h30m, spent 1h25m (94%)." in out
    assert len(tc("estimates", "--over").lines) == 5
