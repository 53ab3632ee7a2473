"""A network provider is checked before anything is written, and a failing endpoint stops the experiment."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

from provider_helpers import SMOKE, TEST_KEY, TEST_KEY_ENV, api_error, cli, cli_env
from test_provider_runs import run_one_task, via


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def run(tmp_path: Path, *overrides: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(cli("run", str(SMOKE), "--output", str(tmp_path / "out"), "--no-report",
                              *(f"--set={o}" for o in overrides)),
                          env=env or cli_env(**{TEST_KEY_ENV: TEST_KEY}), capture_output=True, text=True, timeout=300)


def one_error_line(proc: subprocess.CompletedProcess) -> str:
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def test_an_unreachable_base_url_exits_3_naming_it_with_nothing_written(tmp_path):
    url = closed_port_url()
    proc = run(tmp_path, *via(url))
    assert proc.returncode == 3, proc.stderr
    line = one_error_line(proc)
    assert f"GET {url}/models" in line and "Connection refused" in line
    assert "Traceback" not in proc.stderr and not (tmp_path / "out").exists()


def test_an_unset_key_variable_exits_3_naming_it_with_nothing_written(tmp_path, scripted_endpoint):
    server = scripted_endpoint([(500, api_error("never asked"))])
    env = cli_env()
    env.pop(TEST_KEY_ENV, None)
    proc = run(tmp_path, *via(server.url), env=env)
    assert proc.returncode == 3 and TEST_KEY_ENV in one_error_line(proc) and "not set" in proc.stderr
    assert not (tmp_path / "out").exists() and server.requests == []


def test_a_refused_key_exits_3_with_nothing_written(tmp_path, scripted_endpoint):
    server = scripted_endpoint([(500, api_error("never asked"))])
    server.models = (401, api_error("Incorrect API key provided.", code="invalid_api_key"))
    proc = run(tmp_path, *via(server.url))
    line = one_error_line(proc)
    assert proc.returncode == 3 and f"${TEST_KEY_ENV}" in line and "401" in line and "Incorrect API key" in line
    assert TEST_KEY not in proc.stderr and not (tmp_path / "out").exists() and server.requests == []


def test_a_base_url_without_a_model_list_exits_3(tmp_path, scripted_endpoint):
    server = scripted_endpoint([(500, api_error("never asked"))])
    server.models = (404, api_error("no route /v1/models", code="not_found"))
    proc = run(tmp_path, *via(server.url))
    assert proc.returncode == 3 and "HTTP 404" in one_error_line(proc) and not (tmp_path / "out").exists()


def test_consecutive_model_errors_trip_the_breaker(tmp_path, scripted_endpoint):
    """The endpoint answers the check, then fails every chat request: the experiment stops after
    MODEL_ERRORS_IN_A_ROW runs, records none of them, and says how to resume."""
    server = scripted_endpoint([(503, api_error("upstream overloaded", "server_error"))])
    proc = run(tmp_path, *via(server.url), "model.max_retries=0", "workers=1", "repeats=2")
    assert proc.returncode == 3, proc.stderr
    line = one_error_line(proc)
    out = (tmp_path / "out").resolve()
    assert "3 runs in a row ended in model_error" in line and "HTTP 503" in line and "upstream overloaded" in line
    assert f"0 runs are recorded in {out}" in line and f"--output {out} --resume" in line
    assert len(server.requests) == 3  # one request per run: the breaker stopped the other 7
    assert (out / "runs.jsonl").read_text() == "" and (out / "manifest.json").exists()


def test_a_model_error_run_records_its_cause(tmp_path, scripted_endpoint, api_key):
    server = scripted_endpoint([(429, api_error("Rate limit reached", "requests", "rate_limit_exceeded"))])
    result = run_one_task(tmp_path, server.url)
    assert result["failure_reason"] == "model_error"
    assert "HTTP 429" in result["error"] and "Rate limit reached" in result["error"]
    recorded = json.loads((tmp_path / "out" / "runs.jsonl").read_text())
    assert recorded["error"] == result["error"]
