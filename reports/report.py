"""The report of one results folder: report.md, report.html, summary.csv and plots/*.png."""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ctxbench.harness.results_folder import transcript_path
from ctxbench.reports.compare import (ALPHA, MARGIN, SAME_RATIO, PairedComparison, accounting_lines, comparison_csv,
                                      comparison_frame, compare_strategies, verdict_line)
from ctxbench.reports.document import Block, Bullets, Figure, Heading, Notice, Paragraph, Table, to_html, to_markdown
from ctxbench.reports.frames import run_records, turns_df
from ctxbench.reports.loading import Manifest, ResultsFolder, load_results
from ctxbench.reports.planning import plan_frame, plan_rows, plan_sentence
from ctxbench.reports.summary import (StrategySummary, failure_frame, outcome_grid, repeat_rates, split_harness_errors,
                                      summarize, summary_frame, task_table)
from ctxbench.reports.runview import write_run_pages

__all__ = ["ReportPaths", "write_report", "report_blocks", "manifest_notices", "SIMULATED_NOTICE", "METHOD"]

METHOD = ("Pairs are (task, repeat) runs with the same seed; the task is the unit of inference (repeats of one "
          "task are correlated). Completion: mean pair difference with a t interval whose standard error is "
          "clustered by task (the paired t test on per-task means); design effect = its variance over that of "
          "independent pairs. Tokens and cost: ratio of means with a bootstrap over tasks. Holm's correction "
          "across the {m} strategies compared with `{reference}`, separately for completion, tokens and cost: "
          "each interval has confidence 1 − {alpha:g}/k (k its Holm multiplier). Verdicts from one interval "
          "each: better / worse when the adjusted test rejects, non-inferior when the lower bound is above "
          "−{margin:g} pts, else inconclusive; tokens and cost: cheaper / dearer, same within ×(1 ± {same:g}), "
          "else inconclusive. The exact McNemar test on (task, repeat) pairs is a secondary figure that treats "
          "repeats as independent. MDD: smallest difference the task-level test detects with 80% power.")

SIMULATED_NOTICE = ("Results from the simulated model `{model}` — a stand-in for a model, not a model: they measure "
                    "the strategies against the simulator's attention model, not a real LLM.")


class ReportPaths(NamedTuple):
    """Files written by write_report (a tuple: report.md first)."""

    markdown: Path
    html: Path
    summary_csv: Path
    plots: list[Path]
    comparisons_csv: Path | None = None
    """comparisons.csv; None when no paired comparison was made."""


def manifest_notices(manifest: Manifest, where: str = "") -> list[Block]:
    """Quoted warnings that must open a report: simulated model first, then a sandbox fallback."""
    prefix = f"{where}: " if where else ""
    out: list[Block] = []
    if manifest.simulated:
        out.append(Notice(prefix + SIMULATED_NOTICE.format(model=manifest.config.get("model", {}).get("provider", "sim"))))
    if manifest.sandbox.warning:
        out.append(Notice(f"{prefix}Sandbox warning: {manifest.sandbox.warning}"))
    return out


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


def _usd(x: float) -> str:
    return "–" if math.isnan(x) else f"${x:,.4f}"


def _summary_table(summaries: list[StrategySummary]) -> pd.DataFrame:
    errors = any(s.harness_errors for s in summaries)
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
        "turns (mean)": f"{s.turns_mean:.1f}", "wall s (mean / median)": f"{s.wall_mean:.1f} / {s.wall_median:.1f}",
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
        Figure(forest, f"Paired difference of each strategy against `{reference}`: completion (task-clustered "
                       f"interval, dashed line the −{margin * 100:g} pts margin) and token ratio (bootstrap over "
                       "tasks), Holm-adjusted."),
        Table(comparison_frame(comparisons), id="comparison"),
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


def _harness_error_notice(runs: pd.DataFrame) -> list[Block]:
    _, errors = split_harness_errors(runs)
    if errors.empty:
        return []
    names = ", ".join(f"`{r.strategy} {r.task_id}#{r.repeat}`" for r in errors.itertuples())
    return [Notice(f"{len(errors)} runs ended in `harness_error` (a fault of ctxbench, not of the strategy): they "
                   f"are left out of every rate and comparison: {names}.")]


