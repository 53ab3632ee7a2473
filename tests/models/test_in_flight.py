"""Model calls in flight through the `openai` provider: bounded by `model.max_connections`, lowered
by 429s (the manifest shows the limit), and many runs in flight in one worker process."""

from __future__ import annotations

import json
import threading
import time

from ctxbench.harness.config import load_config
from ctxbench.harness.run.runner import prepare, run_experiment
from provider_helpers import SMOKE, TEST_KEY_ENV, api_error, chat_reply

TASK = "calc-median-even-length"
FINISH = (200, chat_reply("", [("finish", '{"summary": "done"}')]))


class Counting:
    """A script answering `finish` after a short wait, counting the requests in flight."""

    def __init__(self, first: list | None = None) -> None:
        self.first = first or []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.peak = 0

    def __call__(self, index: int, body: dict):
        with self.lock:
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
        try:
            time.sleep(0.3)  # long enough for the other runs' calls to arrive meanwhile
            return self.first[index] if index < len(self.first) else FINISH
        finally:
            with self.lock:
                self.in_flight -= 1


def run(url: str, tmp_path, *overrides: str) -> list:
    config = load_config(SMOKE, ["workers=1", f"taskset.ids=[{TASK}]", "model.provider=openai",
                                 f"model.base_url={url}", f"model.api_key_env={TEST_KEY_ENV}", *overrides])
    ctx = prepare(config, SMOKE.parent, tmp_path / "out")
    return run_experiment(ctx, progress=False)


def test_calls_in_flight_stay_under_max_connections(tmp_path, scripted_endpoint, api_key):
    script = Counting()
    server = scripted_endpoint(script)
    results = run(server.url, tmp_path, "repeats=6", "max_runs=6", "model.max_connections=2")
    assert len(results) == 6 and all(r.failure_reason != "model_error" and r.turns == 1 for r in results)
    assert script.peak == 2  # six runs in flight, two calls at a time


def test_runs_in_flight_are_not_bounded_by_worker_processes(tmp_path, scripted_endpoint, api_key):
    script = Counting()
    server = scripted_endpoint(script)
    results = run(server.url, tmp_path, "repeats=4", "max_runs=4")
    assert len(results) == 4 and script.peak == 4  # one worker process, four calls at once


def test_a_429_lowers_the_limit_and_the_manifest_shows_it(tmp_path, scripted_endpoint, api_key):
    limited = (429, api_error("Rate limit reached", "requests", "rate_limit_exceeded"))
    server = scripted_endpoint(Counting(first=[limited]))
    results = run(server.url, tmp_path, "repeats=2", "max_runs=2", "model.max_connections=4")
    assert all(r.failure_reason != "model_error" for r in results)
    gauges = json.loads((tmp_path / "out" / "manifest.json").read_text())["concurrency"]
    # 4 x 0.7 = 2.8 after the 429, then half a call for each of the two answered calls: 3.8
    assert gauges == {server.url: {"limit": 3, "ceiling": 4, "lowest": 2, "peak_in_flight": 2, "throttled": 1}}
