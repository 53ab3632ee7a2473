"""The Ray executor on a local Ray runtime gives the local executor's results."""

import gzip
import json

from click.testing import CliRunner

from harness.cli import cli

VOLATILE = {"wall_s", "model_s", "tool_s", "test_s"}


def stable(path):
    return [{k: v for k, v in json.loads(line).items() if k not in VOLATILE} for line in path.read_text().splitlines()]


def test_ray_executor_matches_local_executor(experiment_file, tmp_path, monkeypatch):
    work = tmp_path / "work"
    monkeypatch.setenv("CTXBENCH_WORKDIR", str(work))
    exp = experiment_file(strategies=[{"name": "baseline"}, {"name": "trimmer", "params": {"limit": 300}}],
                          repeats=1, workers=2)
    outputs = {}
    for executor in ("local", "ray"):
        out = outputs[executor] = tmp_path / executor
        result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report",
                                          "--set", f"executor={executor}"])
        assert result.exit_code == 0, result.output
    local, ray = stable(outputs["local"] / "runs.jsonl"), stable(outputs["ray"] / "runs.jsonl")
    assert len(local) == 10 and len({r["run_id"] for r in ray}) == 10
    assert ray == local
    assert {r["failure_reason"] for r in ray} != {None}  # the comparison covers failed runs too
    manifests = [json.loads((outputs[e] / "manifest.json").read_text()) for e in ("local", "ray")]
    assert manifests[0]["fixed"] == manifests[1]["fixed"] and manifests[1]["config"]["executor"] == "ray"
    assert list(work.iterdir()) == []  # the Ray workers' templates and workspaces are gone
    for executor in ("local", "ray"):
        transcripts = sorted((outputs[executor] / "transcripts").rglob("*.jsonl.gz"))
        assert len(transcripts) == 10
    local_t = [gzip.decompress(p.read_bytes()) for p in sorted((outputs["local"] / "transcripts").rglob("*.gz"))]
    ray_t = [gzip.decompress(p.read_bytes()) for p in sorted((outputs["ray"] / "transcripts").rglob("*.gz"))]
    assert ray_t == local_t and all(b'"turn"' in t for t in ray_t)