def report_blocks(folder: ResultsFolder, reference: str, plots_dir: Path, margin: float = MARGIN
                  ) -> tuple[list[Block], list[StrategySummary], list[Path], list[PairedComparison]]:
    """Compute everything, draw the plots into `plots_dir`, and lay out the report.

    Returns:
        The blocks, the summaries (for summary.csv), the plot paths and the paired comparisons.
    """
    from ctxbench.reports.plots import (plot_completion, plot_context_fill, plot_failures, plot_outcome_grid,
                                        plot_stability, plot_tokens)

    m, runs, order = folder.manifest, folder.runs, folder.strategies
    summaries = summarize(runs, order)
    counted = [s for s in summaries if s.runs]
    countable, _ = split_harness_errors(runs)
    comparisons = (compare_strategies(runs, reference, order, margin=margin)
                   if reference in order and len(order) > 1 else [])
    fill = turns_df(folder.path)
    plots = [
        plot_completion(counted, plots_dir / "completion.png"),
        plot_stability(repeat_rates(countable), [s.strategy for s in counted], plots_dir / "stability.png"),
        plot_tokens(countable, [s.strategy for s in counted], plots_dir / "tokens.png"),
        plot_failures(failure_frame(summaries, share=True), plots_dir / "failures.png"),
        plot_outcome_grid({s: outcome_grid(runs, s) for s in order}, plots_dir / "outcomes.png"),
    ]
    comparison, forest = _comparison_blocks(folder, reference, comparisons, margin, plots_dir)
    plots += forest
    fill_blocks: list[Block] = [Heading("Context fill")]
    if fill.empty:
        fill_blocks.append(Notice("No transcripts in this folder: the context-fill plot was not drawn."))
    else:
        plots.append(plot_context_fill(fill, order, plots_dir / "context_fill.png"))
        fill_blocks.append(Figure(plots[-1], "Context fill over turns: median and 25–75% band per strategy "
                                             "(at each turn, over the runs still going)."))
    tasks = runs["task_id"].nunique()
    fixed_id = m.fixed_id or "?"
    blocks: list[Block] = [
        *manifest_notices(m),
        *_harness_error_notice(runs),
        Heading(f"ctxbench report — {m.name}", 1),
        Paragraph(f"Experiment `{m.experiment_id}` (name, resolved config and taskset), fixed variables "
                  f"`{fixed_id}`; started {m.created}, harness {m.harness_version}. "
                  f"Model `{m.model_name}` (provider `{m.config.get('model', {}).get('provider', '?')}`); "
                  f"{tasks} tasks × {runs['repeat'].nunique()} repeats × {len(order)} strategies = {len(runs)} runs."),
        Heading("Summary"),
        Table(_summary_table(counted), id="summary"),
        *_pricing_note(m),
        Figure(plots[0], "Completion rate per strategy with Wilson 95% intervals (runs treated as independent; "
                         "the paired comparison below clusters by task)."),
        *comparison,
        *_planning_blocks(folder, reference, margin),
        Heading("Stability"),
        Figure(plots[1], "Completion rate of each repeat, per strategy."),
        Figure(plots[4], "Outcome of every task and repeat, per strategy: mixed rows are unstable tasks."),
        Paragraph("pass@k: chance that at least one of k repeats resolves a task (unbiased estimator, Chen et al. "
                  "2021); pass^k: chance that all k do; both averaged over tasks."),
        Table(_pass_table(counted), id="passk"),
        Heading("Tokens"),
        Figure(plots[2], "Total tokens per run (prompt + completion + strategy)."),
        Heading("Failure reasons"),
        Table(_failure_table(summaries), id="failures") if any(s.runs > s.resolved or s.harness_errors
                                                               for s in summaries)
        else Paragraph("Every run resolved its task."),
        Figure(plots[3], "Failure reasons as a share of each strategy's runs."),
        *fill_blocks,
        Heading("Tasks × strategies"),
        Paragraph("Resolved repeats / runs (harness_error runs left out)."),
        Table(task_table(runs, order).rename_axis("task", axis=0), id="tasks"),
        *_run_index(folder),
    ]
    return blocks, summaries, plots, comparisons


def _run_index(folder: ResultsFolder) -> list[Block]:
    """Every run with a transcript, linked to its page (✓ resolved, ✗ not), tasks × strategies."""
    cells: dict[tuple[str, str], list[str]] = {}
    for r in folder.runs.sort_values("repeat").itertuples():
        if not transcript_path(folder.path, str(r.strategy), str(r.task_id), int(r.repeat)).is_file():
            continue
        href = f"runs/{r.strategy}/{r.task_id}.{r.repeat}.html"
        cells.setdefault((r.task_id, r.strategy), []).append(f"[{'✓' if r.resolved else '✗'}{r.repeat}]({href})")
    if not cells:
        return []
    tasks = list(dict.fromkeys(t for t, _ in sorted(cells)))
    frame = pd.DataFrame([{s: " ".join(cells.get((t, s), [])) or "–" for s in folder.strategies} for t in tasks],
                         index=pd.Index(tasks, name="task"))
    return [Heading("Runs"),
            Paragraph("Each run turn by turn (what the strategy changed, what the model saw and did), one page per "
                      "run: ✓ resolved, ✗ not, then the repeat. In a terminal: `ctxbench show RUN_DIR RUN_ID`."),
            Table(frame, id="runs", inline=True)]


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


def write_report(run_dir: str | Path, reference: str = "baseline", margin: float = MARGIN) -> ReportPaths:
    """Write report.md, report.html (self-contained), summary.csv, comparisons.csv, plots/*.png and
    runs/<strategy>/<task>.<repeat>.html (one self-contained page per run with a transcript) into a
    results folder. The figures come from `runs_df` and `turns_df` (ctxbench.reports.frames).

    Args:
        run_dir: A results folder (manifest.json, runs.jsonl, optional transcripts/).
        reference: Strategy the others are compared with; when absent the report says so.
        margin: Non-inferiority margin in completion rate (0.05 = 5 points).

    Raises:
        InputError: not a results folder, or no runs.
    """
    run_dir = Path(run_dir)
    folder = load_results(run_dir)
    write_run_pages(run_dir, run_records(folder.runs))
    blocks, summaries, plots, comparisons = report_blocks(folder, reference, run_dir / "plots", margin)
    md, page, csv = run_dir / "report.md", run_dir / "report.html", run_dir / "summary.csv"
    md.write_text(to_markdown(blocks, run_dir), encoding="utf-8")
    page.write_text(to_html(blocks, f"ctxbench report — {folder.manifest.name}"), encoding="utf-8")
    _csv(_with_paired_columns(summary_frame(summaries), comparisons), csv)
    paired = _csv(comparison_csv(comparisons), run_dir / "comparisons.csv") if comparisons else None
    return ReportPaths(md, page, csv, plots, paired)
