"""A run's transcript: one JSON record per line (see ctxbench.harness.records, docs/transcripts.md),
appended and flushed as each turn ends, so a killed run keeps every turn it finished.

`TurnRecorder` builds every agent's turns one way (ctxbench's loop, an external agent's route, the
gateway), so that each carries the same fields: the context sent, its tokens and fill, the reply, its
usage and cost (`ctxbench.harness.pricing.usage_cost`), the seconds since the previous model call
(`gap_s`, what the cache-TTL pricing regimes read), and what the tools returned.
"""

from __future__ import annotations

import dataclasses
import gzip
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from ctxbench.harness.context import Context
from ctxbench.harness.pricing import Prices, usage_cost
from ctxbench.harness.records import (TRANSCRIPT_RECORD, TRANSCRIPT_VERSION, History, Observation, ToolCall,
                                      TranscriptEnd, TranscriptHeader, TranscriptMessage, TranscriptObservation,
                                      TranscriptTurn, Usage, message_hash)
from ctxbench.harness.records.run_records import OwnContext
from ctxbench.harness.redact import scrub
from ctxbench.harness.tokens import TokenCounter

__all__ = ["TranscriptWriter", "TurnRecorder", "transcript_observations", "read_transcript", "compress_transcript"]


class TranscriptWriter:
    """Writes one run's transcript; each distinct message is written once and referred to by hash."""

    def __init__(self, path: Path, header: TranscriptHeader) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh: IO[str] | None = path.open("w", encoding="utf-8")
        self._seen: set[str] = set()
        self._write(header)
        self._flush()

    def _write(self, record: Any) -> None:
        assert self._fh is not None, "transcript already closed"
        self._fh.write(record.model_dump_json() + "\n")

    def message_hashes(self, messages: list[dict[str, Any]]) -> list[str]:
        """The hashes of `messages`, writing those not seen before in this run."""
        hashes = []
        for message in messages:
            key = message_hash(message)
            if key not in self._seen:
                self._seen.add(key)
                self._write(TranscriptMessage(hash=key, message=message))
            hashes.append(key)
        return hashes

    def turn(self, record: TranscriptTurn) -> None:
        self._write(record)
        self._flush()

    def end(self, record: TranscriptEnd) -> None:
        self._write(record)
        self.close()

    def _flush(self) -> None:
        if self._fh is not None:
            self._fh.flush()

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None


class TurnRecorder:
    """Builds and writes one conversation's turns (a run's, or a gateway conversation's), the same way for
    every agent."""

    def __init__(self, transcript: TranscriptWriter, counter: TokenCounter, context_window: int,
                 prices: Prices | None) -> None:
        self.transcript, self.counter, self.window, self.prices = transcript, counter, context_window, prices
        self._started: float | None = None
        self._gap_s: float | None = None
        self._pending: TranscriptTurn | None = None

    def call_starts(self, at: float) -> None:
        """A model call starts at `at` (`time.monotonic()`): the next turn's `gap_s` is the seconds since
        the previous call started (None for the first)."""
        self._gap_s = None if self._started is None else round(at - self._started, 3)
        self._started = at

    def turn(self, index: int, context: Context, context_tokens: int, reply: str, tool_calls: Iterable[ToolCall],
             usage: Usage, observations: Iterable[Observation] = (), malformed: str = "",
             request_messages: int | None = None, own_context: OwnContext | None = None,
             finish_reason: str | None = None) -> TranscriptTurn:
        """Turn `index`: the `context` sent (its tokens counted once, by the caller), the model's `reply`,
        `tool_calls` and `usage` (with its cost), what the tools returned, and, for another agent's request,
        how many messages it sent and what it did to its own context."""
        return TranscriptTurn(
            turn=index, messages=self.transcript.message_hashes(context.messages), context_tokens=context_tokens,
            fill=round(context_tokens / self.window, 4), ledger=context.ledger, reply=reply,
            tool_calls=list(tool_calls), observations=transcript_observations(observations, self.counter),
            usage=usage, malformed=malformed or None, cost_usd=usage_cost(self.prices, usage), gap_s=self._gap_s,
            request_messages=request_messages, own_context=own_context, finish_reason=finish_reason)

    def write(self, turn: TranscriptTurn) -> None:
        self.transcript.turn(turn)

    @property
    def holding(self) -> bool:
        """Whether a turn waits for the agent's next request (`hold`)."""
        return self._pending is not None

    def hold(self, turn: TranscriptTurn) -> None:
        """Keep `turn` until the agent's next request shows what its commands returned (`release`)."""
        self._pending = turn

    def release(self, history: History | None) -> None:
        """Write the held turn, with what its commands returned: the results in the last turn of `history`
        (the agent's next request read as a History) that answer its calls, or, for a text-mode reply, that
        turn's observation. Without a next request (`history` None), or for a reply the agent did not act
        on (a summary it asked for), it has none."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        if history is not None and history.turns:
            last, ids = history.turns[-1], {c.id for c in pending.tool_calls}
            answers = [o for o in last.observations if o.call_id in ids] if ids else \
                list(last.observations) if not last.tool_calls else []
            pending.observations = transcript_observations(
                [dataclasses.replace(o, content=scrub(o.content)) for o in answers], self.counter)
        self.write(pending)


def transcript_observations(observations: Iterable[Observation], counter: TokenCounter) -> list[TranscriptObservation]:
    """A turn's observations as its transcript records them (content in full, its size and tokens)."""
    return [TranscriptObservation(call_id=o.call_id, tool=o.tool, kind=o.kind, is_error=o.is_error, content=o.content,
                                  size=len(o.content), tokens=counter.count(o.content), path=o.path,
                                  line_range=o.line_range)
            for o in observations]


def compress_transcript(data: bytes) -> bytes:
    """The gzipped form the results folder keeps (deterministic: no timestamp)."""
    return gzip.compress(data, compresslevel=5, mtime=0)


def read_transcript(path: Path) -> Iterator[Any]:
    """The records of a transcript (`.jsonl.gz`, or the plain `.jsonl` of a run still running or killed,
    whose last line may be torn: it is left out).

    Raises:
        ValueError: a line is not a transcript record of this version.
    """
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.endswith("\n"):
                break
            if not line.strip():
                continue
            record = TRANSCRIPT_RECORD.validate_json(line)
            if isinstance(record, TranscriptHeader) and record.version != TRANSCRIPT_VERSION:
                raise ValueError(f"{path}:{n}: transcript version {record.version}, expected {TRANSCRIPT_VERSION}")
            yield record
