"""`ctxbench export-inspect`: one Inspect eval log per arm, read back with Inspect's own reader."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.config import load_config
from ctxbench.harness.records.results import read_results
from ctxbench.harness.run.runner import prepare, run_experiment
from ctxbench.harness.records.transcript import read_transcript
from ctxbench.harness.records import TranscriptTurn
from ctxbench.harness.records.results_folder import transcript_path

TASKS = "[textutils-wrap-overflow, calc-median-even-length]"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("inspect") / "qs"
    config = load_config("quickstart", ["repeats=1", "workers=1", "sandbox=none", f"taskset={{path: smoke, ids: {TASKS}}}",
                                        "strategies=[{name: baseline}, {name: observation_masking}]"])
    run_experiment(prepare(config, Path("."), out), progress=False)
    return out


def test_each_arm_becomes_an_inspect_log_with_one_sample_per_run(folder: Path, tmp_path: Path) -> None:
    from inspect_ai.analysis import samples_df
    from inspect_ai.log import read_eval_log

    result = CliRunner().invoke(cli, ["export-inspect", str(folder), "--output", str(tmp_path / "logs")])
    assert result.exit_code == 0, result.output
    logs = sorted((tmp_path / "logs").glob("*.eval"))
    assert [p.name for p in logs] == ["baseline.eval", "observation_masking.eval"]
    assert result.output.splitlines() == [str(tmp_path / "logs" / n) for n in ("baseline.eval", "observation_masking.eval")]
    runs = {r.run_id: r for r in read_results(folder / "runs.jsonl")}
    for path in logs:
        log = read_eval_log(str(path))
        assert log.status == "success" and log.eval.model == "sim/sim-coder" and log.samples is not None
        assert len(log.samples) == 2 and log.eval.metadata["strategy"] == path.stem
        for sample in log.samples:
            run = runs[sample.metadata["run_id"]]
            assert sample.scores["resolved"].value == ("C" if run.resolved else "I")
            usage = sample.model_usage["sim/sim-coder"]
            assert usage.input_tokens_cache_read == run.cached_tokens
            assert usage.input_tokens + usage.input_tokens_cache_read == run.prompt_tokens
            turns = [t for t in read_transcript(transcript_path(folder, run.strategy, run.task_id, run.repeat))
                     if isinstance(t, TranscriptTurn)]
            assert len(sample.metadata["ledger"]) == run.turns == len(turns)
            assert len(sample.messages) == len(turns[-1].messages) + 1  # as last sent, then the last reply
            assert sample.messages[0].role == "system" and sample.messages[-1].role == "assistant"
        assert log.eval.task == f"ctxbench/quickstart/{path.stem}"
        assert log.stats.completed_at > log.stats.started_at
        arm = [r for r in runs.values() if r.strategy == path.stem]  # the viewer's token column: the arm's totals
        assert log.stats.model_usage["sim/sim-coder"].total_tokens == sum(r.prompt_tokens + r.completion_tokens for r in arm)
        for sample in log.samples:
            run = runs[sample.metadata["run_id"]]
            assert sample.total_time == run.wall_s > 0
            assert sample.scores["resolved"].answer == run.patch
            assert sample.output.completion == sample.messages[-1].text
    # Inspect View takes logs sharing a task id for retries of one eval and lists the last only
    headers = [read_eval_log(str(p), header_only=True).eval for p in logs]
    assert len({h.task_id for h in headers}) == len({h.eval_id for h in headers}) == len({h.task for h in headers}) == 2
    frame = samples_df([str(p) for p in logs])
    assert len(frame) == len(runs) == 4
    assert sorted(frame["metadata_run_id"]) == sorted(runs)
