"""A network provider is checked before anything is written, and a failing endpoint stops the experiment."""

from __future__ import annotations

import json
import socket
import subprocess
from pathlib import Path

import pytest

from ctxbench.harness.errors import ExperimentAborted
from provider_helpers import DOWN, HTML_200, SMOKE, TEST_KEY, TEST_KEY_ENV, api_error, chat_reply, cli, cli_env
from test_provider_runs import run_one_task, runs, via


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def run(tmp_path: Path, *overrides: str, env: dict | None = None, flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    return subprocess.run(cli("run", str(SMOKE), "--output", str(tmp_path / "out"), "--no-report", *flags,
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


def test_model_errors_trip_the_breaker_and_resume_runs_them_again(tmp_path, scripted_endpoint):
    """The endpoint answers the check, then fails every chat request: the experiment stops after
    BREAKER_RUNS runs, which are recorded as unfinished, and says how to resume; resumed against an
    endpoint that works again, they run again."""
    down = [True]
    finish = (200, chat_reply("Done.", [("finish", "{}")]))
    server = scripted_endpoint(lambda i, body: (503, api_error("upstream overloaded", "server_error")) if down[0] else finish)
    # one run in flight at a time (max_runs=1), so the runs after the breaker trips send no request
    proc = run(tmp_path, *via(server.url), "model.retry_budget_s=0", "workers=1", "max_runs=1", "repeats=2")
    assert proc.returncode == 3, proc.stderr
    line = one_error_line(proc)
    out = (tmp_path / "out").resolve()
    assert "3 runs ended in model_error within 10 min" in line and "HTTP 503" in line and "upstream overloaded" in line
    assert f"3 runs are recorded in {out}" in line and f"--output {out} --resume" in line
    assert len(server.requests) == 3  # one request per run: the breaker stopped the other 7
    assert [r["failure_reason"] for r in runs(out).values()] == ["model_error"] * 3

    down[0] = False
    resumed = run(tmp_path, *via(server.url), "model.retry_budget_s=0", "workers=1", "max_runs=1", "repeats=2", flags=("--resume",))
    assert resumed.returncode == 0, resumed.stderr
    assert "3 runs that ended in model_error run again" in resumed.stderr
    assert sorted(r["failure_reason"] for r in runs(out).values()) == ["no_edit"] * 10


def test_the_breaker_counts_model_errors_in_a_window_not_in_a_row(tmp_path, scripted_endpoint):
    """Every other run meets an endpoint that is down: no three in a row, three within the window."""
    starts: list[int] = []

    def script(i, body):
        if len(body["messages"]) == 2:  # a run's first request
            starts.append(i)
        return DOWN if len(starts) % 2 else (200, chat_reply("Done.", [("finish", "{}")]))

    server = scripted_endpoint(script)
    proc = run(tmp_path, *via(server.url), "model.retry_budget_s=0", "workers=1", "max_runs=1", "repeats=2")
    assert proc.returncode == 3 and "3 runs ended in model_error within 10 min" in one_error_line(proc)
    recorded = [r["failure_reason"] for r in runs(tmp_path / "out").values()]
    assert recorded == ["model_error", "no_edit", "model_error", "no_edit", "model_error"]


def test_model_errors_that_do_not_trip_the_breaker_still_fail_the_command(tmp_path, scripted_endpoint):
    """One run in ten meets an endpoint that stays down: exit 3, and the run is not counted as finished."""
    starts: list[int] = []

    def script(i, body):
        if len(body["messages"]) == 2:
            starts.append(i)
        return DOWN if len(starts) == 4 else (200, chat_reply("Done.", [("finish", "{}")]))

    server = scripted_endpoint(script)
    proc = run(tmp_path, *via(server.url), "model.retry_budget_s=0", "workers=1", "max_runs=1", "repeats=2")
    assert proc.returncode == 3, proc.stderr
    line = one_error_line(proc)
    assert "1 runs ended in model_error" in line and "--resume runs them again" in line and "10 runs are recorded" in line


def test_a_model_error_run_records_its_cause(tmp_path, scripted_endpoint, api_key):
    server = scripted_endpoint([(429, api_error("Rate limit reached", "requests", "rate_limit_exceeded"))])
    with pytest.raises(ExperimentAborted, match="1 runs ended in model_error"):
        run_one_task(tmp_path, server.url, retry_budget_s=0.1)
    (result,) = runs(tmp_path / "out").values()
    assert result["failure_reason"] == "model_error"
    assert "HTTP 429" in result["error"] and "Rate limit reached" in result["error"]


MODEL_LISTS = {
    "HTML": (HTML_200, "model.base_url: GET {url}/models answered 200 with text/html"),
    "JSON that is no model list": ((200, {"object": "list", "models": ["sim-coder"]}), "not an OpenAI-compatible model list"),
    "ids that are not names": ((200, {"object": "list", "data": [{"id": 7}]}), "not an OpenAI-compatible model list"),
    "another model": ((200, {"object": "list", "data": [{"id": "sim-coder-v2"}, {"id": "gpt-x"}]}),
                      "model.name: 'sim-coder' is not served by {url} (GET {url}/models lists gpt-x, sim-coder-v2); "
                      "did you mean 'sim-coder-v2'?"),
    "no model": ((200, {"object": "list", "data": []}), "(GET {url}/models lists no model)"),
}


@pytest.mark.parametrize("listing", list(MODEL_LISTS))
def test_a_model_list_without_the_model_exits_2_with_nothing_written(tmp_path, scripted_endpoint, listing):
    models, words = MODEL_LISTS[listing]
    server = scripted_endpoint([(500, api_error("never asked"))])
    server.models = models
    proc = run(tmp_path, *via(server.url))
    assert proc.returncode == 2, proc.stderr
    assert words.format(url=server.url) in one_error_line(proc) and "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists() and server.requests == []


def test_a_model_listed_with_its_latest_tag_is_accepted(tmp_path, scripted_endpoint):
    """Ollama lists `name:latest` and serves it as `name` too."""
    server = scripted_endpoint([(200, chat_reply("Done.", [("finish", "{}")]))])
    server.models = (200, {"object": "list", "data": [{"id": "sim-coder:latest"}]})
    proc = run(tmp_path, *via(server.url), "repeats=1")
    assert proc.returncode == 0, proc.stderr
    assert len(runs(tmp_path / "out")) == 5
