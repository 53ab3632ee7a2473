"""A third-party strategy found through the `ctxbench.strategies` entry-point group, in a real subprocess."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "ctxbench-example-strategy"

BROKEN = '''
from typing import ClassVar
from pydantic import BaseModel, ConfigDict
from ctxbench.harness.context import Context, ContextLedger


class Forgetful:
    """Sends only the system prompt and the task, but says nothing in its ledger."""

    enforces_budget: ClassVar[bool] = False

    class Params(BaseModel):
        model_config = ConfigDict(extra="forbid")

    def __init__(self, params, services=None):
        self.params = params

    def build(self, history, budget):
        return Context([history.system_message(), history.task_message()], ContextLedger())
'''


def _install(site: Path, dist: str, module: str, entry: str, files: dict[str, str] | Path) -> None:
    """What pip leaves in site-packages: the module and a dist-info with the entry point."""
    if isinstance(files, Path):
        shutil.copytree(files, site / module)
    else:
        (site / module).mkdir(parents=True)
        for name, text in files.items():
            (site / module / name).write_text(text)
    info = site / f"{dist}-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[ctxbench.strategies]\n{entry}\n")


def _ctxbench(site: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run([sys.executable, "-c", "from ctxbench.harness.cli import main; main()", *args],
                          capture_output=True, text=True, env=env, timeout=300)


def test_the_example_package_is_listed_and_passes_the_shipped_check(tmp_path: Path) -> None:
    _install(tmp_path, "ctxbench_example_strategy", "ctxbench_example_strategy",
             "sliding_window = ctxbench_example_strategy:SlidingWindow",
             EXAMPLE / "src" / "ctxbench_example_strategy")
    listed = _ctxbench(tmp_path, "strategies", "list")
    assert listed.returncode == 0, listed.stderr
    assert "sliding_window  (ctxbench_example_strategy)" in listed.stdout
    assert "turns = 6  Most recent turns sent verbatim." in listed.stdout
    checked = _ctxbench(tmp_path, "strategies", "check", "sliding_window", "--params", "{turns: 2}")
    assert checked.returncode == 0, checked.stderr
    assert "sliding_window (ctxbench_example_strategy): passes the strategy contract" in checked.stdout


def test_a_broken_plugin_fails_the_check_with_the_rule_it_broke(tmp_path: Path) -> None:
    _install(tmp_path, "forgetful", "forgetful", "forgetful = forgetful:Forgetful", {"__init__.py": BROKEN})
    checked = _ctxbench(tmp_path, "strategies", "check", "forgetful")
    assert checked.returncode == 1
    assert "forgetful: FAILS the strategy contract: Forgetful on 'growing' at 0 turns: the ledger accounts for every token" \
        in checked.stderr
    assert _ctxbench(tmp_path, "strategies", "check", "forgetfull").returncode == 2


def test_a_third_party_strategy_named_like_a_registered_one_is_an_error_naming_both_packages(tmp_path: Path) -> None:
    _install(tmp_path, "acme_context", "acme_context", "trimmer = acme_context:Trim",
             {"__init__.py": BROKEN.replace("class Forgetful", "class Trim")})
    for args in (("strategies", "list"), ("run", "quickstart", "--output", str(tmp_path / "out"))):
        result = _ctxbench(tmp_path, *args)
        assert result.returncode == 2, result.stderr
        assert "Traceback" not in result.stderr
        assert "'trimmer'" in result.stderr and "acme_context" in result.stderr and "package ctxbench" in result.stderr
    assert not (tmp_path / "out").exists()
