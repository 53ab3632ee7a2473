"""The progress display: one updating line on a terminal, occasional plain lines otherwise."""

import io

from ctxbench.harness.executors import Progress
from ctxbench.harness.results import RunResult


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
