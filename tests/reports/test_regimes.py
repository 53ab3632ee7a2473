"""Cost under pricing regimes: every call re-priced from the price database, each cost verdict checked
under every regime, and the regime that flips it named."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ctxbench.harness.cli.report import report
from ctxbench.harness.context import Context
from ctxbench.harness.pricing import lookup_price_sheet
from ctxbench.harness.records import ContextLedger, TranscriptEnd, TranscriptHeader, TranscriptTurn, Usage
from ctxbench.harness.records.transcript import TranscriptWriter, TurnRecorder, compress_transcript
from ctxbench.harness.tokens import TokenCounter
from ctxbench.reports import turns_df, write_report
from ctxbench.reports.loading import load_results
from ctxbench.reports.regimes import price_sheets, regime_costs, regime_verdicts
from tests.reports.conftest import manifest, run

TURNS, TASKS, REPEATS = 4, 8, 2


def test_the_price_sheet_comes_from_the_price_database_with_its_batch_prices() -> None:
    sheet, batch = lookup_price_sheet("claude-sonnet-4-5"), lookup_price_sheet("claude-sonnet-4-5", batch=True)
    assert sheet is not None and batch is not None
    assert (sheet.input, sheet.cache_read, sheet.cache_write_5m, sheet.cache_write_1h, sheet.output) == \
        pytest.approx((3.0, 0.3, 3.75, 6.0, 15.0))
    assert (batch.input, batch.output) == pytest.approx((1.5, 7.5)) and batch.source.endswith(", batch")
    assert lookup_price_sheet("no-such-model-anywhere") is None


def _calls(strategy: str, task: int) -> list[tuple[int, int, float | None]]:
    """(prompt, cached, gap) per call: the baseline's long prompt is cached but its calls come 10 minutes
    apart; the lean arm sends half as much, never cached, 10 seconds apart."""
    scale = 1 + 0.05 * task
    if strategy == "baseline":
        return [(int(10000 * scale), 0 if i == 0 else int(9000 * scale), None if i == 0 else 600.0) for i in range(TURNS)]
    return [(int(5000 * scale), 0, None if i == 0 else 10.0) for i in range(TURNS)]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "exp"
    runs = [run(s, f"task-{t}", r, True, tokens=TURNS * (_calls(s, t)[0][0] + 100), turns=TURNS)
            for s in ("baseline", "lean") for t in range(TASKS) for r in range(REPEATS)]
    (path / "transcripts").mkdir(parents=True)
    (path / "manifest.json").write_text(json.dumps(manifest(["baseline", "lean"])))
    (path / "runs.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in runs))
    for r in runs:
        records: list = [TranscriptHeader(run_id=r.run_id, strategy=r.strategy, task_id=r.task_id, repeat=r.repeat,
                                          seed=r.seed)]
        for i, (prompt, cached, gap) in enumerate(_calls(r.strategy, int(r.task_id.split("-")[1]))):
            records.append(TranscriptTurn(turn=i, messages=[], context_tokens=prompt, fill=prompt / 16000,
                                          ledger=ContextLedger({"history": prompt}), usage=Usage(prompt, 100, cached),
                                          gap_s=gap))
        records.append(TranscriptEnd(stop="finished", turns=TURNS))
        (path / "transcripts" / r.strategy).mkdir(exist_ok=True)
        with gzip.open(path / "transcripts" / r.strategy / f"{r.task_id}.{r.repeat}.jsonl.gz", "wt") as fh:
            fh.writelines(x.model_dump_json() + "\n" for x in records)
    return path


def test_each_call_is_re_priced_under_each_regime(folder: Path) -> None:
    folder_ = load_results(folder)
    sheets = price_sheets(folder_.manifest, "claude-sonnet-4-5")
    assert sheets is not None
    costs = regime_costs(turns_df(folder), sheets)
    base = costs.loc["baseline/task-0/0"]
    out = TURNS * 100 * 15.0
    assert base["no cache"] == pytest.approx((TURNS * 10000 * 3.0 + out) / 1e6)
    assert base["cache as observed"] == pytest.approx((10000 * 3.0 + 3 * (1000 * 3.0 + 9000 * 0.3) + out) / 1e6)
    assert base["5-minute TTL"] == pytest.approx((TURNS * 10000 * 3.75 + out) / 1e6)  # 10 minutes apart: no reads
    assert base["1-hour TTL"] == pytest.approx((10000 * 6.0 + 3 * (1000 * 6.0 + 9000 * 0.3) + out) / 1e6)
    assert base["batch"] == pytest.approx(base["cache as observed"] / 2)
    assert costs.loc["lean/task-0/0", "5-minute TTL"] == pytest.approx((TURNS * 5000 * 3.75 + out) / 1e6)


def test_a_cost_verdict_that_flips_names_the_regimes_under_which_it_flips(folder: Path) -> None:
    folder_ = load_results(folder)
    sheets = price_sheets(folder_.manifest, "claude-sonnet-4-5")
    assert sheets is not None
    (lean,) = regime_verdicts(folder_.runs, regime_costs(turns_df(folder), sheets), "baseline", folder_.strategies)
    assert lean.verdicts() == {"no cache": "cheaper", "cache as observed": "dearer", "5-minute TTL": "cheaper",
                               "1-hour TTL": "dearer", "batch": "dearer"}
    assert lean.flips() == {"no cache": "cheaper", "5-minute TTL": "cheaper"}
    paths = write_report(folder, price_as="claude-sonnet-4-5")
    text = paths.markdown.read_text()
    assert ("`lean` vs `baseline`: **dearer** in cost with the cache as observed; flips to **cheaper** under "
            "no cache; **cheaper** under 5-minute TTL.") in text
    first_table = text[text.index("\n| strategy"):].split("\n\n")[0]
    assert "| flips: no cache (cheaper), 5-minute TTL (cheaper) |" in first_table
    assert "Cost: the runs re-priced call by call, cache as observed" in text


def test_without_prices_the_section_says_how_to_get_them_and_an_unknown_model_is_refused(folder: Path) -> None:
    text = write_report(folder).markdown.read_text()
    assert "No prices for this model: `ctxbench report --price-as MODEL`" in text
    result = CliRunner().invoke(report, [str(folder), "--price-as", "no-such-model-anywhere"])
    assert result.exit_code == 2 and "'no-such-model-anywhere' is not in the genai-prices database" in result.output


def test_a_transcript_written_before_the_cache_and_gap_fields_still_loads(folder: Path) -> None:
    file = folder / "transcripts" / "lean" / "task-0.0.jsonl.gz"
    lines = []
    for line in gzip.decompress(file.read_bytes()).decode().splitlines():
        record = json.loads(line)
        record.pop("gap_s", None)
        for key in ("cache_write_tokens", "reasoning_tokens"):
            record.get("usage", {}).pop(key, None)
        lines.append(json.dumps(record) + "\n")
    file.write_bytes(gzip.compress("".join(lines).encode()))
    turns = turns_df(folder)
    old = turns[turns["run_id"] == "lean/task-0/0"]
    assert len(old) == TURNS and old["gap_s"].isna().all() and (old["cache_write_tokens"] == 0).all()
    assert (turns[turns["run_id"] == "lean/task-1/0"]["gap_s"].dropna() == 10.0).sum() == TURNS - 1


def test_a_claude_code_arm_s_calls_far_apart_miss_the_5_minute_cache(tmp_path: Path) -> None:
    """An external agent's turns carry `gap_s`, built by the one turn builder ctxbench's loop uses: Claude
    Code's calls ten minutes apart read nothing from a 5-minute cache, where its turns without `gap_s` (as
    an external agent's were written before) counted every call as within the TTL."""
    arm, path = "claude-code/baseline", tmp_path / "exp"
    result = run(arm, "task-0", 0, True, tokens=TURNS * 10100, turns=TURNS)
    (path / "transcripts" / arm).mkdir(parents=True)
    (path / "manifest.json").write_text(json.dumps(manifest([arm])))
    (path / "runs.jsonl").write_text(result.model_dump_json() + "\n")
    live = path / "transcripts" / arm / "task-0.0.jsonl"
    writer = TranscriptWriter(live, TranscriptHeader(run_id=result.run_id, strategy=arm, task_id="task-0", repeat=0,
                                                     seed=result.seed))
    recorder = TurnRecorder(writer, TokenCounter("cl100k_base"), 200_000, prices=None)
    for i in range(TURNS):
        recorder.call_starts(600.0 * i)  # ten minutes apart
        context = Context([{"role": "user", "content": f"request {i}"}], ContextLedger({"history": 10000}))
        usage = Usage(10000, 100, 0 if i == 0 else 9000, 10000 if i == 0 else 1000)
        recorder.write(recorder.turn(i, context, 10000, "", (), usage, request_messages=2 * i + 1))
    writer.end(TranscriptEnd(stop="finished", turns=TURNS))
    live.with_suffix(".jsonl.gz").write_bytes(compress_transcript(live.read_bytes()))
    live.unlink()

    turns = turns_df(path)
    assert turns["gap_s"].tolist()[1:] == [600.0] * (TURNS - 1)
    sheets = price_sheets(load_results(path).manifest, "claude-sonnet-4-5")
    assert sheets is not None
    recorded = regime_costs(turns, sheets).loc[result.run_id]
    unrecorded = regime_costs(turns.assign(gap_s=None), sheets).loc[result.run_id]
    out = TURNS * 100 * 15.0
    assert recorded["5-minute TTL"] == pytest.approx((TURNS * 10000 * 3.75 + out) / 1e6)  # every call writes anew
    assert unrecorded["5-minute TTL"] == pytest.approx((10000 * 3.75 + 3 * (1000 * 3.75 + 9000 * 0.3) + out) / 1e6)
    assert recorded["5-minute TTL"] > unrecorded["5-minute TTL"]
    assert recorded["1-hour TTL"] == pytest.approx(unrecorded["1-hour TTL"])  # ten minutes are within the hour
