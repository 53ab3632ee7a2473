"""Whole runs through the `openai` provider against an endpoint that misbehaves: the simulator behind a
real HTTP server on 127.0.0.1, with outages, 5xx bursts and garbled replies injected."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ctxbench.harness.config import load_config
from ctxbench.harness.errors import ExperimentAborted
from ctxbench.harness.run.runner import prepare, run_experiment
from provider_helpers import (DOWN, HTML_200, MESSAGE_NULL, NO_CHOICES, SMOKE, TEST_KEY, TEST_KEY_ENV, burst,
                              chat_reply, cli, cli_env, faulty, key_echo, outage, truncated)
from test_provider_runs import COMPARED, runs, via

TASK = "calc-median-even-length"


def one_task(url: str | None, out: Path, budget: float = 60, resume: bool = False) -> list[dict]:
    """The first smoke task once, in this process: through the `openai` provider at `url`, or in-process sim."""
    overrides = ["repeats=1", "workers=1", f"taskset.ids=[{TASK}]", f"model.retry_budget_s={budget}"]
    overrides += via(url) if url else []
    ctx = prepare(load_config(SMOKE, overrides), SMOKE.parent, out)
    return [r.model_dump() for r in run_experiment(ctx, resume=resume, progress=False)]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> dict:
    """The task's run with the in-process simulator."""
    (result,) = one_task(None, tmp_path_factory.mktemp("sim") / "out")
    assert result["resolved"] and result["turns"] >= 3
    return result


FAULTS = {
    "outage": lambda sim: outage(0.5, sim, from_request=1),
    "5xx burst": lambda sim: faulty(sim, burst(1, 12)),
    "truncated JSON": lambda sim: faulty(sim, {1: truncated(chat_reply("", [("run_tests", "{}")]))}),
    "message null": lambda sim: faulty(sim, {1: MESSAGE_NULL, 2: MESSAGE_NULL}),
    "HTML 200": lambda sim: faulty(sim, {0: HTML_200, 2: HTML_200}),
    "choices []": lambda sim: faulty(sim, {1: NO_CHOICES}),
    "key echo": lambda sim: faulty(sim, burst(1, 3, key_echo(500))),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_transient_fault_leaves_the_run_as_it_is_without_it(tmp_path, scripted_endpoint, api_key, smoke_sim,
                                                             reference, fault):
    server = scripted_endpoint(FAULTS[fault](smoke_sim))
    (result,) = one_task(server.url, tmp_path / "out")
    assert {k: result[k] for k in COMPARED} == {k: reference[k] for k in COMPARED}
    assert result["error"] is None and len(server.requests) > result["turns"]


def test_an_endpoint_down_past_the_budget_leaves_the_run_unfinished_and_resume_runs_it(
        tmp_path, scripted_endpoint, api_key, smoke_sim, reference):
    healed = [False]
    server = scripted_endpoint(lambda i, body: smoke_sim(i, body) if i == 0 or healed[0] else DOWN)
    with pytest.raises(ExperimentAborted, match="1 runs ended in model_error .*HTTP 503.*--resume runs them again"):
        one_task(server.url, tmp_path / "out", budget=0.2)
    (cut,) = runs(tmp_path / "out").values()
    assert (cut["failure_reason"], cut["resolved"], cut["turns"]) == ("model_error", False, 1)
    assert cut["prompt_tokens"] > 0 and "model.retry_budget_s is 0.2 s" in cut["error"]

    healed[0] = True
    (result,) = one_task(server.url, tmp_path / "out", budget=0.2, resume=True)
    assert {k: result[k] for k in COMPARED} == {k: reference[k] for k in COMPARED}
    assert list(runs(tmp_path / "out").values()) == [result]


def test_a_run_cut_short_after_its_fix_is_not_resolved(tmp_path, scripted_endpoint, api_key, smoke_sim, reference):
    """The endpoint goes down for the run's last request (its `finish`): the fix is in and the tests
    pass, but the run was cut short, so it is a model_error, not a resolved run."""
    last = reference["turns"] - 1
    server = scripted_endpoint(lambda i, body: smoke_sim(i, body) if i < last else DOWN)
    with pytest.raises(ExperimentAborted):
        one_task(server.url, tmp_path / "out", budget=0.1)
    (result,) = runs(tmp_path / "out").values()
    assert result["patch"] == reference["patch"] and set(result["tests"].values()) == {"passed"}
    assert (result["resolved"], result["failure_reason"], result["turns"]) == (False, "model_error", last)


def test_a_key_the_endpoint_echoes_is_stored_and_printed_nowhere(tmp_path, scripted_endpoint):
    first = chat_reply(f"My key is {TEST_KEY}.", [("read_file", json.dumps({"path": f"{TEST_KEY}.py"}))])
    server = scripted_endpoint(lambda i, body: (200, first) if len(body["messages"]) == 2 else key_echo(500))
    out = tmp_path / "out"
    env = cli_env(**{TEST_KEY_ENV: TEST_KEY})
    proc = subprocess.run(cli("run", str(SMOKE), "--output", str(out), "--no-report", "--repeats", "1", "--workers", "1",
                              "--set=model.retry_budget_s=0.1", *(f"--set={o}" for o in via(server.url))),
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3 and "[redacted $CTXBENCH_TEST_KEY]" in proc.stderr, proc.stderr
    recorded = runs(out)
    assert len(recorded) == 3 and all(TEST_KEY_ENV in r["error"] for r in recorded.values())
    shown = [subprocess.run(cli("show", str(out), *args), env=env, capture_output=True, text=True, timeout=120)
             for args in ([], [next(iter(recorded))], [next(iter(recorded)), "--full"])]
    assert all(p.returncode == 0 for p in shown) and "My key is [redacted" in shown[2].stdout
    printed = proc.stdout + proc.stderr + "".join(p.stdout + p.stderr for p in shown)
    assert TEST_KEY not in printed
    files = [p for p in out.rglob("*") if p.is_file()]
    assert len(files) >= 5 and not any(TEST_KEY.encode() in p.read_bytes() for p in files)
    import gzip
    transcripts = [gzip.decompress(p.read_bytes()) for p in out.rglob("*.jsonl.gz")]
    assert len(transcripts) == 3 and not any(TEST_KEY.encode() in t for t in transcripts)
