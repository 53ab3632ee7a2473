"""Runs in flight apart from cores: the adaptive limit of model calls, and many runs per worker process."""

from __future__ import annotations

import threading
from contextlib import ExitStack
from pathlib import Path

import pytest

from ctxbench.harness.concurrency import DECREASE_FACTOR, INCREASE_PER_CALL, EndpointLimit
from ctxbench.harness.config import DEFAULT_RUNS_IN_FLIGHT, load_config
from ctxbench.harness.run.executors import ProgressCounts, progress_line, runs_in_flight

SMOKE = Path(__file__).resolve().parents[2] / "tasksets" / "smoke"


def _calls(limit: EndpointLimit, outcomes: list[str]) -> None:
    """Calls all in flight at once, ending with `outcomes`."""
    with ExitStack() as stack:
        slots = [stack.enter_context(limit.call()) for _ in outcomes]
        for slot, outcome in zip(slots, outcomes):
            slot.outcome = outcome


def test_refusals_of_one_round_trip_lower_the_limit_once():
    limit = EndpointLimit(10)
    _calls(limit, ["throttled", "throttled", "throttled"])  # all sent before the first refusal came back
    assert limit.limit == pytest.approx(10 * DECREASE_FACTOR)
    _calls(limit, ["throttled"])  # sent after the decrease: a new signal
    assert limit.limit == pytest.approx(10 * DECREASE_FACTOR ** 2)
    assert limit.gauge().throttled == 4 and limit.gauge().lowest == int(10 * DECREASE_FACTOR ** 2)


def test_once_calls_are_answered_refusals_lower_the_limit_at_most_once_per_round_trip():
    limit = EndpointLimit(10)
    with limit.call() as slot:
        slot.started -= 5.0  # an answer that took 5 s: the round trip
        slot.outcome = "answered"
    assert limit.round_trip_s == pytest.approx(5.0, abs=0.5)
    _calls(limit, ["throttled"])
    assert limit.limit == pytest.approx(10 * DECREASE_FACTOR)
    for _ in range(5):  # retried and refused again at once: within the round trip, no new signal
        _calls(limit, ["throttled"])
    assert limit.limit == pytest.approx(10 * DECREASE_FACTOR) and limit.gauge().throttled == 6
    assert 0.5 * 5.0 * 0.9 <= limit.retry_wait(1.0) <= 5.0 * 1.1  # a refused call waits about a round trip


def _another_call(limit: EndpointLimit) -> tuple[threading.Thread, threading.Event]:
    """A call started in a thread of its own, and the event it sets once it has a slot."""
    entered = threading.Event()

    def call() -> None:
        with limit.call() as slot:
            entered.set()
            slot.outcome = "answered"

    thread = threading.Thread(target=call)
    thread.start()
    return thread, entered


def test_a_refused_call_keeps_its_slot_through_its_wait_and_its_retry_counts_once():
    limit = EndpointLimit(2)
    with limit.call() as slot:
        slot.settle("throttled")  # refused: the limit falls to 1.4 at once, and this call still holds its slot
        assert limit.limit == pytest.approx(2 * DECREASE_FACTOR) and limit.in_flight == 1
        waiting, entered = _another_call(limit)
        waiting.join(0.3)
        assert not entered.is_set()  # the refused call waiting to retry fills the lowered limit
        slot.again()
        slot.outcome = "answered"  # its retry is answered
    waiting.join(60)
    assert entered.is_set() and limit.gauge().throttled == 1 and limit.gauge().peak == 1


def test_answered_calls_raise_the_limit_up_to_its_ceiling_and_failures_leave_it():
    limit = EndpointLimit(4)
    _calls(limit, ["throttled"])
    lowered = limit.limit
    _calls(limit, ["failed"])
    assert limit.limit == lowered
    _calls(limit, ["answered"])
    assert limit.limit == pytest.approx(lowered + INCREASE_PER_CALL)
    for _ in range(20):
        _calls(limit, ["answered"])
    assert limit.limit == 4 and limit.gauge().as_dict() == {"limit": 4, "ceiling": 4, "lowest": 2,
                                                            "peak_in_flight": 1, "throttled": 1}


def test_a_call_waits_while_the_limit_is_in_flight():
    limit = EndpointLimit(1)
    with limit.call() as slot:
        waiting, entered = _another_call(limit)
        waiting.join(0.3)
        assert not entered.is_set()  # held back while the first call is in flight
        slot.outcome = "answered"
    waiting.join(60)
    assert entered.is_set() and limit.gauge().peak == 1


