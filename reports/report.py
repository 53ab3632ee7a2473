"""The report of one results folder: report.md, report.html, summary.csv and plots/*.png."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ctxbench.reports.compare import (ALPHA, MARGIN, SAME_RATIO, PairedComparison, accounting_lines, comparison_csv,
                                      comparison_frame, compare_strategies, verdict_line)
from ctxbench.reports.factors import agent_strategy_blocks
from ctxbench.reports.notices import (SIMULATED_NOTICE, completeness_notice, estimated_usage_notice,
                                      harness_error_notice, manifest_notices, no_tool_calls_notice)
from ctxbench.reports.document import Block, Bullets, Figure, Heading, Notice, Paragraph, Table, to_html, to_markdown
from ctxbench.reports.frames import run_records, turns_df
from ctxbench.reports.loading import Manifest, ResultsFolder, load_results
from ctxbench.reports.planning import plan_frame, plan_rows, plan_sentence
from ctxbench.reports.summary import (StrategySummary, failure_frame, outcome_grid, repeat_rates, split_harness_errors,
                                      summarize, summary_frame, task_table)
from ctxbench.reports.run_pages import run_index, write_run_pages
from ctxbench.harness.config.sequential import SequentialRecord, read_sequential
from ctxbench.reports.sequential_report import sequential_blocks
from ctxbench.reports.summary_json import write_summary_json
from ctxbench.reports.regime_report import check_price_model, holds_word, regime_section
from ctxbench.reports.regimes import RegimeVerdicts
from ctxbench.reports.verdict_table import VERDICT_COLOURS, verdict_caption, verdict_frame

__all__ = ["ReportPaths", "write_report", "report_blocks", "manifest_notices", "completeness_notice", "check_reference",
           "SIMULATED_NOTICE", "METHOD", "DEFAULT_REFERENCE"]

DEFAULT_REFERENCE = "baseline"
"""The strategy the others are compared with unless another is named."""

METHOD = ("Pairs are (task, repeat) runs with the same seed; the task is the unit of inference (repeats of one "
          "task are correlated) and the estimand the difference over the population of tasks like these. "
          "Completion: the mean of the per-task mean differences. Better / worse: tested by flipping the sign of "
          "whole tasks (exact sign-flip randomization test of \"the candidate changes nothing\"), with the "
          "interval of every difference that test does not reject; design effect = the variance of the pair mean "
          "clustered by task over that of independent pairs. Non-inferior / equivalent: the bounded-mean "
          "(betting) test of the per-task differences, which holds whatever their distribution within [−1, 1], "
          "ties and skew included, so that a handful of tied tasks cannot rule out a loss. Tokens and cost: the "
          "ratio of the totals over the paired runs (what the bill becomes), tested by flipping the sign of each "
          "task's candidate total minus the reference's, with the interval of every ratio that test does not "
          "reject; the typical task's ratio (geometric mean of the per-task ratios) is printed beside it. Holm's "
          "correction across the {m} strategies compared with `{reference}`, separately for completion, "
          "completion non-inferiority, tokens and cost: each interval has confidence 1 − {alpha:g}/k (k its Holm "
          "multiplier; the non-inferiority interval 1 − 2·{alpha:g}/k, each bound one-sided at {alpha:g}/k). "
          "Verdicts: better / worse when the adjusted test rejects no difference; non-inferior when the adjusted "
          "one-sided test rejects \"worse by {margin:g} pts\" (the lower bound is above −{margin:g}), equivalent "
          "when the test of \"better by {margin:g} pts\" is rejected too; too few tasks when no p could pass "
          "{alpha:g}/{m}; else inconclusive. Each verdict prints the interval it rests on. Tokens and cost: "
          "cheaper / dearer, same within ×(1 ± {same:g}), too few tasks, else inconclusive. The exact McNemar "
          "test on (task, repeat) pairs is a secondary figure that treats repeats as independent. MDD: smallest "
          "difference the task-level test detects with 80% power at {alpha:g}/{m}.")

class ReportPaths(NamedTuple):
    """Files written by write_report (a tuple: report.md first)."""

    markdown: Path
    html: Path
    summary_csv: Path
    plots: list[Path]
    comparisons_csv: Path | None = None
    """comparisons.csv; None when no paired comparison was made."""
    summary_json: Path | None = None
    """summary.json: per strategy `completion_rate`, `avg_tokens`, `avg_time_seconds`, `failures`."""


def _pct(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:.1%}"


def _num(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:,.0f}"


def _pricing_note(m: Manifest) -> list[Block]:
    if not m.pricing:
        return []
    p = m.pricing
    return [Paragraph(f"Cost (`cost_usd`) at ${p['input']:g} per million prompt tokens, ${p['cached_input']:g} per "
                      f"million cached prompt tokens and ${p['output']:g} per million completion tokens "
                      f"({p['source']}).")]


def _decimal(x: float) -> str:
    return "–" if math.isnan(x) else f"{x:.1f}"


def _usd(x: float) -> str:
    return "–" if math.isnan(x) else f"${x:,.4f}"


def _summary_table(summaries: list[StrategySummary]) -> pd.DataFrame:
    errors = any(s.harness_errors for s in summaries)
    masked = any(not math.isnan(s.masked_mean) for s in summaries)
    rows = [{
        "strategy": s.strategy, "runs": s.runs, **({"harness errors (left out)": s.harness_errors} if errors else {}),
        "resolved": s.resolved,
        "completion [95% CI]": f"{_pct(s.completion_rate)} [{_pct(s.ci_low)}, {_pct(s.ci_high)}]",
        "per-repeat mean ± sd (min–max)": f"{_pct(s.repeat_mean)} ± {_pct(s.repeat_std)} "
                                          f"({_pct(s.repeat_min)}–{_pct(s.repeat_max)})",
        "tokens mean / median / p90": f"{_num(s.tokens_mean)} / {_num(s.tokens_median)} / {_num(s.tokens_p90)}",
        "tokens per resolved": _num(s.tokens_per_resolved),
        **({"cost $ mean / per resolved": f"{_usd(s.cost_mean)} / {_usd(s.cost_per_resolved)}"}
           if any(not math.isnan(x.cost_mean) for x in summaries) else {}),
        "turns (mean)": f"{s.turns_mean:.1f}",
        **({"masked outputs (mean per run)": _decimal(s.masked_mean)} if masked else {}),
        "wall s (mean / median)": f"{s.wall_mean:.1f} / {s.wall_median:.1f}",
    } for s in summaries]
    return pd.DataFrame(rows)


def _pass_table(summaries: list[StrategySummary]) -> pd.DataFrame:
    rows = []
    for s in summaries:
        row: dict[str, str] = {"strategy": s.strategy}
        row.update({f"pass@{k}": _pct(v) for k, v in s.pass_at_k.items()})
        row.update({f"pass^{k}": _pct(v) for k, v in s.pass_hat_k.items()})
        rows.append(row)
    return pd.DataFrame(rows).fillna("–")


def _failure_table(summaries: list[StrategySummary]) -> pd.DataFrame:
    counts, shares = failure_frame(summaries), failure_frame(summaries, share=True)
    table = counts.astype(int).astype(str) + " (" + shares.map(lambda v: f"{v:.0%}") + ")"
    table.index.name = "failure reason"
    return table


_IN_VERDICT_TABLE = ("vs", "verdict", "token ratio (total)", "tokens", "cost ratio (total)", "cost")
"""Columns of the comparison table the verdict table already shows (comparisons.csv keeps them all)."""


def _comparison_blocks(folder: ResultsFolder, reference: str, comparisons: list[PairedComparison],
                       margin: float, plots_dir: Path) -> tuple[list[Block], list[Path]]:
    from ctxbench.reports.plots import plot_forest

    blocks: list[Block] = [Heading(f"Paired comparison with `{reference}`")]
    if reference not in folder.strategies:
        return blocks + [Notice(f"The reference strategy `{reference}` is not in this experiment, so no paired "
                                f"comparison was made; strategies: {', '.join(folder.strategies)}.")], []
    if not comparisons:
        return blocks + [Paragraph(f"`{reference}` is the only strategy.")], []
    forest = plot_forest(comparisons, plots_dir / "forest.png")
    blocks += [
        Paragraph(METHOD.format(m=len(comparisons), reference=reference, alpha=ALPHA, margin=margin * 100,
                                same=SAME_RATIO)),
        *[Notice(line) for line in accounting_lines(comparisons)],
        Bullets(tuple(verdict_line(c) for c in comparisons)),
        Figure(forest, f"Paired difference of each strategy against `{reference}`: completion (the interval its "
                       f"verdict rests on, dashed line the −{margin * 100:g} pts margin) and the ratio of total tokens "
                       "(sign-flip interval over tasks), Holm-adjusted."),
        Table(comparison_frame(comparisons).drop(columns=list(_IN_VERDICT_TABLE), errors="ignore"), id="comparison"),
    ]
    return blocks, [forest]


def _planning_blocks(folder: ResultsFolder, reference: str, margin: float) -> list[Block]:
    if reference not in folder.strategies or len(folder.strategies) < 2:
        return []
    rows = plan_rows(folder.runs, reference, margin, folder.strategies)
    if not rows:
        return []
    return [Heading("Design and power"),
            Paragraph(f"What this design can detect at the task level, and what a difference of {margin * 100:g} "
                      f"pts (the margin) would need (80% power, α = {ALPHA:g}; `ctxbench plan` answers for any "
                      "difference)."),
            Bullets(tuple(plan_sentence(r) for r in rows)),
            Table(plan_frame(rows), id="power")]


def _draw_plots(folder: ResultsFolder, summaries: list[StrategySummary], fill: pd.DataFrame,
                plots_dir: Path) -> dict[str, Path]:
    from ctxbench.reports.plots import (plot_completion, plot_context_fill, plot_failures, plot_outcome_grid,
                                        plot_stability, plot_tokens)

    counted = [s.strategy for s in summaries if s.runs]
    countable, _ = split_harness_errors(folder.runs)
    plots = {
        "completion": plot_completion([s for s in summaries if s.runs], plots_dir / "completion.png"),
        "stability": plot_stability(repeat_rates(countable), counted, plots_dir / "stability.png"),
        "tokens": plot_tokens(countable, counted, plots_dir / "tokens.png"),
        "failures": plot_failures(failure_frame(summaries, share=True), plots_dir / "failures.png"),
        "outcomes": plot_outcome_grid({s: outcome_grid(folder.runs, s) for s in folder.strategies},
                                      plots_dir / "outcomes.png"),
    }
    if not fill.empty:
        plots["context_fill"] = plot_context_fill(fill, folder.strategies, plots_dir / "context_fill.png")
    return plots


def _verdict_blocks(reference: str, comparisons: list[PairedComparison], regimes: list[RegimeVerdicts],
                    sequential: SequentialRecord | None = None) -> list[Block]:
    """The first screen: one row per strategy against the reference, verdict words coloured; a finished
    sequential experiment's completion from its rounds."""
    if not comparisons:
        return []
    observed = {v.strategy: v.by_regime["cache as observed"].cost for v in regimes if "cache as observed" in v.by_regime}
    repriced = any(c.cost is None and observed.get(c.strategy) is not None for c in comparisons)
    comparisons = [c if c.cost is not None else replace(c, cost=observed.get(c.strategy)) for c in comparisons]
    costs = {c.strategy: c.cost.verdict for c in comparisons if c.cost is not None}
    holds = {v.strategy: holds_word(v, costs.get(v.strategy)) for v in regimes}
    note = " Cost: the runs re-priced call by call, cache as observed (see the pricing regimes)." if repriced else ""
    return [Table(verdict_frame(comparisons, holds, sequential), id="verdicts", inline=True,
                  colours=tuple(VERDICT_COLOURS.items())),
            Paragraph(verdict_caption(comparisons, reference, sequential) + note)]


