"""Runs that must not count silently: harness errors, runs without a partner; verdicts and their
wording; Holm's correction; the ids and tables."""

import json
import math
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

from ctxbench.harness.cli import cli
from ctxbench.reports import write_report
from ctxbench.reports.compare import compare_strategies, verdict_line
from ctxbench.reports.loading import load_results
from ctxbench.reports.summary import summarize


def tasks_grid(build, strategy, per_task, repeats=3, tokens=1000):
    """per_task[t] = how many of the repeats of task t resolve."""
    return [build.run(strategy, f"task-{t:02d}", r, r < ok, tokens=tokens + 13 * t + r)
            for t, ok in enumerate(per_task) for r in range(repeats)]


def test_harness_errors_are_left_out_of_rates_and_comparisons_and_listed(tmp_path, build):
    # The reference is made of harness errors on half the tasks: counted as failures they would make
    # the candidate look better.
    ref = tasks_grid(build, "baseline", [3] * 8)
    for i, r in enumerate(ref[:12]):
        ref[i] = build.run("baseline", r.task_id, r.repeat, False, tokens=0, reason="harness_error")
    cand = tasks_grid(build, "lean", [3] * 8)
    folder = build.write_folder(tmp_path / "r", ref + cand, build.manifest(["baseline", "lean"]))
    runs = load_results(folder).runs
    base = summarize(runs)[0]
    assert (base.runs, base.resolved, base.harness_errors, base.completion_rate) == (12, 12, 12, 1.0)
    (c,) = compare_strategies(runs, "baseline")
    assert c.pairs == 12 and c.tasks == 4 and c.completion.difference == 0
    assert len(c.excluded) == 12 and "baseline task-00#0" in c.excluded
    assert len(c.unpaired) == 12 and "lean task-00#0" in c.unpaired
    assert c.completion.verdict != "better"
    text = write_report(folder).markdown.read_text()
    assert "12 runs ended in `harness_error`" in text and "`baseline task-03#2`" in text
    assert "12 runs without a partner were not compared" in text


def test_unequal_run_counts_and_missing_pairs_are_named(tmp_path, build):
    ref = tasks_grid(build, "baseline", [3, 2, 1, 0, 3, 3], repeats=3)
    cand = tasks_grid(build, "lean", [3, 2, 1, 0, 3, 3], repeats=2)  # one repeat fewer
    folder = build.write_folder(tmp_path / "r", ref + cand, build.manifest(["baseline", "lean"]))
    (c,) = compare_strategies(load_results(folder).runs, "baseline")
    assert c.pairs == 12 and len(c.unpaired) == 6
    assert all(u.startswith("baseline ") and u.endswith("#2") for u in c.unpaired)
    paths = write_report(folder)
    assert "6 runs without a partner were not compared" in paths.markdown.read_text()


def test_identical_arms_on_few_tasks_are_not_equivalent_and_print_no_zero_width_interval(build):
    """Five identical tasks: a population where 5 % of the tasks are lost outright by the candidate and the
    rest tied is worse by 5 pts and gives five ties 0.95^5 = 77 % of the time, so nothing rules it out;
    the interval printed is the bounded one, never `+0.0 [+0.0, +0.0]`."""
    same = [3, 0, 2, 1, 3]
    runs = tasks_grid(build, "baseline", same) + tasks_grid(build, "lean", same)
    (c,) = compare_strategies(pd.DataFrame([r.model_dump() for r in runs]), "baseline")
    assert c.completion.verdict == "too few tasks" and c.completion.ni_p > 0.5
    low, high = c.completion.ci
    assert low < -0.2 and high > 0.2 and low == pytest.approx(-high)
    line = verdict_line(c)
    assert "[+0.0, +0.0]" not in line and "**too few tasks** in completion (+0.0 pts [-" in line


def test_two_arms_that_resolve_nothing_are_not_equivalent(build):
    """Both arms at 0 % on five tasks, and identical arms on 8 tasks × 3: the data bound the difference
    no closer than ±20 pts, so neither reads "equivalent"."""
    zeros = tasks_grid(build, "baseline", [0] * 5) + tasks_grid(build, "lean", [0] * 5)
    (c,) = compare_strategies(pd.DataFrame([r.model_dump() for r in zeros]), "baseline")
    assert c.completion.verdict == "too few tasks" and c.completion.equivalence_p > 0.5
    eight = [3, 0, 2, 1, 3, 0, 1, 2]
    same = tasks_grid(build, "baseline", eight) + tasks_grid(build, "lean", eight)
    (c8,) = compare_strategies(pd.DataFrame([r.model_dump() for r in same]), "baseline")
    assert c8.completion.verdict == "inconclusive" and c8.completion.ci[0] < -0.2


