"""Whole experiments through the `openai` provider against real HTTP endpoints on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ctxbench.harness.config import load_config
from ctxbench.harness.run.runner import prepare, run_experiment
from provider_helpers import SMOKE, TEST_KEY, TEST_KEY_ENV, api_error, chat_reply, cli, cli_env

COMPARED = ("resolved", "failure_reason", "turns", "prompt_tokens", "completion_tokens", "invalid_actions")


def via(url: str) -> list[str]:
    return [f"model.provider=openai", f"model.base_url={url}", f"model.api_key_env={TEST_KEY_ENV}"]


def runs(folder: Path) -> dict[str, dict]:
    return {r["run_id"]: r for r in map(json.loads, (folder / "runs.jsonl").read_text().splitlines())}


def run_one_task(tmp_path: Path, url: str, **limits) -> dict:
    """The first smoke task, once, in this process, through the `openai` provider at `url` (`limits`:
    `limits.*` keys, and `retry_budget_s`)."""
    overrides = via(url) + ["repeats=1", "workers=1", "taskset.ids=[calc-median-even-length]"]
    overrides += [f"model.{k}={v}" if k == "retry_budget_s" else f"limits.{k}={v}" for k, v in limits.items()]
    ctx = prepare(load_config(SMOKE, overrides), SMOKE.parent, tmp_path / "out")
    (result,) = run_experiment(ctx, progress=False)
    return result.model_dump()


def test_smoke_through_serve_sim_matches_the_in_process_simulator(tmp_path, serve_sim, api_key):
    url = serve_sim("--config", str(SMOKE))
    over_http = subprocess.Popen(
        cli("run", str(SMOKE), "--output", str(tmp_path / "http"), "--no-report", "--repeats", "1",
            *(f"--set={o}" for o in via(url))),
        env=cli_env(**{TEST_KEY_ENV: TEST_KEY}), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    in_process = run_experiment(prepare(load_config(SMOKE, ["repeats=1"]), SMOKE.parent, tmp_path / "sim"), progress=False)
    stdout, stderr = over_http.communicate(timeout=240)
    assert over_http.returncode == 0, stderr

    sim, http = runs(tmp_path / "sim"), runs(tmp_path / "http")
    assert len(in_process) == len(sim) == len(http) == 5
    for run_id, expected in sim.items():
        assert {k: http[run_id][k] for k in COMPARED} == {k: expected[k] for k in COMPARED}, run_id
    assert sum(r["resolved"] for r in sim.values()) >= 3 and all(r["turns"] >= 3 for r in sim.values())
    manifest = json.loads((tmp_path / "http" / "manifest.json").read_text())
    assert manifest["config"]["model"]["api_key_env"] == TEST_KEY_ENV and not manifest["simulated"]
    assert not any(TEST_KEY.encode() in p.read_bytes() for p in (tmp_path / "http").rglob("*") if p.is_file())


@pytest.mark.parametrize("executor", ["local", "ray"])
def test_an_authentication_error_stops_the_experiment(tmp_path, scripted_endpoint, api_key, executor, request):
    if executor == "ray":
        request.getfixturevalue("one_ray_at_a_time")
    server = scripted_endpoint([(401, api_error("Incorrect API key provided.", code="invalid_api_key"))])
    proc = subprocess.run(cli("run", str(SMOKE), "--output", str(tmp_path / "out"), "--no-report", "--repeats", "6",
                              "--workers", "2", "--set=max_runs=4", f"--set=executor={executor}",
                              *(f"--set={o}" for o in via(server.url))),
                          env=cli_env(**{TEST_KEY_ENV: TEST_KEY}), capture_output=True, text=True,
                          timeout=300)  # a guard against a hang, not a speed claim
    assert proc.returncode == 3, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "authentication" in errors[0] and "401" in errors[0]
    assert TEST_KEY not in proc.stderr + proc.stdout
    assert 1 <= len(server.requests) <= 8  # of 30 runs: only those in flight (4) or queued at the 2 workers


def test_malformed_tool_calls_become_invalid_actions(tmp_path, scripted_endpoint, api_key):
    server = scripted_endpoint([
        (200, chat_reply("Reading.", [("read_file", '{"path": "calc/stats.py", ')])),
        (200, chat_reply("Deploying.", [("deploy_to_production", "{}")])),
        (200, chat_reply("Done.", [("finish", '{"summary": "nothing to do"}')])),
    ])
    result = run_one_task(tmp_path, server.url)
    assert len(server.requests) == 3
    assert (result["turns"], result["invalid_actions"]) == (3, 2)
    assert result["failure_reason"] == "no_edit"
    assert result["prompt_tokens"] == 300 and result["completion_tokens"] == 30


def test_the_endpoint_s_context_length_error_ends_the_run_as_context_overflow(tmp_path, scripted_endpoint, api_key):
    too_long = api_error("This model's maximum context length is 16000 tokens. However, you requested 17024 tokens.",
                         code="context_length_exceeded")
    server = scripted_endpoint([(200, chat_reply("", [("run_tests", "{}")])), (400, too_long)])
    result = run_one_task(tmp_path, server.url)
    assert len(server.requests) == 2
    assert (result["failure_reason"], result["turns"]) == ("context_overflow", 1)




def test_a_request_the_endpoint_refuses_ends_that_run_and_the_experiment_goes_on(tmp_path, scripted_endpoint, api_key):
    """llama.cpp's server refuses a conversation ending in two assistant messages with a 400: one run's
    request, so one run ends `model_error` with the server's words, recorded; the other runs go on."""
    refused = api_error("Cannot have 2 or more assistant messages at the end of the list.")
    server = scripted_endpoint([(200, chat_reply("", [("run_tests", "{}")])), (400, refused),
                                (200, chat_reply("Done.", [("finish", '{"summary": "nothing to do"}')]))])
    overrides = via(server.url) + ["repeats=1", "workers=1", "max_runs=1",
                                   "taskset.ids=[calc-median-even-length, textutils-contractions]"]
    ctx = prepare(load_config(SMOKE, overrides), SMOKE.parent, tmp_path / "out")
    first, second = sorted(run_experiment(ctx, progress=False), key=lambda r: r.task_id)
    assert (first.failure_reason, first.turns) == ("request_refused", 1)
    assert "bad request (400)" in first.error and "Cannot have 2 or more assistant messages" in first.error
    assert (second.failure_reason, second.turns) == ("no_edit", 1)
    assert len(runs(tmp_path / "out")) == 2
