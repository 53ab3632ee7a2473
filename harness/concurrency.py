"""How much runs in flight may do at once, per worker process: model calls per endpoint (an adaptive
limit) and subprocesses (tests, tools).

Each worker process holds a share of the experiment's limits (`configure`); the runner sums what the
processes report (`snapshot`, sent back with every finished run) for the progress line and the manifest.

The calls in flight to an endpoint follow an AIMD rule: each answered call raises the limit by half a
call (so by half the limit per round trip) up to the configured ceiling; a call refused with 429 or 503
lowers it to 70 %, at most once per round trip: a refusal counts only when it was sent after the last
decrease and at least one round trip (the mean time of an answered call, `round_trip_s`) after it.
Refusals often come back at once, while answers take the endpoint's latency: were each refusal of a
retried call a new signal, a steady share of refused calls would take the limit to its floor within
seconds whatever the endpoint could still answer. Once per round trip, the limit settles where the
calls answered in a round trip make up for one decrease (near what the endpoint answers at once).
A refused call keeps its slot while it waits what `Retry-After` says, or about one round trip
(`retry_wait`), and retries in it: the calls in flight and the refused calls waiting to retry are
within the limit together, so an endpoint refusing at once is not sent a new call for each refusal,
and the limit, not a growing backoff per call, is what sheds load.
"""

from __future__ import annotations

import random
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from ctxbench.harness.config import DEFAULT_RUNS_IN_FLIGHT

__all__ = ["EndpointLimit", "Gauge", "configure", "endpoint_limit", "subprocess_slot", "snapshot", "combine",
           "INCREASE_PER_CALL", "DECREASE_FACTOR", "ROUND_TRIP_WEIGHT"]

INCREASE_PER_CALL = 0.5
"""What an answered call adds to its endpoint's limit (up to the ceiling)."""
DECREASE_FACTOR = 0.7
"""What a 429 or 503 multiplies the limit by (at most once per round trip)."""
ROUND_TRIP_WEIGHT = 0.2
"""Weight of the latest answered call in the moving mean of the round trip."""


class EndpointLimit:
    """The calls in flight to one endpoint from this process: at most `limit`, adapted between 1 and
    `ceiling`."""

    def __init__(self, ceiling: int) -> None:
        self.ceiling = ceiling
        self.limit = float(ceiling)
        self.lowest = float(ceiling)
        self.in_flight = 0
        self.peak = 0
        self.throttled = 0
        self.round_trip_s: float | None = None
        """Moving mean of the seconds an answered call took (None before the first answer)."""
        self._last_decrease = float("-inf")
        self._cond = threading.Condition()

    @contextmanager
    def call(self) -> Iterator[CallSlot]:
        """A slot for one call and its retries after refusals: waits while `limit` calls are in flight."""
        with self._cond:
            while self.in_flight >= max(1, int(self.limit)):
                self._cond.wait()
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        slot = CallSlot(self, time.monotonic())
        try:
            yield slot
        finally:
            with self._cond:
                self.in_flight -= 1
                self._settle(slot, slot.outcome)
                self._cond.notify_all()

    def _settle(self, slot: CallSlot, outcome: str) -> None:
        """Count the outcome of the slot's latest request, once (under the lock)."""
        if slot.settled:
            return
        slot.settled, slot.outcome = True, outcome
        now = time.monotonic()
        if outcome == "answered":
            self.limit = min(float(self.ceiling), self.limit + INCREASE_PER_CALL)
            took = now - slot.started
            self.round_trip_s = took if self.round_trip_s is None else \
                (1 - ROUND_TRIP_WEIGHT) * self.round_trip_s + ROUND_TRIP_WEIGHT * took
        elif outcome == "throttled":
            self.throttled += 1
            if slot.started > self._last_decrease and now - self._last_decrease >= (self.round_trip_s or 0.0):
                self.limit = max(1.0, self.limit * DECREASE_FACTOR)
                self.lowest = min(self.lowest, self.limit)
                self._last_decrease = now

    def retry_wait(self, floor: float) -> float:
        """How long a refused call waits before it queues again (without a `Retry-After`): between half
        and all of one round trip, and at least half of `floor` (before any answer, `floor`)."""
        with self._cond:
            span = max(floor, self.round_trip_s or floor)
        return span * random.uniform(0.5, 1.0)

    def gauge(self) -> Gauge:
        with self._cond:
            return Gauge(int(self.limit), self.ceiling, int(self.lowest), self.peak, self.throttled)