REF = [3, 3, 0, 2, 1, 3, 0, 3, 2, 1] * 8
CLOSE = [v + {2: 1, 3: 1, 4: 1, 6: 1, 8: 1, 0: -1, 1: -1}.get(i, 0) for i, v in enumerate(REF)]
"""80 tasks: one repeat more on five tasks, one fewer on two; the bounded interval holds 0 and lies above
-5 pts, but not below +5 pts."""


def test_verdicts_better_worse_equivalent_non_inferior(build):
    ref = REF
    cases = {
        "up": [3] * len(ref),                                 # resolves everything: better
        "down": [0] * len(ref),                               # worse
        "same": ref,                                          # 80 tasks, none differs: equivalent
        "close": CLOSE,                                       # non-inferior
    }
    runs = tasks_grid(build, "baseline", ref)
    for name, per_task in cases.items():
        runs += tasks_grid(build, name, per_task)
    frame = pd.DataFrame([r.model_dump() for r in runs])
    verdicts = {c.strategy: c for c in compare_strategies(frame, "baseline")}
    assert verdicts["up"].completion.verdict == "better" and verdicts["down"].completion.verdict == "worse"
    same = verdicts["same"].completion
    assert same.verdict == "equivalent", verdict_line(verdicts["same"])
    assert -0.05 < same.ci[0] and same.ci[1] < 0.05 and same.ci_confidence == pytest.approx(1 - 2 * 0.05 / 2)
    close = verdicts["close"]
    assert close.completion.verdict == "non-inferior", verdict_line(close)
    assert -0.05 < close.completion.ci[0] <= 0 < 0.05 < close.completion.ci[1]
    # Holm: three tests with a p-value (same has none); up and down tie at the smallest p and both get the
    # multiplier 3 whatever their order; intervals widened accordingly
    assert sorted(c.completion.holm_factor for c in verdicts.values() if not math.isnan(c.completion.p_value)) == [1, 3, 3]
    assert close.completion.confidence == pytest.approx(1 - 0.05 / close.completion.holm_factor)
    assert close.completion.bounds_confidence == pytest.approx(1 - 2 * 0.05 / close.completion.ni_holm_factor)
    assert "**better** in completion" in verdict_line(verdicts["up"]) and "98.3% CI, margin" in verdict_line(verdicts["up"])


def test_cheaper_and_non_inferior_reads_as_one_line(build):
    runs = tasks_grid(build, "baseline", REF, tokens=20000)
    runs += tasks_grid(build, "masking", CLOSE, tokens=8800)
    (c,) = compare_strategies(pd.DataFrame([r.model_dump() for r in runs]), "baseline")
    line = verdict_line(c)
    assert line.startswith("`masking` vs `baseline`: **cheaper** in total tokens (total ×0.45 [0.45, 0.46], 95% CI; "
                           "typical task ×0.45)"), line
    assert "and **non-inferior** in completion (+" in line and "90% CI, margin 5 pts" in line
    assert "secondary, repeats as independent: McNemar p" in line


def test_cost_gets_its_own_verdict_when_runs_record_it(build):
    ref = tasks_grid(build, "baseline", [3, 2, 1, 0, 3, 3], tokens=2000)
    cand = tasks_grid(build, "lean", [3, 2, 1, 0, 3, 3], tokens=1000)
    frame = pd.DataFrame([r.model_dump() for r in ref + cand])
    frame["cost_usd"] = frame["total_tokens"] * 1e-6 * (1 + frame.index % 3)
    (c,) = compare_strategies(frame, "baseline")
    assert c.cost is not None and c.cost.verdict == "cheaper"
    assert ", **cheaper** in total cost (total ×" in verdict_line(c)


def test_report_states_holm_and_writes_comparisons_csv_and_ids(tmp_path, build):
    runs = tasks_grid(build, "baseline", REF) + tasks_grid(build, "a", [3] * len(REF)) + tasks_grid(build, "b", REF)
    man = build.manifest(["baseline", "a", "b"])
    man["fixed_id"] = "f" * 16
    folder = build.write_folder(tmp_path / "r", runs, man)
    paths = write_report(folder)
    text = paths.markdown.read_text()
    assert "Holm's correction across the 2 strategies compared with `baseline`" in text
    assert f"Experiment `{man['experiment_id']}` (name, resolved config and taskset), fixed variables `ffffffffffffffff`" in text
    assert "## Design and power" in text
    paired = pd.read_csv(paths.comparisons_csv)
    assert list(paired["strategy"]) == ["a", "b"]
    assert {"difference_low", "difference_high", "p_holm", "design_effect", "mcnemar_p", "token_ratio_low",
            "verdict", "token_verdict"} <= set(paired.columns)
    assert paired.loc[0, "verdict"] == "better"
    summary = pd.read_csv(paths.summary_csv)
    assert {"difference", "verdict", "token_ratio"} <= set(summary.columns)
    raw = paths.summary_csv.read_text() + paths.comparisons_csv.read_text()
    assert "e-1" not in raw  # no 1.3597e-16 for zero


