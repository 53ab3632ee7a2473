"""The one head-and-tail cutter: keep the start and the end of a long text, bytes or stream, and say
how much of the middle was left out. The trimmer, the tools' output cap and the sandbox's output
buffer all cut through it."""

from __future__ import annotations

from typing import TypeVar

from ctxbench.harness.markup.placeholders import omission

__all__ = ["keep_ends", "omission", "cut_middle", "cap_bytes", "HeadTailBuffer"]

S = TypeVar("S", str, bytes)


def keep_ends(data: S, head: int, tail: int) -> tuple[S, S, int]:
    """The first `head` and last `tail` items of `data` and how many lie between (0: all of it is the head)."""
    if len(data) <= head + tail:
        return data, data[:0], 0
    return data[:head], data[len(data) - tail:], len(data) - head - tail


def cut_middle(text: str, keep: int, head_ratio: float = 0.5, what: str = "characters") -> str:
    """`text` if it has at most `keep` characters, else its head and tail around a marker.

    The head gets `int(keep * head_ratio)` characters, the tail the rest of `keep`; the marker
    `[… N characters omitted …]` says how many were dropped.
    """
    head = int(keep * head_ratio)
    first, last, omitted = keep_ends(text, head, keep - head)
    return f"{first}{omission(omitted, what)}{last}" if omitted else text


def cap_bytes(text: str, limit: int, what: str = "bytes") -> str:
    """`text` within `limit` UTF-8 bytes: half of the limit from each end, the middle replaced by a marker."""
    data = text.encode("utf-8", errors="replace")
    if len(data) <= limit:
        return text
    half = limit // 2
    first, last, omitted = keep_ends(data, half, half)
    return (first.decode("utf-8", errors="ignore") + omission(omitted, what)
            + last.decode("utf-8", errors="ignore"))


class HeadTailBuffer:
    """Keeps the first `head` and the last `tail` bytes of a stream fed in chunks, counts what falls between."""

    def __init__(self, head: int, tail: int) -> None:
        self.head_size, self.tail_size = head, tail
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, chunk: bytes) -> None:
        room = self.head_size - len(self.head)
        if room > 0:
            self.head.extend(chunk[:room])
            chunk = chunk[room:]
        self.tail.extend(chunk)
        if len(self.tail) > self.tail_size:
            self.dropped += len(self.tail) - self.tail_size
            del self.tail[: len(self.tail) - self.tail_size]

    def text(self, what: str = "bytes") -> str:
        middle = omission(self.dropped, what) if self.dropped else ""
        return self.head.decode(errors="replace") + middle + self.tail.decode(errors="replace")
