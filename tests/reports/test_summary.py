import gzip
import math

import pytest

from ctxbench.reports.frames import turns_df
from ctxbench.reports.loading import load_results
from ctxbench.reports.stats import wilson_interval
from ctxbench.reports.summary import failure_frame, repeat_rates, summarize, summary_frame, task_table


def test_load_results_one_row_per_run(two_strategy_folder):
    folder = load_results(two_strategy_folder)
    assert len(folder.runs) == 12
    assert folder.strategies == ["baseline", "lean"]
    assert folder.manifest.simulated is True
    assert set(folder.runs["resolved"]) == {True, False}


def test_summary_against_hand_computed_values(two_strategy_folder):
    folder = load_results(two_strategy_folder)
    base, lean = summarize(folder.runs, folder.strategies)
    assert (base.runs, base.resolved, lean.resolved) == (6, 5, 2)
    assert base.completion_rate == pytest.approx(5 / 6)
    # clustered by task (2 tasks): wider than the Wilson interval of 6 independent runs
    low, high = wilson_interval(5, 6)
    assert base.ci_low < low and base.ci_high > high and base.ci_low <= 5 / 6 <= base.ci_high
    # per-repeat rates of baseline: 1, 1/2, 1
    assert base.repeats == 3
    assert base.repeat_mean == pytest.approx(5 / 6)
    assert base.repeat_std == pytest.approx(math.sqrt(1 / 12))
    assert (base.repeat_min, base.repeat_max) == (0.5, 1.0)
    # task-0 3/3, task-1 2/3
    assert base.pass_at_k == pytest.approx({1: 5 / 6, 2: 1.0, 3: 1.0})
    assert base.pass_hat_k == pytest.approx({1: 5 / 6, 2: 2 / 3, 3: 0.5})
    # lean: 1/3 on each task
    assert lean.pass_at_k == pytest.approx({1: 1 / 3, 2: 2 / 3, 3: 1.0})
    assert lean.pass_hat_k == pytest.approx({1: 1 / 3, 2: 0.0, 3: 0.0})
    assert base.tokens_per_resolved == pytest.approx(12000 / 5)
    assert lean.tokens_per_resolved == pytest.approx(6000 / 2)
    assert base.failures["max_turns"] == 1 and base.failures["tests_failed"] == 0
    assert lean.failures["tests_failed"] == 4
    assert lean.failure_share("tests_failed") == pytest.approx(4 / 6)
    assert base.turns_mean == 5.0 and base.wall_mean == 2.0


def test_token_distribution(tmp_path, build):
    runs = [build.run("baseline", f"t{i}", 0, i % 2 == 0, tokens=100 * (i + 1)) for i in range(10)]
    folder = load_results(build.write_folder(tmp_path / "r", runs, build.manifest(["baseline"]), transcripts=False))
    (s,) = summarize(folder.runs)
    assert (s.tokens_mean, s.tokens_median, s.tokens_p90) == pytest.approx((550, 550, 910))
    assert s.tokens_per_resolved == pytest.approx(5500 / 5)
    assert math.isnan(s.repeat_std)  # one repeat: no spread to speak of
    assert s.pass_at_k == pytest.approx({1: 0.5})


def test_tables(two_strategy_folder):
    folder = load_results(two_strategy_folder)
    summaries = summarize(folder.runs, folder.strategies)
    frame = summary_frame(summaries)
    assert list(frame["strategy"]) == ["baseline", "lean"]
    assert {"runs", "completion_rate", "ci_low", "ci_high", "repeat_std", "tokens_mean", "pass@3", "pass^3",
            "fail_max_turns"} <= set(frame.columns)
    shares = failure_frame(summaries, share=True)
    assert list(shares.index) == ["tests_failed", "max_turns"]
    assert shares.loc["max_turns", "baseline"] == pytest.approx(1 / 6)
    table = task_table(folder.runs, folder.strategies)
    assert table.loc["task-1", "baseline"] == "2/3" and table.loc["task-0", "lean"] == "1/3"
    rates = repeat_rates(folder.runs)
    assert len(rates) == 6


def test_turns_df_reads_the_context_fill_of_every_turn(two_strategy_folder):
    fill = turns_df(two_strategy_folder)
    assert len(fill) == 12 * 5
    assert set(fill["strategy"]) == {"baseline", "lean"}
    assert fill["turn"].max() == 4


def test_empty_results_folder_is_an_error(tmp_path, build):
    from ctxbench.harness.errors import InputError

    build.write_folder(tmp_path / "empty", [], build.manifest(["baseline"]), transcripts=False)
    with pytest.raises(InputError, match="no runs"):
        load_results(tmp_path / "empty")
    with pytest.raises(InputError, match="manifest.json"):
        load_results(tmp_path)


def test_turns_df_refuses_a_transcript_of_another_format(two_strategy_folder):
    from ctxbench.harness.errors import InputError

    old = next((two_strategy_folder / "transcripts").glob("*/*.jsonl.gz"))
    with gzip.open(old, "wt") as fh:
        fh.write('{"turn": 0, "context_tokens": 10, "fill": 0.1}\n')
    with pytest.raises(InputError, match=str(old.name)):
        turns_df(two_strategy_folder)
