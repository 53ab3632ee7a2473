import math

import pytest
from click.testing import CliRunner

from ctxbench.harness.cli.compare import compare
from ctxbench.harness.errors import InputError
from ctxbench.reports.compare import compare_folders, compare_strategies
from ctxbench.reports.fixed import FixedVariablesDiffer, fixed_differences
from ctxbench.reports.loading import Manifest, load_results


def planted(build, strategy: str, pattern: list[bool], tokens: int = 1000) -> list:
    return [build.run(strategy, f"task-{i}", 0, ok, tokens=tokens) for i, ok in enumerate(pattern)]


def test_within_experiment_comparison_counts_pairs(two_strategy_folder):
    folder = load_results(two_strategy_folder)
    (c,) = compare_strategies(folder.runs, "baseline", folder.strategies)
    assert (c.pairs, c.both, c.only_reference, c.only_candidate, c.neither) == (6, 1, 4, 1, 0)
    assert (c.tasks, c.completion.tasks_better, c.completion.tasks_worse) == (2, 0, 2)
    assert c.mcnemar_p == pytest.approx(0.375)
    assert c.completion.difference == pytest.approx(-0.5)
    # two tasks, both worse: 2 of the 4 sign patterns are as extreme; no p could pass 0.05 with 2 tasks
    assert c.completion.p_value == pytest.approx(0.5)
    assert c.completion.verdict == "too few tasks"
    assert c.tokens.ratio == pytest.approx(0.5)
    assert math.isnan(c.tokens.ci[0])  # every task used half the tokens, but two tasks settle no interval
    assert c.tokens.verdict == "too few tasks"  # two tasks: the smallest sign-flip p is 0.5
    low, high = c.completion.ci  # the bounded interval: two tasks rule out little
    assert low == -1.0 and high > 0.3 and c.completion.ci_confidence == pytest.approx(0.9)
    assert c.seed_mismatches == 0


def test_significant_difference_gives_a_verdict(tmp_path, build):
    ref = planted(build, "baseline", [True] * 9 + [False])
    cand = planted(build, "lean", [False] * 8 + [True, True])  # b = 8, c = 1
    folder = load_results(build.write_folder(tmp_path / "r", ref + cand, build.manifest(["baseline", "lean"])))
    (c,) = compare_strategies(folder.runs, "baseline")
    assert (c.only_reference, c.only_candidate) == (8, 1)
    assert c.mcnemar_p == 0.0390625
    assert c.completion.p_value < 0.05 and c.completion.holm_p == c.completion.p_value  # one candidate: Holm changes nothing
    assert c.completion.verdict == "worse"
    again = compare_strategies(folder.runs, "baseline")[0]
    assert again.tokens.ci == c.tokens.ci  # seeded
    assert c.completion.ci[1] < 0
    assert 0 < c.completion.mdd < 1


def test_missing_reference_is_an_error(two_strategy_folder):
    folder = load_results(two_strategy_folder)
    with pytest.raises(InputError, match="nope.*baseline, lean"):
        compare_strategies(folder.runs, "nope")


def test_fixed_differences_name_the_model_keys(build):
    a = Manifest.model_validate(build.manifest(["baseline"]))
    b = Manifest.model_validate(build.manifest(["baseline"], model={"temperature": 0.7, "sim": {"r0": 0.5}}))
    (diff,) = fixed_differences(a, b)
    assert diff.variable == "model"
    assert "model.temperature: 0.0 -> 0.7" in diff.describe()
    assert "model.sim.r0: 0.95 -> 0.5" in diff.describe()
    c = Manifest.model_validate(build.manifest(["baseline"], harness_version="0.2.0"))
    assert [d.describe() for d in fixed_differences(a, c)] == ["harness_version: 0.1.0 -> 0.2.0"]
    assert fixed_differences(a, a) == []


