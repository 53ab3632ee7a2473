"""Gemini CLI and Qwen Code as arms: the relay gives a Gemini client the run's gateway and token under the
names it reads, and the built-in experiments say how to install each agent when it is missing."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys

import pytest
from click.testing import CliRunner

from ctxbench.harness.agents import relay
from ctxbench.harness.cli import cli


def test_the_relay_gives_a_gemini_client_the_gateway_s_root_and_the_run_s_token(tmp_path):
    statement = tmp_path / "statement.md"
    statement.write_text("Fix it.")
    values = {"statement": "Fix it.", "statement_file": str(statement), "model": "sim-coder",
              "workspace": str(tmp_path)}
    (tmp_path / "placeholders.json").write_text(json.dumps({"values": values, "env": []}))
    show = ("import json, os; print(json.dumps({k: os.environ.get(k) for k in "
            "('GOOGLE_GEMINI_BASE_URL', 'GEMINI_API_KEY', 'ANTHROPIC_BASE_URL', 'OPENAI_BASE_URL')}))")
    done = subprocess.run([sys.executable, "-I", "-c", inspect.getsource(relay), str(tmp_path / "no.sock"),
                           str(statement), str(tmp_path / "stop"), str(tmp_path / "placeholders.json"), "--",
                           sys.executable, "-c", show], env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                                                             "OPENAI_API_KEY": "run-token"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    env = json.loads(done.stdout)
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+", env["GOOGLE_GEMINI_BASE_URL"])  # Gemini's clients add /v1beta
    assert env["GOOGLE_GEMINI_BASE_URL"] == env["ANTHROPIC_BASE_URL"] == env["OPENAI_BASE_URL"].removesuffix("/v1")
    assert env["GEMINI_API_KEY"] == "run-token"


@pytest.mark.parametrize("name, program, install", [("gemini-cli", "gemini", "npm install -g @google/gemini-cli@0.61.0"),
                                                    ("qwen-code", "qwen", "npm install -g @qwen-code/qwen-code@0.24.4")])
def test_the_experiments_say_how_to_install_their_agent(tmp_path, monkeypatch, name, program, install):
    folder = tmp_path / "bin"
    folder.mkdir()
    (folder / "git").symlink_to("/usr/bin/git")
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", name, "--limit", "1", "--output", str(out)])
    assert result.exit_code == 2 and "Traceback" not in result.output and not out.exists(), result.output
    [line] = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert f"'{program}' is not a program on PATH" in line and f"install it: {install}" in line, result.output