def _opening(folder: ResultsFolder, sequential: SequentialRecord | None) -> list[Block]:
    m, runs = folder.manifest, folder.runs
    stopped_as_planned = sequential is not None and sequential.finished
    return [
        *manifest_notices(m),
        *([] if stopped_as_planned else completeness_notice(m, runs)),
        *harness_error_notice(runs),
        *no_tool_calls_notice(runs, folder.strategies),
        *estimated_usage_notice(runs),
    ]


def _experiment(folder: ResultsFolder) -> list[Block]:
    m, runs = folder.manifest, folder.runs
    return [
        Heading("Experiment"),
        Paragraph(f"Experiment `{m.experiment_id}` (name, resolved config and taskset), fixed variables "
                  f"`{m.fixed_id or '?'}`; started {m.created}, harness {m.harness_version}. "
                  f"Model `{m.model_name}` (provider `{m.config.get('model', {}).get('provider', '?')}`); "
                  f"{runs['task_id'].nunique()} tasks × {runs['repeat'].nunique()} repeats × "
                  f"{len(folder.strategies)} strategies = {len(runs)} runs."),
    ]


def _fill_blocks(plots: dict[str, Path]) -> list[Block]:
    if "context_fill" not in plots:
        return [Heading("Context fill"), Notice("No transcripts in this folder: the context-fill plot was not drawn.")]
    return [Heading("Context fill"),
            Figure(plots["context_fill"], "Context fill over turns: median and 25–75% band per strategy (at each "
                                          "turn, over the runs still going).")]


