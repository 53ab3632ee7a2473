import datetime as dt

import pytest

from exprcalc.errors import ArgumentError, NumError


def test_date_rollover(ev):
    assert ev("DATE(2024, 13, 1)") == dt.date(2025, 1, 1)
    assert ev("DATE(2024, 3, 0)") == dt.date(2024, 2, 29)
    assert ev("DATE(2024, 1, 32)") == dt.date(2024, 2, 1)


def test_date_parts(ev):
    assert ev('YEAR("2024-07-04")') == 2024
    assert ev('MONTH("July 4, 2024")') == 7
    assert ev('DAY("4 Jul 2024")') == 4


def test_today_is_fixed(ev):
    assert ev("TODAY()") == dt.date(2024, 3, 15)
    assert ev("NOW()") == dt.datetime(2024, 3, 15)


def test_time_and_parts(ev):
    assert ev("TIME(18, 0, 0)") == 0.75
    assert ev("HOUR(0.75)") == 18
    assert ev('MINUTE("2024-01-01 10:45")') == 45


def test_weekday(ev):
    assert ev("WEEKDAY(DATE(2024, 3, 17))") == 1   # Sunday
    assert ev("WEEKDAY(DATE(2024, 3, 17), 2)") == 7
    assert ev("WEEKDAY(DATE(2024, 3, 18), 3)") == 0


def test_weeknum(ev):
    assert ev("WEEKNUM(DATE(2024, 1, 7))") == 2
    assert ev("ISOWEEKNUM(DATE(2024, 12, 30))") == 1


def test_edate_and_eomonth(ev):
    assert ev("EDATE(DATE(2024, 1, 31), 1)") == dt.date(2024, 2, 29)
    assert ev("EDATE(DATE(2024, 3, 31), -1)") == dt.date(2024, 2, 29)
    assert ev("EOMONTH(DATE(2023, 1, 15), 1)") == dt.date(2023, 2, 28)


def test_days_and_days360(ev):
    assert ev('DAYS("2024-03-01", "2024-02-01")') == 29
    assert ev("DAYS360(DATE(2024, 1, 31), DATE(2024, 3, 31))") == 60


def test_datedif(ev):
    assert ev('DATEDIF("2020-05-20", "2024-03-15", "Y")') == 3
    assert ev('DATEDIF("2020-05-20", "2024-03-15", "M")') == 45
    assert ev('DATEDIF("2020-05-20", "2024-03-15", "YM")') == 9
    with pytest.raises(NumError):
        ev('DATEDIF("2024-01-02", "2024-01-01", "D")')


def test_networkdays_and_workday(ev):
    assert ev("NETWORKDAYS(DATE(2024, 3, 1), DATE(2024, 3, 31))") == 21
    assert ev("NETWORKDAYS(DATE(2024, 3, 1), DATE(2024, 3, 31), {DATE(2024, 3, 29)})") == 20
    assert ev("WORKDAY(DATE(2024, 3, 15), 1)") == dt.date(2024, 3, 18)
    assert ev('NETWORKDAYS.INTL(DATE(2024, 3, 1), DATE(2024, 3, 7), "0000001")') == 6


def test_yearfrac(ev):
    assert ev("YEARFRAC(DATE(2024, 1, 1), DATE(2024, 7, 1))") == 0.5
    assert ev("YEARFRAC(DATE(2023, 1, 1), DATE(2024, 1, 1), 3)") == 1


def test_datevalue_serials(ev):
    assert ev('DATEVALUE("2024-01-01")') == 45292
    assert ev("TODATE(45292)") == dt.date(2024, 1, 1)


def test_invalid_date_text(ev):
    with pytest.raises(ArgumentError):
        ev('YEAR("2024-02-30")')


def test_leap_year_and_quarter(ev):
    assert ev("ISLEAPYEAR(1900)") is False
    assert ev("ISLEAPYEAR(2000)") is True
    assert ev("DAYSINMONTH(DATE(2023, 2, 1))") == 28
    assert ev("QUARTER(DATE(2024, 8, 1))") == 3
