"""The progress display: one updating line on a terminal, occasional plain lines otherwise."""

import io
import os
import shlex
import shutil
import subprocess
import sys
import time
import typing
from pathlib import Path

import pytest
import yaml

from ctxbench.harness.run.executors import Progress, ProgressCounts, progress_line, shorten_middle
from ctxbench.harness.records.failures import FailureReason
from ctxbench.harness.records.results import RunResult

ROOT = Path(__file__).resolve().parents[2]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def result(i: int, resolved: bool) -> RunResult:
    return RunResult(experiment_id="e", run_id=f"baseline/t{i}/0", strategy="baseline", task_id=f"t{i}", repeat=0,
                     seed=1, resolved=resolved, failure_reason=None if resolved else "tests_failed", turns=3,
                     prompt_tokens=10, completion_tokens=1, strategy_tokens=0, total_tokens=11,
                     peak_context_tokens=10, wall_s=1.0)


def test_a_terminal_gets_one_line_rewritten_in_place():
    stream = Terminal()
    progress = Progress(total=4, stream=stream)
    for i, ok in enumerate([True, False, True, True]):
        progress.update(result(i, ok))
    text = stream.getvalue()
    updates = text.split("\r\x1b[2K")[1:]
    assert len(updates) == 4 and text.endswith("\n") and text.count("\n") == 1
    assert updates[1].startswith("[2/4] resolved 1/2 (50%) ETA ") and "last: baseline/t1/0 tests_failed" in updates[1]
    assert updates[3].startswith("[4/4] resolved 3/4 (75%) ETA 0m00s") and updates[3].rstrip().endswith("ok")


def test_a_log_gets_plain_lines_now_and_then_and_the_last_one():
    stream = io.StringIO()
    progress = Progress(total=10, already_done=6, stream=stream, every_s=3600)
    for i in range(4):
        progress.update(result(i, i % 2 == 0))
    lines = stream.getvalue().splitlines()
    assert "\r" not in stream.getvalue() and "\x1b" not in stream.getvalue()
    assert [line.split("]")[0] for line in lines] == ["[7/10", "[10/10"]  # resumed at 6; the first and the last
    assert "resolved 2/4 (50%)" in lines[-1]  # completion counts the runs finished since the resume


LONG_ID = "budget_planner-with-a-long-label/inventory-allocation-ignores-reserved-stock/12"
OUTCOMES = ["ok", "tests_failed", "context_overflow", "harness_error"]


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_the_terminal_line_fits_every_width_and_keeps_the_outcome(outcome):
    counts = ProgressCounts(1140, 2400, 800, 1140, "1h12m")
    for width in range(4, 220):
        line = progress_line(counts, LONG_ID, outcome, width)
        assert len(line) <= width - 1, (width, line)
        if width > len(outcome):
            assert line.endswith(outcome), (width, line)
        if width >= 50:
            assert line.startswith("[1140/2400] ") and "…" in line or LONG_ID in line, (width, line)
    assert progress_line(counts, LONG_ID, outcome, 300).endswith(f"last: {LONG_ID} {outcome}")


def test_ids_are_shortened_in_the_middle():
    short = shorten_middle(LONG_ID, 21)
    assert len(short) == 21 and short.startswith("budget_pla") and short.endswith("stock/12") and "…" in short
    assert shorten_middle("abc", 3) == "abc"


def test_a_narrow_terminal_gets_updates_that_never_wrap():
    stream = Terminal()
    progress = Progress(total=3, stream=stream, columns=80)
    for i in range(3):
        progress.update(result(i, i != 1).model_copy(update={"run_id": LONG_ID + str(i)}))
    updates = stream.getvalue().split("\r\x1b[2K")[1:]
    assert len(updates) == 3 and all(len(u.rstrip("\n")) <= 79 for u in updates)
    assert updates[1].endswith("tests_failed") and updates[2].rstrip("\n").endswith("ok")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)")
def test_an_80_column_tmux_pane_shows_one_progress_line(tmp_path):
    """A real terminal: every update rewrites the one line, nothing wraps, nothing is left behind."""
    exp = tmp_path / "exp.yaml"
    exp.write_text(yaml.safe_dump({
        "name": "narrow", "taskset": str(ROOT / "tasksets" / "smoke"), "repeats": 3, "workers": 1, "sandbox": "none",
        "strategies": [{"name": "baseline", "label": "baseline-with-a-label-long-enough-to-overflow-eighty-columns"}]}))
    command = shlex.join([sys.executable, "-c", "from ctxbench.harness.cli import main; main()", "run", str(exp),
                          "--limit", "1", "--output", str(tmp_path / "out"), "--no-report"])
    tmux = ["tmux", "-f", "/dev/null", "-L", f"ctxbench-test-{os.getpid()}"]
    subprocess.run([*tmux, "new-session", "-d", "-x", "80", "-y", "30", "-s", "narrow",
                    f"cd {shlex.quote(str(tmp_path))} && {command}; echo EXIT=$?; sleep 600"], check=True)
    try:
        assert subprocess.run([*tmux, "display", "-p", "-t", "narrow", "#{pane_width}"], capture_output=True,
                              text=True, check=True).stdout.strip() == "80"
        screen = ""
        for _ in range(3000):
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-J", "-t", "narrow"], capture_output=True,
                                    text=True, check=True).stdout
            if "EXIT=" in screen:
                break
            time.sleep(0.1)
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert "EXIT=0" in screen, screen
    progress = [line.rstrip() for line in screen.splitlines() if line.startswith("[")]
    assert len(progress) == 1, screen  # three updates, one line: the earlier ones were erased whole
    assert progress[0].startswith("[3/3] resolved ") and len(progress[0]) < 80, screen
    assert "…" in progress[0] and progress[0].split()[-1] in ("ok", *typing.get_args(FailureReason)), screen
