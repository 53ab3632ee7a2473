import json

from click.testing import CliRunner

from ctxbench.harness.cli import cli

VOLATILE = {"wall_s", "model_s", "tool_s", "test_s"}
THREE_TASKS = {"path": "smoke", "ids": ["calc-median-even-length", "calc-percentile-upper-bound", "textutils-contractions"]}


def load(path):
    return [{k: v for k, v in json.loads(line).items() if k not in VOLATILE} for line in path.read_text().splitlines()]


def test_smoke_experiment_writes_manifest_and_runs_and_is_reproducible(experiment_file, tmp_path):
    exp = experiment_file(taskset=THREE_TASKS, repeats=2, workers=2)
    outputs = []
    for name in ("a", "b"):
        out = tmp_path / name
        result = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"])
        assert result.exit_code == 0, result.output
        outputs.append(out)
    manifest = json.loads((outputs[0] / "manifest.json").read_text())
    assert set(manifest["fixed"]) == {"model", "taskset", "system_prompt", "tools", "harness_version", "limits"}
    assert manifest["simulated"] is True and manifest["runs_planned"] == 6
    runs = load(outputs[0] / "runs.jsonl")
    assert len(runs) == 6 and len({r["run_id"] for r in runs}) == 6
    for field in ("experiment_id", "run_id", "strategy", "task_id", "repeat", "seed", "resolved", "failure_reason",
                  "turns", "prompt_tokens", "completion_tokens", "strategy_tokens", "total_tokens",
                  "peak_context_tokens", "patch"):
        assert field in runs[0]
    assert sum(r["resolved"] for r in runs) >= 3
    assert all(r["total_tokens"] == r["prompt_tokens"] + r["completion_tokens"] + r["strategy_tokens"] for r in runs)
    assert runs == load(outputs[1] / "runs.jsonl")
    seeds = {(r["task_id"], r["repeat"]): r["seed"] for r in runs}
    assert len(set(seeds.values())) == len(seeds)
    transcripts = list((outputs[0] / "transcripts" / "baseline").glob("*.jsonl.gz"))
    assert len(transcripts) == 6
    assert "strategy" in result.output and "baseline" in result.output
    table_row = next(line for line in result.output.splitlines() if line.startswith("baseline "))
    resolved = sum(r["resolved"] for r in load(outputs[1] / "runs.jsonl"))
    assert f"{resolved / 6:.0%}" in table_row
    assert not any(reason in table_row for reason in ("timeout 0", "loop 0", "harness_error 0"))


def test_existing_results_need_resume(experiment_file, tmp_path):
    exp = experiment_file(taskset={"path": "smoke", "ids": ["calc-median-even-length", "textutils-contractions"]})
    out = tmp_path / "o"
    assert CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"]).exit_code == 0
    again = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--no-report"])
    assert again.exit_code == 2 and "--resume" in again.output
    resumed = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--resume", "--no-report"])
    assert resumed.exit_code == 0
    assert len((out / "runs.jsonl").read_text().splitlines()) == 2
    changed = CliRunner().invoke(cli, ["run", str(exp), "--output", str(out), "--resume", "--no-report",
                                       "--set", "model.context_window=9000"])
    assert changed.exit_code == 2 and "fixed variables differ: model" in changed.output


def test_a_strategy_that_calls_the_model_passes_the_preflight_and_runs(tmp_path):
    # the budget preflight builds every arm's strategy before any run: the summarizer's model mode needs a
    # model there too
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["run", "quickstart", "--limit", "1", "--repeats", "1", "--no-report",
                                      "--output", str(out), "--set",
                                      "strategies=[{name: summarizer, params: {mode: model, history_share: 0.05}}]"])
    assert result.exit_code == 0, result.output
    [run] = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert run["strategy"] == "summarizer" and run["failure_reason"] != "harness_error"
