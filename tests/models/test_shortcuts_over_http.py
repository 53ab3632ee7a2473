"""`--provider/--model/--base-url/--api-key-env` against `ctxbench serve-sim` equal the same `--set` flags."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from provider_helpers import ROOT, TEST_KEY, TEST_KEY_ENV, cli, cli_env

QUICKSTART = ROOT / "experiments" / "quickstart.yaml"
VOLATILE = {"wall_s", "model_s", "tool_s", "test_s"}


def stable_runs(folder: Path) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k not in VOLATILE}
            for line in (folder / "runs.jsonl").read_text().splitlines()]


def test_endpoint_shortcuts_give_the_results_of_their_set_flags(tmp_path, serve_sim):
    url = serve_sim("--config", str(QUICKSTART))
    subset = ["--limit", "2", "--strategies", "baseline,trimmer", "--set", "repeats=1", "--no-report"]
    by_shortcut = subprocess.Popen(
        cli("run", str(QUICKSTART), *subset, "--output", str(tmp_path / "shortcut"), "--provider", "openai",
            "--model", "sim-coder", "--base-url", url, "--api-key-env", TEST_KEY_ENV),
        env=cli_env(**{TEST_KEY_ENV: TEST_KEY}), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    by_set = subprocess.run(
        cli("run", str(QUICKSTART), *subset, "--output", str(tmp_path / "set"), "--set", "model.provider=openai",
            "--set", "model.name=sim-coder", "--set", f"model.base_url={url}",
            "--set", f"model.api_key_env={TEST_KEY_ENV}"),
        env=cli_env(**{TEST_KEY_ENV: TEST_KEY}), capture_output=True, text=True, timeout=300)
    _, stderr = by_shortcut.communicate(timeout=300)
    assert by_shortcut.returncode == 0, stderr
    assert by_set.returncode == 0, by_set.stderr

    shortcut, flags = stable_runs(tmp_path / "shortcut"), stable_runs(tmp_path / "set")
    assert len(shortcut) == 4 and {r["strategy"] for r in shortcut} == {"baseline", "trimmer"}
    assert shortcut == flags
    assert all(r["turns"] >= 3 for r in shortcut) and all(r["failure_reason"] != "model_error" for r in shortcut)
    manifests = [json.loads((tmp_path / name / "manifest.json").read_text()) for name in ("shortcut", "set")]
    assert manifests[0]["config"] == manifests[1]["config"]
    assert manifests[0]["experiment_id"] == manifests[1]["experiment_id"]
    assert manifests[0]["config"]["model"]["base_url"] == url and manifests[0]["config"]["taskset"]["limit"] == 2
