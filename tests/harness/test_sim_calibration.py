"""Calibration of the simulator: properties measured over several seeds on real tasks."""

import statistics

from ctxbench.harness.config import load_config
from ctxbench.harness.run.runner import prepare, run_experiment

NOISY_LARGE = ["exprcalc-round-half-away-from-zero", "textkit-whitespace-unicode-spaces"]


def run(experiment_file, tmp_path, name, taskset, ids, repeats, overrides=()):
    path = experiment_file(taskset={"path": taskset, "ids": ids}, repeats=repeats, workers=2)
    config = load_config(path, list(overrides))
    ctx = prepare(config, tmp_path, tmp_path / name)
    return run_experiment(ctx, progress=False)


def test_different_seeds_give_variance_across_repeats(experiment_file, tmp_path):
    results = run(experiment_file, tmp_path, "seeds", "smoke", ["textutils-contractions", "calc-fahrenheit-to-celsius"], 3)
    assert len({r.seed for r in results}) == 6
    for task in ("textutils-contractions", "calc-fahrenheit-to-celsius"):
        turns = [r.turns for r in results if r.task_id == task]
        assert statistics.pstdev(turns) > 0, f"{task}: every seed behaved the same ({turns})"


def test_a_smaller_window_lowers_baseline_completion(experiment_file, tmp_path):
    wide = run(experiment_file, tmp_path, "wide", "context-pressure", NOISY_LARGE, 2, ["model.context_window=128000"])
    narrow = run(experiment_file, tmp_path, "narrow", "context-pressure", NOISY_LARGE, 2, ["model.context_window=12000"])
    rate = lambda rs: sum(r.resolved for r in rs) / len(rs)
    assert rate(narrow) < rate(wide), (rate(narrow), rate(wide))
    assert any(r.failure_reason == "context_overflow" for r in narrow)


def test_noise_driven_detours_cost_turns(experiment_file, tmp_path):
    """Masking keeps the contexts short, so the runs are not all at the turn limit either way."""
    ids = ["exprcalc-round-half-away-from-zero", "textkit-jaro-winkler-prefix"]
    masked = ["strategies=[{name: observation_masking}]", "model.context_window=32000"]
    calm = run(experiment_file, tmp_path, "calm", "context-pressure", ids, 2, masked + ["model.sim.detour_rate=0"])
    noisy = run(experiment_file, tmp_path, "noisy", "context-pressure", ids, 2, masked + ["model.sim.detour_rate=1"])
    assert statistics.mean(r.turns for r in noisy) > statistics.mean(r.turns for r in calm)
