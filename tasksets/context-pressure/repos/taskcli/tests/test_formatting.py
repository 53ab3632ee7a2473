from taskcli.formatting import Column, bar, display_width, format_clock, plural, render_table, truncate


def test_truncate():
    assert truncate("hello", 10) == "hello"
    assert truncate("hello world", 6) == "hello…"
    assert truncate("abc", 0) == ""


def test_display_width_counts_wide_characters():
    assert display_width("日本") == 4
    assert truncate("日本語テキスト", 5) == "日本…"


def test_render_table_aligns_columns():
    text = render_table([Column("Name"), Column("N", "right")], [["a", "1"], ["bbb", "22"]], width=80)
    assert text.splitlines() == ["Name   N", "----  --", "a      1", "bbb   22"]


def test_render_table_shrinks_flexible_columns():
    rows = [["1", "a very long description that will not fit"]]
    text = render_table([Column("ID"), Column("Description", flex=True)], rows, width=30)
    assert all(len(line) <= 30 for line in text.splitlines())
    assert text.splitlines()[2].endswith("…")


def test_format_clock():
    assert format_clock(0) == "0:00"
    assert format_clock(5400) == "1:30"
    assert format_clock(36000 + 59 * 60) == "10:59"


def test_bar_and_plural():
    assert bar(5, 10, 10) == "#####"
    assert bar(0, 10) == ""
    assert plural(1, "task") == "1 task"
    assert plural(2, "entry", "entries") == "2 entries"
