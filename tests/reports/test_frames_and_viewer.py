"""runs_df / turns_df round-trip a real results folder; `ctxbench show` and the run pages explain each turn."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.harness.config import load_config
from ctxbench.harness.records.results import read_results
from ctxbench.harness.run.runner import prepare, run_experiment
from ctxbench.harness.records.transcript import read_transcript
from ctxbench.harness.records import TranscriptTurn
from ctxbench.reports import TURN_COLUMNS, run_records, runs_df, turns_df, write_report

QUICKSTART_ARMS = ("strategies=[{name: baseline}, {name: observation_masking, params: {keep_recent: 1}}, "
                   "{name: trimmer, params: {limit: 300, keep_recent: 0}}, "
                   "{name: summarizer, params: {history_share: 0.1, keep_recent: 2}}]")


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """The quickstart experiment on one smoke task, once, with masking, trimming and summarizing that act early."""
    out = tmp_path_factory.mktemp("frames") / "qs"
    config = load_config("quickstart", ["repeats=1", "workers=1", "sandbox=none",
                                        "taskset={path: smoke, ids: [textutils-contractions]}", QUICKSTART_ARMS])
    run_experiment(prepare(config, Path("."), out), progress=False)
    write_report(out)
    return out


def test_runs_df_round_trips_runs_jsonl(folder: Path) -> None:
    frame = runs_df(folder)
    assert len(frame) == 4 and list(frame["strategy"]) == ["baseline", "observation_masking", "trimmer", "summarizer"]
    assert run_records(frame) == read_results(folder / "runs.jsonl")


def test_turns_df_holds_every_turn_of_every_transcript(folder: Path) -> None:
    turns = turns_df(folder)
    assert list(turns.columns) == list(TURN_COLUMNS)
    runs = {r.run_id: r for r in read_results(folder / "runs.jsonl")}
    assert set(turns["run_id"]) == set(runs)
    for run_id, rows in turns.groupby("run_id"):
        run = runs[run_id]
        assert len(rows) == run.turns and list(rows["turn"]) == list(range(run.turns))
        assert rows["prompt_tokens"].sum() == run.prompt_tokens
        assert rows["cached_tokens"].sum() == run.cached_tokens
        assert rows["completion_tokens"].sum() == run.completion_tokens
        assert rows["stop"].iloc[-1] != "" and (rows["stop"].iloc[:-1] == "").all()
        file = folder / "transcripts" / run.strategy / f"{run.task_id}.{run.repeat}.jsonl.gz"
        records = [r for r in read_transcript(file) if isinstance(r, TranscriptTurn)]
        for record, row in zip(records, rows.itertuples()):
            assert {c: getattr(row, f"tokens_{c}") for c in record.ledger.components} == record.ledger.components
            assert json.loads(row.actions) == [{"kind": a.kind, "target": a.target, "reason": a.reason,
                                                "tokens_before": a.tokens_before, "tokens_after": a.tokens_after}
                                               for a in record.ledger.actions]
            assert row.context_tokens == record.context_tokens and row.reply == record.reply
    masked = turns[turns["strategy"] == "observation_masking"]
    assert masked["actions_masked"].max() >= 1 and (turns[turns["strategy"] == "baseline"]["actions"] == "[]").all()


def test_a_summarizer_run_shows_cached_tokens_falling_when_it_re_summarizes(folder: Path) -> None:
    turns = turns_df(folder)
    summarizer = turns[turns["strategy"] == "summarizer"].reset_index(drop=True)
    baseline = turns[turns["strategy"] == "baseline"].reset_index(drop=True)
    first = int(summarizer.index[summarizer["tokens_summary"] > 0][0])
    assert summarizer.loc[first - 1, "cached_tokens"] > 1024, "the history was cached while it was only appended"
    assert summarizer.loc[first, "cached_tokens"] < summarizer.loc[first - 1, "cached_tokens"]
    resummarized = summarizer[summarizer["actions_summarized"] > 0]
    assert (resummarized["cached_tokens"] < 1024).all(), "a new summary near the top: only the head stays cached"
    assert baseline["cached_tokens"].iloc[-1] > summarizer["cached_tokens"].iloc[-1]


def test_the_report_is_built_from_the_frames_and_links_every_run(folder: Path) -> None:
    report = (folder / "report.md").read_text()
    page = (folder / "report.html").read_text()
    for run in read_results(folder / "runs.jsonl"):
        href = f"runs/{run.strategy}/{run.task_id}.{run.repeat}.html"
        assert f'<a href="{href}">' in page and f"]({href})" in report
        html = (folder / href).read_text()
        assert html.startswith("<!DOCTYPE html>") and f"Run {run.run_id}" in html
        assert not re.search(r'(src|href)="(https?:)?//', html), "a run page loads nothing from outside"
    assert (folder / "plots" / "context_fill.png").is_file(), "the fill plot comes from turns_df"
    masking = (folder / "runs" / "observation_masking" / "textutils-contractions.0.html").read_text()
    assert "<code>masked</code>" in masking and "The model received" in masking


def test_show_prints_what_a_masked_observation_was_what_the_model_got_and_the_action(folder: Path) -> None:
    result = CliRunner().invoke(cli, ["show", str(folder), "observation_masking/textutils-contractions/0"])
    assert result.exit_code == 0, result.output
    text = result.output
    action = re.search(r"- `masked` `(call_\w+)`: ([\d,]+) → ([\d,]+) tokens — observation older than the last 1",
                       text)
    assert action, text[:3000]
    call_id = action.group(1)
    after = text[action.end():]
    original = re.match(r"\s*Original: `(\w+)\((.*)\)` at turn (\d+), ([\d,]+) characters, ([\d,]+) tokens", after)
    assert original, after[:500]
    received = re.search(r"The model received \(([\d,]+) characters\):\s*```text\n(\[output of .*\])\n```", after)
    assert received and f"{original.group(4)} characters" in received.group(2)
    assert f"## Turn {int(original.group(3))}" in text and f"**Tool** `{call_id}`" in text
    assert "changed: tool " + call_id in text


def test_show_lists_runs_and_refuses_an_unknown_one(folder: Path) -> None:
    listing = CliRunner().invoke(cli, ["show", str(folder)])
    assert listing.exit_code == 0 and "observation_masking/textutils-contractions/0" in listing.output
    assert "4 runs" in listing.output
    unknown = CliRunner().invoke(cli, ["show", str(folder), "observation_maskin/textutils-contractions/0"])
    assert unknown.exit_code == 2
    assert "did you mean 'observation_masking/textutils-contractions/0'" in unknown.output


def test_the_summary_gives_the_outputs_each_run_masked(folder: Path) -> None:
    masked: dict[str, set[str]] = {}
    for record in read_results(folder / "runs.jsonl"):
        file = folder / "transcripts" / record.strategy / f"{record.task_id}.{record.repeat}.jsonl.gz"
        masked[record.strategy] = {a.target for r in read_transcript(file) if isinstance(r, TranscriptTurn)
                                   for a in r.ledger.actions if a.kind == "masked"}
    assert len(masked["observation_masking"]) >= 2 and not masked["baseline"] and not masked["trimmer"]
    summary = pd.read_csv(folder / "summary.csv").set_index("strategy")
    assert {s: summary.loc[s, "masked_mean"] for s in masked} == {s: len(v) for s, v in masked.items()}
    report = (folder / "report.md").read_text()
    assert "| turns (mean) | masked outputs (mean per run) |" in report
    row = next(line for line in report.splitlines() if line.startswith("| observation_masking | 1 |"))
    assert f"| {len(masked['observation_masking'])}.0 |" in row
