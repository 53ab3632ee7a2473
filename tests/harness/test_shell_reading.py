"""Shell commands as coding agents issue them, read as file reads, searches, edits, test runs."""

import pytest

from ctxbench.harness.wire.shell_reading import CommandReading, exit_status, read_command


@pytest.mark.parametrize("command, reading", [
    ("nl -ba calc/stats.py | sed -n '10,20p'", CommandReading("file_read", "calc/stats.py", (10, 20))),
    ("cd /testbed && cat -n calc/stats.py", CommandReading("file_read", "calc/stats.py")),
    ("sed -n '5,9p' calc/stats.py", CommandReading("file_read", "calc/stats.py", (5, 9))),
    ("head -n 40 calc/stats.py", CommandReading("file_read", "calc/stats.py", (1, 40))),
    ("cat calc/stats.py | head -n 12", CommandReading("file_read", "calc/stats.py", (1, 12))),
    ("grep -rn 'def median' calc/", CommandReading("search", "calc/")),
    ("grep -rn median", CommandReading("search")),
    ("git grep -n 'a|b' -- src", CommandReading("search", "src")),
    ("ls -la calc", CommandReading("listing", "calc")),
    ("find . -name '*.py'", CommandReading("listing", ".")),
    ("sed -i 's/a/b/' calc/stats.py", CommandReading("edit", "calc/stats.py")),
    ("cat <<'EOF' > calc/new.py\nx = 1 > 0\nEOF", CommandReading("edit", "calc/new.py")),
    ("git apply <<'EOF'\n--- a/calc/x.py\n+++ b/calc/x.py\nEOF", CommandReading("edit")),
    ("python - <<'EOF'\nopen('x', 'w').write('1')\nEOF", CommandReading("edit")),
    ("echo 'x = 1' >> calc/stats.py", CommandReading("edit", "calc/stats.py")),
    ("python -m pytest -q tests/test_stats.py", CommandReading("test_run")),
    ("cd /testbed && pytest tests 2>&1 | tail -20", CommandReading("test_run")),
    ("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached", CommandReading("finish")),
    ("echo 'a > b'", CommandReading("command")),
    ("python setup.py --version 2>/dev/null", CommandReading("command")),
    ("git status", CommandReading("command")),
])
def test_a_command_reads_as_what_it_does(command, reading):
    assert read_command(command) == reading


def test_the_tasks_own_test_command_is_a_test_run_however_spelt():
    assert read_command("./runtests.py queries").kind == "command"
    assert read_command("./runtests.py queries", test_commands=(("./runtests.py",),)).kind == "test_run"


def test_another_submit_convention_is_recognised_and_the_default_is_then_a_plain_echo():
    assert read_command("echo SUBMIT", submit_marker="SUBMIT").kind == "finish"
    assert read_command("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", submit_marker="SUBMIT").kind == "command"


def test_an_unbalanced_quote_is_read_word_by_word():
    assert read_command("grep -rn 'median calc") == CommandReading("search", "calc")


@pytest.mark.parametrize("output, status", [
    ("<returncode>1</returncode>\n<output>\nboom\n</output>", 1),
    ("collected 3 items\n[exit code 2]", 2),
    ("returncode: 0\nok", 0),
    ("no status here", None),
])
def test_the_exit_status_an_observation_reports(output, status):
    assert exit_status(output) == status
