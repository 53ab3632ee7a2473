"""A provider whose client library is not installed is one line naming the extra to install, exit 2,
nothing written: the library is made unimportable by a module of its name first on the path."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
@pytest.mark.parametrize("command", ["run", "gateway"])
def test_a_missing_provider_extra_is_one_line_naming_it(tmp_path, provider, command):
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    (hidden / f"{provider}.py").write_text(f"raise ImportError('No module named {provider}')\n")
    out = tmp_path / "out"
    args = (["run", "quickstart", "--provider", provider, "--output", str(out)] if command == "run"
            else ["gateway", "--strategy", "baseline", "--provider", provider, "--port", "0"])
    env = {**os.environ, "PYTHONPATH": str(hidden), "OPENAI_API_KEY": "unused", "ANTHROPIC_API_KEY": "unused"}
    done = subprocess.run([sys.executable, "-m", "ctxbench", *args], env=env, capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: "), done.stderr[-2000:]
    assert f"install the {provider} extra" in done.stderr and f"'.[{provider}]'" in done.stderr
    assert not out.exists() and done.stdout == ""
