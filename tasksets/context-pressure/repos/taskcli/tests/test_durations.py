import pytest

from taskcli.durations import DurationError, format_duration, parse_duration, round_duration


@pytest.mark.parametrize("text, seconds", [
    ("45m", 2700),
    ("2h", 7200),
    ("1h30m", 5400),
    ("1h 30m", 5400),
    ("2d4h", 187200),
    ("1w", 604800),
    ("90 minutes", 5400),
    ("30s", 30),
    ("1:30", 5400),
    ("0:45:30", 2730),
    ("25", 1500),
    ("  2H  ", 7200),
], ids=["minutes", "hours", "hours-minutes", "spaced", "days-hours", "week", "long-unit",
        "seconds", "clock", "clock-seconds", "bare-number", "case-and-space"])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "abc", "1x", "h", "1h1h", "1h30", "-5m"],
                         ids=["empty", "word", "unit", "no-number", "repeated", "trailing", "negative"])
def test_parse_duration_rejects(text):
    with pytest.raises(DurationError):
        parse_duration(text)


@pytest.mark.parametrize("text, seconds", [
    ("1.5h", 5400),
    ("0.25h", 900),
    ("2.5d", 216000),
    ("1.75h", 6300),
    ("0.1h", 360),
    ("1h 7.5m", 4050),
], ids=["hour-and-half", "quarter-hour", "days", "three-quarters", "tenth", "mixed"])
def test_parse_fractional_durations_give_whole_seconds(text, seconds):
    value = parse_duration(text)
    assert value == seconds
    assert type(value) is int


@pytest.mark.parametrize("seconds, text", [
    (0, "0s"), (45, "45s"), (2700, "45m"), (5400, "1h30m"), (7200, "2h"),
    (187200, "2d4h"), (5400.4, "1h30m"), (-900, "-15m"), (None, "-"),
], ids=["zero", "seconds", "minutes", "mixed", "hours", "days", "float", "negative", "none"])
def test_format_duration_short(seconds, text):
    assert format_duration(seconds) == text


def test_format_duration_long_and_decimal():
    assert format_duration(5460, "long") == "1 hour 31 minutes"
    assert format_duration(3600, "long") == "1 hour"
    assert format_duration(5400, "decimal") == "1.50"
    with pytest.raises(ValueError):
        format_duration(60, "fancy")


@pytest.mark.parametrize("seconds, increment, mode, expected", [
    (400, 900, "nearest", 0),
    (450, 900, "nearest", 900),
    (1000, 900, "up", 1800),
    (1799, 900, "down", 900),
    (1234, 0, "nearest", 1234),
], ids=["down-to-zero", "half-rounds-up", "up", "down", "disabled"])
def test_round_duration(seconds, increment, mode, expected):
    assert round_duration(seconds, increment, mode) == expected
