"""runs.jsonl's writer: each line in the file as its run ends, fsynced by the writer's own thread, one
fsync for every line that arrived while the one before it ran."""

from __future__ import annotations

import errno
import os
import time

import pytest

from ctxbench.harness.records import results
from ctxbench.harness.records import RunResult
from ctxbench.harness.records.results import ResultsWriter, read_results


def result(i: int) -> RunResult:
    return RunResult(experiment_id="e", run_id=f"baseline/t{i}/0", strategy="baseline", task_id=f"t{i}", repeat=0,
                     seed=1, resolved=True, failure_reason=None, turns=3, prompt_tokens=10, completion_tokens=1,
                     strategy_tokens=0, total_tokens=11, peak_context_tokens=10, wall_s=1.0)


class SlowDisk:
    """os.fsync that takes 50 ms more (a slow disk), counting its calls."""

    def __init__(self, fail: bool = False) -> None:
        self.calls = 0
        self.fail = fail
        self.real = os.fsync

    def __call__(self, fd: int) -> None:
        self.calls += 1
        time.sleep(0.05)
        if self.fail:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        self.real(fd)


def test_each_line_is_in_the_file_when_write_returns_and_lines_share_fsyncs(tmp_path, monkeypatch):
    disk = SlowDisk()
    monkeypatch.setattr(results.os, "fsync", disk)
    path = tmp_path / "runs.jsonl"
    writer = ResultsWriter(path)
    for i in range(20):
        writer.write(result(i))
        assert [r.run_id for r in read_results(path)] == [f"baseline/t{j}/0" for j in range(i + 1)]
    writer.close()
    assert len(read_results(path)) == 20
    assert 1 <= disk.calls < 20  # the lines written while an fsync ran went to disk with the next one


def test_sync_waits_for_the_disk_and_close_syncs_the_last_lines(tmp_path, monkeypatch):
    disk = SlowDisk()
    monkeypatch.setattr(results.os, "fsync", disk)
    writer = ResultsWriter(tmp_path / "runs.jsonl")
    writer.write(result(0))
    writer.sync()
    after_first = disk.calls
    assert after_first >= 1
    writer.write(result(1))
    writer.close()  # waits for the fsync of the second line
    assert disk.calls > after_first


def test_a_failed_fsync_is_raised_by_the_next_write_and_by_close(tmp_path, monkeypatch):
    monkeypatch.setattr(results.os, "fsync", SlowDisk(fail=True))
    writer = ResultsWriter(tmp_path / "runs.jsonl")
    writer.write(result(0))
    with pytest.raises(OSError) as raised:
        writer.sync()
    assert raised.value.errno == errno.EIO
    writer.write(result(1))
    with pytest.raises(OSError):
        writer.close()