def _outcome_blocks(folder: ResultsFolder, summaries: list[StrategySummary], plots: dict[str, Path]) -> list[Block]:
    """Stability, tokens, failure reasons and the task table."""
    failed = any(s.runs > s.resolved or s.harness_errors for s in summaries)
    return [
        Heading("Stability"),
        Figure(plots["stability"], "Completion rate of each repeat, per strategy."),
        Figure(plots["outcomes"], "Outcome of every task and repeat, per strategy: mixed rows are unstable tasks."),
        Paragraph("pass@k: chance that at least one of k repeats resolves a task (unbiased estimator, Chen et al. "
                  "2021); pass^k: chance that all k do; both averaged over tasks."),
        Table(_pass_table([s for s in summaries if s.runs]), id="passk"),
        Heading("Tokens"),
        Figure(plots["tokens"], "Total tokens per run (prompt + completion + strategy)."),
        Heading("Failure reasons"),
        Table(_failure_table(summaries), id="failures") if failed else Paragraph("Every run resolved its task."),
        Figure(plots["failures"], "Failure reasons as a share of each strategy's runs."),
        *_fill_blocks(plots),
        Heading("Tasks × strategies"),
        Paragraph("Resolved repeats / runs (harness_error runs left out)."),
        Table(task_table(folder.runs, folder.strategies).rename_axis("task", axis=0), id="tasks"),
    ]