@dataclass
class CallSlot:
    """One call's place among the calls in flight; a refused call keeps it through its wait and retries
    in it, so the retries of refused calls count in the limit."""

    limit: EndpointLimit
    started: float
    """When the latest request in this slot was sent."""
    outcome: str = "failed"
    """`answered`, `throttled` (429 / 503) or `failed` (anything else: the limit stays)."""
    settled: bool = False

    def settle(self, outcome: str) -> None:
        """The latest request's outcome, counted now (a refusal lowers the limit at once)."""
        with self.limit._cond:
            self.limit._settle(self, outcome)
            self.limit._cond.notify_all()

    def again(self) -> None:
        """A new request in this slot (a refused call's retry)."""
        self.started, self.outcome, self.settled = time.monotonic(), "failed", False


@dataclass(frozen=True)
class Gauge:
    """One endpoint's limit as a process saw it, or several processes' summed (`combine`)."""

    limit: int
    ceiling: int
    lowest: int
    peak: int
    throttled: int

    def as_dict(self) -> dict[str, int]:
        return {"limit": self.limit, "ceiling": self.ceiling, "lowest": self.lowest, "peak_in_flight": self.peak,
                "throttled": self.throttled}


_LOCK = threading.Lock()
_LIMITS: dict[str, EndpointLimit] = {}
_SHARE = 1
"""This process's share of the experiment's limits is 1 / _SHARE."""
_SUBPROCESSES: threading.BoundedSemaphore | None = None
_DEFAULT_CONNECTIONS = DEFAULT_RUNS_IN_FLIGHT
"""An endpoint's ceiling when its `model.max_connections` is not set: the experiment's runs in flight."""


def configure(processes: int, max_subprocesses: int | None, max_runs: int = DEFAULT_RUNS_IN_FLIGHT) -> None:
    """In a worker process: it is one of `processes`, so it holds that share of every limit."""
    global _SHARE, _SUBPROCESSES, _DEFAULT_CONNECTIONS
    with _LOCK:
        _SHARE = max(1, processes)
        _DEFAULT_CONNECTIONS = max_runs
        _LIMITS.clear()
        share = None if max_subprocesses is None else max(1, max_subprocesses // _SHARE)
        _SUBPROCESSES = None if share is None else threading.BoundedSemaphore(share)


def endpoint_limit(endpoint: str, max_connections: int | None) -> EndpointLimit:
    """This process's limit for `endpoint` (created on first use with its share of `max_connections`,
    default the experiment's runs in flight)."""
    with _LOCK:
        if endpoint not in _LIMITS:
            ceiling = max_connections or _DEFAULT_CONNECTIONS
            _LIMITS[endpoint] = EndpointLimit(max(1, -(-ceiling // _SHARE)))
        return _LIMITS[endpoint]


@contextmanager
def subprocess_slot() -> Iterator[None]:
    """Around a subprocess a run starts: at most this process's share of `max_subprocesses` at once."""
    gate = _SUBPROCESSES
    if gate is None:
        yield
        return
    with gate:
        yield


def snapshot() -> dict[str, Gauge]:
    """Endpoint -> this process's gauge."""
    with _LOCK:
        limits = dict(_LIMITS)
    return {endpoint: limit.gauge() for endpoint, limit in limits.items()}


def combine(gauges: list[Gauge]) -> Gauge:
    """Several processes' gauges of one endpoint as one."""
    return Gauge(sum(g.limit for g in gauges), sum(g.ceiling for g in gauges), sum(g.lowest for g in gauges),
                 sum(g.peak for g in gauges), sum(g.throttled for g in gauges))
