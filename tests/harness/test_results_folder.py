"""One runner per results folder, and nothing valid in runs.jsonl is ever discarded."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.errors import InputError
from ctxbench.harness.records.folderlock import LOCK_NAME, FolderLock

HOLD = """
import sys, time
from pathlib import Path
from ctxbench.harness.records.folderlock import FolderLock
lock = FolderLock.acquire(Path(sys.argv[1]))
print("locked", flush=True)
time.sleep(600)
"""


@pytest.fixture
def holder(tmp_path):
    """Another process holding the lock of tmp_path/out (killed with SIGKILL at the end)."""
    procs = []

    def start(folder: Path) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "locked"
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        proc.kill()
        proc.wait()


ROOT = Path(__file__).resolve().parents[2]
ONE_TASK = {"path": str(ROOT / "tasksets" / "smoke"), "ids": ["calc-median-even-length"]}


def cli_run(exp: Path, out: Path, *extra: str):
    return CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report", *extra])


def test_a_second_runner_on_the_same_folder_exits_2_naming_the_holder(experiment_file, tmp_path, holder):
    exp = experiment_file(taskset=ONE_TASK)
    out = tmp_path / "out"
    first = cli_run(exp, out)
    assert first.exit_code == 0, first.output
    before = (out / "runs.jsonl").read_bytes()
    proc = holder(out)
    second = cli_run(exp, out, "--resume")
    assert second.exit_code == 2, second.output
    assert f"pid {proc.pid} on host {socket.gethostname()}, started 20" in second.output
    assert "another ctxbench run" in second.output and "Traceback" not in second.output
    assert (out / "runs.jsonl").read_bytes() == before


def test_a_runner_on_a_new_folder_held_by_another_exits_2_and_writes_nothing(experiment_file, tmp_path, holder):
    out = tmp_path / "out"
    proc = holder(out)
    result = cli_run(experiment_file(taskset=ONE_TASK), out)
    assert result.exit_code == 2 and f"pid {proc.pid}" in result.output, result.output
    assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]


def test_the_lock_of_a_killed_runner_is_taken_over_with_a_message(experiment_file, tmp_path, holder):
    out = tmp_path / "out"
    proc = holder(out)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert (out / LOCK_NAME).exists()  # SIGKILL left the lock file; the kernel released the lock
    result = cli_run(experiment_file(taskset=ONE_TASK), out)
    assert result.exit_code == 0, result.output
    assert f"taking over the lock of {out}: the run that held it (pid {proc.pid}" in result.output
    assert not (out / LOCK_NAME).exists()


def test_two_locks_in_one_process_conflict_and_release_frees(tmp_path):
    first = FolderLock.acquire(tmp_path / "a" / "b")
    with pytest.raises(InputError, match=f"pid {os.getpid()}"):
        FolderLock.acquire(tmp_path / "a" / "b")
    first.release(remove_created=True)
    assert not (tmp_path / "a").exists()
    FolderLock.acquire(tmp_path / "a" / "b").release()


@pytest.fixture(scope="module")
def finished_folder(tmp_path_factory) -> tuple[Path, Path]:
    """An experiment of one task x 3 repeats and its finished results folder (run once; tests copy it)."""
    base = tmp_path_factory.mktemp("recorded")
    exp = base / "exp.yaml"
    exp.write_text(yaml.safe_dump({"name": "t", "taskset": ONE_TASK, "strategies": [{"name": "baseline"}],
                                   "repeats": 3, "workers": 1, "sandbox": "none"}))
    result = cli_run(exp, base / "out")
    assert result.exit_code == 0, result.output
    return exp, base / "out"


@pytest.fixture
def recorded(finished_folder, tmp_path) -> tuple[Path, Path, list[str]]:
    """The experiment, this test's copy of its finished results folder, and the lines of its runs.jsonl."""
    exp, source = finished_folder
    out = tmp_path / "out"
    shutil.copytree(source, out)
    return exp, out, (out / "runs.jsonl").read_text().splitlines(keepends=True)


def test_a_corrupt_line_before_the_last_stops_resume_and_nothing_is_rewritten(recorded):
    exp, out, lines = recorded
    lines[1] = lines[1][:40] + "\n"  # a line cut in the middle, with a valid run after it
    (out / "runs.jsonl").write_text("".join(lines[:-1]))  # and one run missing, for resume to do
    before = (out / "runs.jsonl").read_bytes()
    result = cli_run(exp, out, "--resume")
    assert result.exit_code == 2, result.output
    assert f"{out / 'runs.jsonl'}:2: not a run record" in result.output and "Traceback" not in result.output
    assert (out / "runs.jsonl").read_bytes() == before