def test_runs_in_flight_default_to_cores_for_the_simulator_and_dozens_for_an_endpoint(experiment_file):
    sim = load_config(experiment_file(workers=2))
    assert sim.resolved_max_runs == 2 and runs_in_flight(sim, 100) == (2, 1)
    endpoint = load_config(experiment_file(workers=2, model={"provider": "openai", "base_url": "http://127.0.0.1:1/v1"}))
    assert endpoint.resolved_max_runs == DEFAULT_RUNS_IN_FLIGHT == endpoint.resolved_max_connections
    assert runs_in_flight(endpoint, 100) == (2, DEFAULT_RUNS_IN_FLIGHT // 2)
    assert runs_in_flight(endpoint, 3) == (2, 2)  # never more in flight than there are runs
    assert runs_in_flight(load_config(experiment_file(workers=4, max_runs=2)), 100) == (2, 1)


def test_the_progress_line_shows_the_limit_of_calls_in_flight():
    line = progress_line(ProgressCounts(3, 10, 1, 3, "0m05s", "calls 7/10"), "baseline/t/0", "ok")
    assert line.startswith("[3/10] resolved 1/3 (33%) ETA 0m05s calls 7/10  last: baseline/t/0 ok")


class _MeetsTheOthers:
    """A model whose first call waits until `barrier.parties` runs are making theirs: they must be in
    flight at once, in one worker process."""

    def __init__(self, barrier: threading.Barrier) -> None:
        self.barrier = barrier
        self.calls = 0

    def complete(self, messages, tools):
        from ctxbench.harness.protocols import Completion, Usage
        from ctxbench.harness.records import ToolCall

        self.calls += 1
        if self.calls == 1:
            self.barrier.wait(timeout=120)
        return Completion("", (ToolCall(f"c{self.calls}", "finish", '{"summary": "done"}'),), Usage(1, 1))


def test_one_worker_process_holds_several_runs_in_flight(experiment_file, tmp_path, monkeypatch):
    import ctxbench.harness.run.single_run
    from ctxbench.harness.run.runner import prepare, run_experiment

    barrier = threading.Barrier(3)  # inherited by the forked worker, whose threads meet at it
    monkeypatch.setenv("CTXBENCH_WORKDIR", str(tmp_path / "work"))
    monkeypatch.setattr(ctxbench.harness.run.single_run, "make_model", lambda config, task, counter, seed: _MeetsTheOthers(barrier))
    exp = experiment_file(repeats=3, workers=1, max_runs=3, taskset={"path": str(SMOKE), "ids": ["calc-median-even-length"]})
    ctx = prepare(load_config(exp), tmp_path, tmp_path / "out")
    results = run_experiment(ctx, progress=False)
    assert [r.run_id for r in results] == [f"baseline/calc-median-even-length/{i}" for i in range(3)]
    assert all(r.failure_reason != "harness_error" and r.tool_calls == {"finish": 1} for r in results), \
        [r.error for r in results]


def test_how_runs_are_executed_is_not_a_fixed_variable(experiment_file, tmp_path):
    """max_runs, max_subprocesses and model.max_connections leave the experiment's id as it was, so a
    folder written before they existed resumes with them set."""
    from ctxbench.harness.run.runner import prepare

    ids = []
    for extra in ({}, {"max_runs": 7, "max_subprocesses": 3, "model": {"max_connections": 5}}):
        ctx = prepare(load_config(experiment_file(**extra)), tmp_path, tmp_path / f"out{len(ids)}")
        ids.append((ctx.experiment_id, ctx.fixed))
    assert ids[0] == ids[1]


def test_a_plan_smaller_than_the_queues_runs_on_every_process(experiment_file, tmp_path, monkeypatch):
    """4 runs, 2 processes of 2 runs in flight each: all 4 must be in flight at once, so neither process
    may take the other's share into its queue."""
    import multiprocessing

    import ctxbench.harness.run.single_run
    from ctxbench.harness.run.runner import prepare, run_experiment

    barrier = multiprocessing.get_context("fork").Barrier(4)  # shared by the forked worker processes
    monkeypatch.setenv("CTXBENCH_WORKDIR", str(tmp_path / "work"))
    monkeypatch.setattr(ctxbench.harness.run.single_run, "make_model", lambda config, task, counter, seed: _MeetsTheOthers(barrier))
    exp = experiment_file(repeats=4, workers=2, max_runs=4, taskset={"path": str(SMOKE), "ids": ["calc-median-even-length"]})
    results = run_experiment(prepare(load_config(exp), tmp_path, tmp_path / "out"), progress=False)
    assert len(results) == 4
    assert all(r.failure_reason != "harness_error" and r.tool_calls == {"finish": 1} for r in results), \
        [r.error for r in results]
