def test_config_list_shows_defaults(tc):
    out = tc("config", "list").out
    assert "week_start" in out and "(default)" in out


def test_config_set_get_unset(tc):
    assert tc("config", "set", "week_start", "Sun").out.strip() == "week_start = sunday"
    assert tc("config", "get", "week_start").out.strip() == "sunday"
    tc("config", "unset", "week_start")
    assert tc("config", "get", "week_start").out.strip() == "monday"


def test_config_rejects_unknown_key(tc):
    assert "unknown setting" in tc("config", "set", "colour", "red", expect=2).err


def test_config_rejects_bad_values(tc):
    tc("config", "set", "auto_stop", "maybe", expect=2)
    tc("config", "set", "week_start", "someday", expect=2)
    tc("config", "set", "width", "wide", expect=2)
    tc("config", "set", "report_rounding", "quarter", expect=2)


def test_config_persists_in_data_dir(tc):
    tc("config", "set", "width", "80")
    assert '"width": 80' in (tc.data_dir / "config.json").read_text()


def test_date_format_setting_changes_tables(tc):
    tc("config", "set", "date_format", "%d.%m.%Y")
    tc.add("a", "--due", "2024-05-10")
    assert "10.05.2024" in tc("list").out


def test_help_topics_and_commands(tc):
    assert "next friday" in tc("help", "dates").out
    assert "report" in tc("commands", "--names").lines
    assert "complete -F _taskcli taskcli" in tc("completion", "bash").out