def report_blocks(folder: ResultsFolder, reference: str, plots_dir: Path, margin: float = MARGIN,
                  price_as: str | None = None
                  ) -> tuple[list[Block], list[StrategySummary], list[Path], list[PairedComparison]]:
    """Compute everything, draw the plots into `plots_dir`, and lay out the report (`price_as`: the
    price-database model the pricing regimes re-price with; default the experiment's).

    Returns:
        The blocks, the summaries (for summary.csv), the plot paths and the paired comparisons.
    """
    order = folder.strategies
    turns = turns_df(folder.path)
    summaries = summarize(folder.runs, order, turns)
    comparisons = (compare_strategies(folder.runs, reference, order, margin=margin)
                   if reference in order and len(order) > 1 else [])
    plots = _draw_plots(folder, summaries, turns, plots_dir)
    comparison, forest = _comparison_blocks(folder, reference, comparisons, margin, plots_dir)
    pricing, regimes = regime_section(folder, turns, reference, margin, price_as)
    sequential = read_sequential(folder.path)
    blocks: list[Block] = [
        *_opening(folder, sequential),
        Heading(f"ctxbench report — {folder.manifest.name}", 1),
        *_verdict_blocks(reference, comparisons, regimes,
                         sequential if sequential is not None and sequential.reference == reference else None),
        *sequential_blocks(sequential),
        *_experiment(folder),
        Heading("Summary"),
        Table(_summary_table([s for s in summaries if s.runs]), id="summary"),
        *agent_strategy_blocks(folder),
        *_pricing_note(folder.manifest),
        Figure(plots["completion"], "Completion rate per strategy with 95% intervals over the population of tasks "
                                    "like these (Wilson with the effective size of runs clustered by task)."),
        *comparison,
        *pricing,
        *_planning_blocks(folder, reference, margin),
        *_outcome_blocks(folder, summaries, plots),
        *run_index(folder),
    ]
    paths = [plots[k] for k in ("completion", "stability", "tokens", "failures", "outcomes")] + forest
    return blocks, summaries, paths + [plots[k] for k in ("context_fill",) if k in plots], comparisons


