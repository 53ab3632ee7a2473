"""A run's transcript: one JSON record per line (see ctxbench.harness.records, docs/transcripts.md),
appended and flushed as each turn ends, so a killed run keeps every turn it finished."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import IO, Any, Iterator

from ctxbench.harness.records import (TRANSCRIPT_RECORD, TRANSCRIPT_VERSION, TranscriptEnd, TranscriptHeader,
                                      TranscriptMessage, TranscriptTurn, message_hash)

__all__ = ["TranscriptWriter", "read_transcript", "compress_transcript"]


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