def test_compare_folders_refuses_different_fixed_variables(tmp_path, build):
    runs = planted(build, "baseline", [True, False, True])
    a = load_results(build.write_folder(tmp_path / "a", runs, build.manifest(["baseline"])))
    b = load_results(build.write_folder(tmp_path / "b", runs, build.manifest(["baseline"], model={"temperature": 0.7})))
    with pytest.raises(FixedVariablesDiffer):
        compare_folders(a, b)
    forced = compare_folders(a, b, force=True)
    assert [d.variable for d in forced.differences] == ["model"]
    (same,) = forced.comparisons
    assert math.isnan(same.completion.p_value)  # no task differs: nothing to test against no difference
    low, high = same.completion.ci  # three tied tasks leave any difference within ±60 pts possible
    assert low < -0.5 and high > 0.5
    assert same.completion.verdict == "too few tasks"  # three tasks: no p below 0.25


def test_compare_command_exits_2_naming_the_model_difference(tmp_path, build):
    runs = planted(build, "baseline", [True, False, True])
    a = build.write_folder(tmp_path / "a", runs, build.manifest(["baseline"]))
    b = build.write_folder(tmp_path / "b", runs, build.manifest(["baseline"], model={"temperature": 0.7}))
    result = CliRunner().invoke(compare, [str(a), str(b)])
    assert result.exit_code == 2
    assert "model.temperature: 0.0 -> 0.7" in result.output
    assert "--force" in result.output


def test_compare_command_forced_lists_differences_at_the_top(tmp_path, build):
    runs = planted(build, "baseline", [True, False, True]) + planted(build, "lean", [True, True, True])
    a = build.write_folder(tmp_path / "a", runs, build.manifest(["baseline", "lean"]))
    b = build.write_folder(tmp_path / "b", runs, build.manifest(["baseline", "lean"], model={"temperature": 0.7}))
    result = CliRunner().invoke(compare, [str(a), str(b), "--force"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("> Results from the simulated model")
    top = "\n".join(lines[:8])
    assert "fixed variables differ" in top and "model.temperature: 0.0 -> 0.7" in top
    assert "`lean` vs `lean (A)`: **too few tasks** in total tokens" in result.output  # 3 tasks settle nothing
    assert "**too few tasks** in completion (+0.0 pts [-" in result.output
    assert "`lean` vs `baseline`: " in result.output


def test_compare_command_same_fixed_variables(tmp_path, build):
    a = build.write_folder(tmp_path / "a", planted(build, "baseline", [True] * 10), build.manifest(["baseline"]))
    b = build.write_folder(tmp_path / "b", planted(build, "baseline", [False] * 2 + [True] * 8), build.manifest(["baseline"]))
    result = CliRunner().invoke(compare, [str(a), str(b)])
    assert result.exit_code == 0, result.output
    assert "differ" not in result.output.split("# ctxbench compare")[0]
    assert "| baseline | baseline (A) | 10 |" in result.output


def test_compare_names_strategy_params_that_differ_under_the_same_label(tmp_path, build):
    runs = planted(build, "baseline", [True, False, True])
    man_a, man_b = build.manifest(["baseline"]), build.manifest(["baseline"])
    man_b["strategies"][0]["params"] = {"limit": 200}
    a = build.write_folder(tmp_path / "a", runs, man_a)
    b = build.write_folder(tmp_path / "b", runs, man_b)
    result = CliRunner().invoke(compare, [str(a), str(b)])
    assert result.exit_code == 0, result.output
    assert "Strategies under the same label differ" in result.output
    assert "strategy baseline: params.limit: '(missing)' -> 200" in result.output


def test_compare_command_refuses_a_named_reference_without_runs(tmp_path, build):
    a = build.write_folder(tmp_path / "a", planted(build, "baseline", [True] * 4), build.manifest(["baseline"]))
    b = build.write_folder(tmp_path / "b", planted(build, "baseline", [True] * 4), build.manifest(["baseline"]))
    result = CliRunner().invoke(compare, [str(a), str(b), "--reference", "baselin"])
    assert result.exit_code == 2
    assert "no runs of the reference strategy 'baselin'" in result.output
    assert "did you mean 'baseline'" in result.output
    assert CliRunner().invoke(compare, [str(a), str(b), "--reference", "baseline"]).exit_code == 0