def test_a_torn_last_line_is_repaired_and_every_valid_run_kept(recorded):
    exp, out, lines = recorded
    (out / "runs.jsonl").write_text("".join(lines[:-1]) + lines[-1][:30])
    result = cli_run(exp, out, "--resume")
    assert result.exit_code == 0, result.output
    assert "repaired a torn last line" in result.output
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert [r["run_id"] for r in runs] == [json.loads(line)["run_id"] for line in lines]


def test_a_last_run_missing_only_its_newline_is_kept(recorded):
    exp, out, lines = recorded
    (out / "runs.jsonl").write_text("".join(lines).rstrip("\n"))
    result = cli_run(exp, out, "--resume")
    assert result.exit_code == 0 and "repaired" not in result.output, result.output
    assert (out / "runs.jsonl").read_text().splitlines(keepends=True) == lines


def test_a_run_recorded_twice_stops_resume(recorded):
    exp, out, lines = recorded
    (out / "runs.jsonl").write_text("".join(lines + lines[:1]))
    result = cli_run(exp, out, "--resume")
    assert result.exit_code == 2 and f":{len(lines) + 1}: run " in result.output, result.output
    assert "already recorded on line 1" in result.output


def test_the_one_manifest_reader_names_the_folder_and_what_fails(tmp_path):
    from ctxbench.harness.records.results_folder import read_manifest

    with pytest.raises(InputError) as missing:
        read_manifest(tmp_path, "cannot resume")
    assert str(missing.value) == f"{tmp_path}: cannot resume, not a results folder (no manifest.json)"
    (tmp_path / "manifest.json").write_text('{"version": 1, "name": "x"}')
    with pytest.raises(InputError) as invalid:
        read_manifest(tmp_path)
    text = str(invalid.value)
    assert text.startswith(f"{tmp_path / 'manifest.json'}: not a ctxbench manifest this version reads (")
    assert "experiment_id: Field required" in text


def test_a_transcript_path_names_its_run(tmp_path):
    from ctxbench.harness.records.results_folder import transcript_files, transcript_path, transcript_run

    path = transcript_path(tmp_path, "trimmer", "calc.v2-median", 3)
    assert path == tmp_path / "transcripts" / "trimmer" / "calc.v2-median.3.jsonl.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"")
    assert transcript_files(tmp_path) == [path]
    assert transcript_run(path) == ("trimmer", "calc.v2-median", 3)


def test_the_transcripts_of_an_agent_arm_are_found_below_its_agents_folder(tmp_path):
    """An arm keyed `AGENT/STRATEGY` (claude-code/auto-compact, builtin/observation_masking) keeps its
    transcripts in a folder below its agent's: they are read with the rest, under the arm's key."""
    from ctxbench.harness.records import TranscriptHeader, TranscriptTurn
    from ctxbench.harness.records import ContextLedger
    from ctxbench.harness.records.results_folder import transcript_path, transcript_run
    from ctxbench.harness.records.transcript import TranscriptWriter, compress_transcript
    from ctxbench.reports import turns_df

    for key in ("baseline", "claude-code/auto-compact"):
        plain = tmp_path / "plain.jsonl"
        writer = TranscriptWriter(plain, TranscriptHeader(run_id=f"{key}/task-a/0", strategy=key, task_id="task-a",
                                                          repeat=0, seed=1))
        writer.turn(TranscriptTurn(turn=0, messages=[], context_tokens=10, fill=0.1, ledger=ContextLedger(),
                                   own_context="rewritten" if "/" in key else None))
        writer.close()
        path = transcript_path(tmp_path, key, "task-a", 0)
        path.parent.mkdir(parents=True)
        path.write_bytes(compress_transcript(plain.read_bytes()))
        assert transcript_run(path) == (key, "task-a", 0)
    turns = turns_df(tmp_path)
    assert sorted(turns["strategy"]) == ["baseline", "claude-code/auto-compact"]
    assert turns.set_index("strategy")["own_context"].to_dict() == {"baseline": "", "claude-code/auto-compact": "rewritten"}