def test_compare_two_strategies_of_one_folder(tmp_path, build):
    runs = tasks_grid(build, "baseline", [3, 2, 1, 0, 3, 3]) + tasks_grid(build, "lean", [3, 2, 1, 0, 3, 1])
    folder = build.write_folder(tmp_path / "r", runs, build.manifest(["baseline", "lean"]))
    runner = CliRunner()
    result = runner.invoke(cli, ["compare", str(folder), "--strategies", "baseline", "lean", "--margin", "10"])
    assert result.exit_code == 0, result.output
    assert "# ctxbench compare — `lean` against `baseline`" in result.output
    assert "`lean` vs `baseline`: " in result.output and "margin 10 pts" in result.output
    bad = runner.invoke(cli, ["compare", str(folder), "--strategies", "baseline", "nope"])
    assert bad.exit_code == 2 and "no runs of the strategy 'nope'" in bad.output
    neither = runner.invoke(cli, ["compare", str(folder)])
    assert neither.exit_code == 2 and "--strategies" in neither.output


def test_compare_does_not_import_matplotlib(tmp_path, build):
    runs = tasks_grid(build, "baseline", [3, 2, 1]) + tasks_grid(build, "lean", [3, 2, 0])
    folder = build.write_folder(tmp_path / "r", runs, build.manifest(["baseline", "lean"]))
    code = ("import sys; from ctxbench.harness.cli import cli\n"
            f"try: cli(['compare', {str(folder)!r}, '--strategies', 'baseline', 'lean'])\n"
            "except SystemExit as e: assert not e.code, e.code\n"
            "print('MPL', 'matplotlib' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "`lean` vs `baseline`" in out.stdout and out.stdout.strip().endswith("MPL False")


def test_plan_command_answers_how_many_runs(tmp_path, build):
    ref = [3, 3, 0, 2, 1, 3, 0, 3, 2, 1]
    runs = tasks_grid(build, "baseline", ref) + tasks_grid(build, "lean", [max(0, v - (i % 3 == 0)) for i, v in enumerate(ref)])
    folder = build.write_folder(tmp_path / "r", runs, build.manifest(["baseline", "lean"]))
    runner = CliRunner()
    result = runner.invoke(cli, ["plan", str(folder), "--difference", "5"])
    assert result.exit_code == 0, result.output
    assert "to detect 5 pts of completion with 80% power" in result.output
    assert "`lean` vs `baseline`: this design (10 tasks × 3 repeats) detects" in result.output
    assert "5 pts needs" in result.output and "runs per strategy" in result.output
    assert result.output.startswith("Figures from the simulated model")
    for args, message in ((["--reference", "nope"], "no runs of the reference strategy 'nope'"),
                          (["--difference", "0"], "--difference")):
        bad = runner.invoke(cli, ["plan", str(folder), *args])
        assert bad.exit_code == 2 and message in bad.output, bad.output


@pytest.mark.parametrize("args", [["compare", "--strategies", "baseline", "leen"],
                                  ["compare", "--strategies", "baselin", "lean"],
                                  ["plan", "--reference", "leen"]])
def test_an_unknown_strategy_name_says_did_you_mean_in_one_error_line(tmp_path, build, args):
    runs = tasks_grid(build, "baseline", [3, 2, 1]) + tasks_grid(build, "lean", [3, 2, 0])
    folder = build.write_folder(tmp_path / "r", runs, build.manifest(["baseline", "lean"]))
    before = sorted(p.name for p in folder.iterdir())
    result = CliRunner().invoke(cli, [args[0], str(folder), *args[1:]])
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    wrong = next(a for a in args if a in ("leen", "baselin"))
    assert len(lines) == 1 and lines[0].startswith("error: ") and "no runs of the " in lines[0]
    assert f"{wrong!r}; did you mean {'lean' if wrong == 'leen' else 'baseline'!r}?" in lines[0]
    assert "(strategies: baseline, lean)" in lines[0]
    assert sorted(p.name for p in folder.iterdir()) == before


def test_experiment_id_names_the_experiment_beside_the_fixed_hash(tmp_path):
    from ctxbench.harness.config import load_config, resolve_experiment_path
    from ctxbench.harness.run.runner import prepare

    path = resolve_experiment_path("smoke")
    base = prepare(load_config(path, []), path.parent, tmp_path / "a")
    other = prepare(load_config(path, ["repeats=7"]), path.parent, tmp_path / "b")
    workers = prepare(load_config(path, ["workers=3"]), path.parent, tmp_path / "c")
    assert base.fixed == other.fixed and base.experiment_id != other.experiment_id
    assert workers.experiment_id == base.experiment_id  # how it is executed is not the experiment
    assert json.dumps(base.fixed)  # the fixed variables stay a separate hash