def _with_paired_columns(summary: pd.DataFrame, comparisons: list[PairedComparison]) -> pd.DataFrame:
    paired = comparison_csv(comparisons)
    if paired.empty:
        return summary
    keep = {"reference": "vs", "difference": "difference", "difference_low": "difference_low",
            "difference_high": "difference_high", "p_holm": "p_holm", "verdict": "verdict",
            "token_ratio": "token_ratio", "token_ratio_low": "token_ratio_low",
            "token_ratio_high": "token_ratio_high", "token_verdict": "token_verdict"}
    return summary.merge(paired[["strategy", *keep]].rename(columns=keep), on="strategy", how="left")


def _csv(frame: pd.DataFrame, path: Path) -> Path:
    """Six significant digits; rounding noise below 1e-12 written as 0 (not 1.3597e-16)."""
    frame = frame.copy()
    numeric = frame.select_dtypes("float").columns
    frame[numeric] = frame[numeric].mask(frame[numeric].abs() < 1e-12, 0.0)
    frame.to_csv(path, index=False, float_format="%.6g")
    return path


def check_reference(folder: ResultsFolder, reference: str | None) -> str:
    """The reference strategy of the comparisons: `reference` when named (it must have runs), else
    `baseline`, else the first arm that runs the baseline strategy (`builtin/baseline` when the arms
    vary the agent); the report notes when the experiment has none.

    Raises:
        InputError: `reference` names no strategy of the folder (with "did you mean").
    """
    if reference is None:
        if DEFAULT_REFERENCE in folder.strategies:
            return DEFAULT_REFERENCE
        arms = [s.key for s in folder.manifest.strategies if s.name == DEFAULT_REFERENCE and s.key in folder.strategies]
        return arms[0] if arms else DEFAULT_REFERENCE
    return folder.check_strategy(reference, "reference strategy")


def write_report(run_dir: str | Path, reference: str | None = None, margin: float = MARGIN,
                 price_as: str | None = None) -> ReportPaths:
    """Write report.md, report.html (self-contained), summary.csv, summary.json, comparisons.csv,
    plots/*.png and runs/<strategy>/<task>.<repeat>.html (one self-contained page per run with a
    transcript) into a results folder. The figures come from `runs_df` and `turns_df`
    (ctxbench.reports.frames).

    Args:
        run_dir: A results folder (manifest.json, runs.jsonl, optional transcripts/).
        reference: Strategy the others are compared with. None: `baseline`, and when the experiment
            has no `baseline` the report says so.
        margin: Non-inferiority margin in completion rate (0.05 = 5 points).
        price_as: A model of the genai-prices database to re-price the runs as under the pricing
            regimes (None: the model the experiment was priced as).

    Raises:
        InputError: not a results folder, no runs, a named `reference` without runs, or a
            `price_as` the price database does not have (nothing is written then).
    """
    run_dir = Path(run_dir)
    folder = load_results(run_dir)
    reference = check_reference(folder, reference)
    check_price_model(folder.manifest, price_as)
    write_run_pages(run_dir, run_records(folder.runs), folder.manifest)
    blocks, summaries, plots, comparisons = report_blocks(folder, reference, run_dir / "plots", margin, price_as)
    md, page, csv = run_dir / "report.md", run_dir / "report.html", run_dir / "summary.csv"
    md.write_text(to_markdown(blocks, run_dir), encoding="utf-8")
    page.write_text(to_html(blocks, f"ctxbench report — {folder.manifest.name}"), encoding="utf-8")
    _csv(_with_paired_columns(summary_frame(summaries), comparisons), csv)
    paired = _csv(comparison_csv(comparisons), run_dir / "comparisons.csv") if comparisons else None
    notes = write_summary_json(folder, summaries, run_dir / "summary.json")
    return ReportPaths(md, page, csv, plots, paired, notes)
