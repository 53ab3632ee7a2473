"""A run's transcript, written turn by turn by the agent loop, read back through the records' models."""

import re
from pathlib import Path

from ctxbench.harness.config import load_config
from ctxbench.harness.records import (TRANSCRIPT_VERSION, TranscriptEnd, TranscriptHeader, TranscriptMessage,
                                      TranscriptObservation, TranscriptTurn, message_hash)
from ctxbench.harness.run.runner import plan_runs, prepare
from ctxbench.harness.run.single_run import live_transcript_path, run_one, transcript_path
from ctxbench.harness.records.transcript import read_transcript
from scripted import ScriptedModel

ROOT = Path(__file__).resolve().parent.parent.parent
TASK = "calc-median-even-length"
LONG_QUERY = "median " + "x" * 500  # longer than any cut a record could make
STEPS = [("read_file", {"path": "calc/stats.py"}), ("search", {"query": LONG_QUERY}),
         ("read_file", {"path": "calc/units.py"}), ("run_tests", {}), ("list_files", {}), ("finish", {})]


def run_scripted(experiment_file, tmp_path, strategy):
    config = load_config(experiment_file(strategies=[strategy]), [f"taskset.ids=[{TASK}]"])
    ctx = prepare(config, tmp_path, tmp_path / "out")
    spec = plan_runs(config, ctx.taskset)[0]
    model = ScriptedModel(STEPS)
    finished = run_one(ctx, spec, model_factory=lambda task, counter, seed: model)
    return ctx, spec, finished, model


def test_every_turn_is_recorded_with_messages_calls_observations_usage_and_ledger(experiment_file, tmp_path):
    ctx, spec, finished, model = run_scripted(experiment_file, tmp_path,
                                              {"name": "trimmer", "params": {"limit": 200, "hard_cap": 200}})
    result = finished.result
    assert result.failure_reason != "harness_error", result.error
    live = live_transcript_path(ctx, spec)
    assert live.exists()  # the runner compresses and removes it once the run is recorded
    path = transcript_path(ctx.output_dir, spec.strategy, spec.task_id, spec.repeat)
    path.write_bytes(finished.transcript)
    records = list(read_transcript(path))

    header, end = records[0], records[-1]
    assert isinstance(header, TranscriptHeader) and header.version == TRANSCRIPT_VERSION
    assert (header.run_id, header.seed) == (spec.run_id, spec.seed)
    assert isinstance(end, TranscriptEnd) and end.stop == "finished" and end.turns == result.turns == len(STEPS)

    messages: dict[str, dict] = {}
    turns = []
    for record in records[1:-1]:
        if isinstance(record, TranscriptMessage):
            assert record.hash not in messages, "each message is stored once"
            assert message_hash(record.message) == record.hash
            messages[record.hash] = record.message
        else:
            assert isinstance(record, TranscriptTurn)
            assert all(h in messages for h in record.messages), "a turn refers only to messages already written"
            turns.append(record)
    assert [t.turn for t in turns] == list(range(len(STEPS)))
    for turn, sent in zip(turns, model.seen):
        assert [messages[h] for h in turn.messages] == sent, "the messages are exactly what the model was sent"
        assert turn.usage.prompt_tokens == 100 and turn.usage.completion_tokens == 10
        assert turn.reply.startswith("step ")
        assert [o.call_id for o in turn.observations] == [c.id for c in turn.tool_calls]
        for obs in turn.observations:
            assert isinstance(obs, TranscriptObservation) and obs.size == len(obs.content) and obs.tokens > 0
        assert sum(turn.ledger.components.values()) > 0 and 0 < turn.fill < 1
    assert turns[1].tool_calls[0].arguments == f'{{"query": "{LONG_QUERY}"}}', "arguments are kept in full"
    assert turns[0].observations[0].kind == "file_read" and "def median" in turns[0].observations[0].content

    trimmed = [a for t in turns for a in t.ledger.actions if a.kind == "trimmed"]
    call_ids = {c.id for t in turns for c in t.tool_calls}
    assert trimmed and all(a.target in call_ids for a in trimmed), "actions name the tool calls they cut"
    assert sum(len(t.ledger.actions) for t in turns) >= result.context_loss_events > 0


def test_a_run_that_ends_early_records_why(experiment_file, tmp_path):
    config = load_config(experiment_file(), [f"taskset.ids=[{TASK}]", "limits.max_turns=2"])
    ctx = prepare(config, tmp_path, tmp_path / "out")
    spec = plan_runs(config, ctx.taskset)[0]
    finished = run_one(ctx, spec, model_factory=lambda task, counter, seed: ScriptedModel(STEPS))
    path = tmp_path / "t.jsonl.gz"
    path.write_bytes(finished.transcript)
    records = list(read_transcript(path))
    assert [r.turn for r in records if isinstance(r, TranscriptTurn)] == [0, 1]
    assert isinstance(records[-1], TranscriptEnd) and records[-1].stop == "max_turns"
    assert finished.result.failure_reason == "max_turns"


def test_the_transcript_format_is_documented():
    doc = (ROOT / "docs" / "results.md").read_text()
    section = doc[doc.index("## Transcripts"):]
    section = section[:section.index("\n## ", 3)]
    assert f"version **{TRANSCRIPT_VERSION}**" in section
    fields = set()
    for model in (TranscriptHeader, TranscriptMessage, TranscriptTurn, TranscriptObservation, TranscriptEnd):
        fields |= set(model.model_fields) - {"type"}
    fields |= {"components", "actions", "strategy_prompt_tokens", "strategy_completion_tokens", "kind", "target",
               "reason", "tokens_before", "tokens_after", "prompt_tokens", "completion_tokens", "cached_tokens",
               "id", "name", "arguments"}
    missing = sorted(f for f in fields if not re.search(rf"`{f}`", section))
    assert missing == []


def test_the_loop_s_turns_carry_their_cost_and_the_seconds_since_the_previous_call(experiment_file, tmp_path):
    """The fields an external agent's and the gateway's turns carry (one builder, TurnRecorder)."""
    config = load_config(experiment_file(model={"pricing": {"input": 2.0, "cached_input": 1.0, "output": 8.0}}),
                         [f"taskset.ids=[{TASK}]"])
    ctx = prepare(config, tmp_path, tmp_path / "out")
    spec = plan_runs(config, ctx.taskset)[0]
    finished = run_one(ctx, spec, model_factory=lambda task, counter, seed: ScriptedModel(STEPS))
    path = transcript_path(ctx.output_dir, spec.strategy, spec.task_id, spec.repeat)
    path.write_bytes(finished.transcript)
    turns = [r for r in read_transcript(path) if isinstance(r, TranscriptTurn)]
    assert len(turns) == len(STEPS)
    assert all(t.cost_usd == (100 * 2.0 + 10 * 8.0) / 1e6 for t in turns)
    assert turns[0].gap_s is None and all(t.gap_s is not None and t.gap_s >= 0 for t in turns[1:])
    assert finished.result.cost_usd == round(len(STEPS) * (100 * 2.0 + 10 * 8.0) / 1e6, 8)
