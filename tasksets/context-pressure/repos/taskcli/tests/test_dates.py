from datetime import date, datetime, time

import pytest

from taskcli import dates
from taskcli.dates import DateParseError, parse_date, parse_datetime, parse_time

TODAY = date(2024, 5, 8)  # a Wednesday


@pytest.mark.parametrize("text, expected", [
    ("today", date(2024, 5, 8)),
    ("Tomorrow", date(2024, 5, 9)),
    ("yesterday", date(2024, 5, 7)),
    ("2024-12-24", date(2024, 12, 24)),
    ("+3d", date(2024, 5, 11)),
    ("-1w", date(2024, 5, 1)),
    ("+1m", date(2024, 6, 8)),
    ("in 2 weeks", date(2024, 5, 22)),
    ("3 days ago", date(2024, 5, 5)),
    ("eow", date(2024, 5, 12)),
    ("eom", date(2024, 5, 31)),
    ("eoy", date(2024, 12, 31)),
], ids=["today", "tomorrow", "yesterday", "iso", "plus-days", "minus-week", "plus-month",
        "in-weeks", "days-ago", "eow", "eom", "eoy"])
def test_parse_date(text, expected):
    assert parse_date(text, today=TODAY) == expected


@pytest.mark.parametrize("text, expected", [
    ("friday", date(2024, 5, 10)),
    ("fri", date(2024, 5, 10)),
    ("wednesday", date(2024, 5, 8)),
    ("monday", date(2024, 5, 13)),
], ids=["friday", "fri", "same-day", "monday"])
def test_parse_weekday_name(text, expected):
    assert parse_date(text, today=TODAY) == expected


@pytest.mark.parametrize("text, expected", [
    ("next friday", date(2024, 5, 10)),
    ("next wed", date(2024, 5, 15)),
    ("next monday", date(2024, 5, 13)),
], ids=["friday", "same-weekday", "monday"])
def test_parse_next_weekday_returns_plain_date(text, expected):
    value = parse_date(text, today=TODAY)
    assert value == expected
    assert type(value) is date


@pytest.mark.parametrize("text", ["", "someday", "2024-13-01", "next year", "+3x"],
                         ids=["empty", "word", "bad-month", "next-year", "bad-unit"])
def test_parse_date_rejects(text):
    with pytest.raises(DateParseError):
        parse_date(text, today=TODAY)


@pytest.mark.parametrize("text, expected", [
    ("9:30", time(9, 30)), ("17:05:10", time(17, 5, 10)), ("9am", time(9)),
    ("5:30pm", time(17, 30)), ("12am", time(0)), ("12pm", time(12)),
], ids=["clock", "seconds", "am", "pm", "midnight", "noon"])
def test_parse_time(text, expected):
    assert parse_time(text) == expected


def test_parse_time_rejects_out_of_range():
    with pytest.raises(DateParseError):
        parse_time("25:00")


def test_parse_datetime_forms():
    ref = datetime(2024, 5, 8, 10, 0)
    assert parse_datetime("09:15", ref) == datetime(2024, 5, 8, 9, 15)
    assert parse_datetime("yesterday 16:00", ref) == datetime(2024, 5, 7, 16, 0)
    assert parse_datetime("2024-05-01T08:00", ref) == datetime(2024, 5, 1, 8, 0)
    assert parse_datetime("tomorrow", ref) == datetime(2024, 5, 9, 0, 0)


def test_now_honours_environment(monkeypatch):
    monkeypatch.setenv("TASKCLI_NOW", "2030-01-02T03:04:05")
    assert dates.now() == datetime(2030, 1, 2, 3, 4, 5)
    assert dates.today() == date(2030, 1, 2)


def test_week_bounds_default_monday():
    assert dates.week_bounds(TODAY) == (date(2024, 5, 6), date(2024, 5, 12))
    assert dates.week_bounds(date(2024, 5, 6)) == (date(2024, 5, 6), date(2024, 5, 12))


def test_month_bounds_leap_year():
    assert dates.month_bounds(date(2024, 2, 10)) == (date(2024, 2, 1), date(2024, 2, 29))


@pytest.mark.parametrize("due, rule, expected", [
    (date(2024, 1, 31), "monthly", date(2024, 2, 29)),
    (date(2024, 5, 8), "weekly", date(2024, 5, 15)),
    (date(2024, 5, 8), "every 3 days", date(2024, 5, 11)),
    (date(2024, 5, 8), "2w", date(2024, 5, 22)),
    (date(2024, 2, 29), "yearly", date(2025, 2, 28)),
    (date(2024, 5, 8), "quarterly", date(2024, 8, 8)),
], ids=["month-end", "weekly", "every-days", "short", "leap-yearly", "quarterly"])
def test_next_occurrence(due, rule, expected):
    assert dates.next_occurrence(due, rule) == expected


def test_next_occurrence_skips_past_dates():
    assert dates.next_occurrence(date(2024, 4, 1), "weekly", after=TODAY) == date(2024, 5, 13)


def test_describe_relative():
    assert dates.describe_relative(date(2024, 5, 9), TODAY) == "tomorrow"
    assert dates.describe_relative(date(2024, 5, 11), TODAY) == "in 3d"
    assert dates.describe_relative(date(2024, 4, 1), TODAY) == "5w ago"
