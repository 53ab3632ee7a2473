"""The report of one results folder: report.md, report.html, summary.csv and plots/*.png."""

from __future__ import annotations

import math
from pathlib import Path
from typing import NamedTuple

import pandas as pd

from ctxbench.reports.compare import comparison_frame, compare_strategies, verdict_line
from ctxbench.reports.document import Block, Bullets, Figure, Heading, Notice, Paragraph, Table, to_html, to_markdown
from ctxbench.reports.loading import Manifest, ResultsFolder, fill_frame, load_results
from ctxbench.reports.plots import plot_completion, plot_context_fill, plot_failures, plot_stability, plot_tokens
from ctxbench.reports.summary import (StrategySummary, failure_frame, repeat_rates, summarize, summary_frame,
                             task_table)

__all__ = ["ReportPaths", "write_report", "report_blocks", "manifest_notices", "SIMULATED_NOTICE"]

SIMULATED_NOTICE = ("Results from the simulated model `{model}` — a stand-in for a model, not a model: they measure "
                    "the strategies against the simulator's attention model, not a real LLM.")


class ReportPaths(NamedTuple):
    """Files written by write_report (a tuple: report.md first)."""

    markdown: Path
    html: Path
    summary_csv: Path
    plots: list[Path]


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
    rows = [{
        "strategy": s.strategy, "runs": s.runs, "resolved": s.resolved,
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


def _comparison_blocks(folder: ResultsFolder, reference: str) -> list[Block]:
    blocks: list[Block] = [Heading(f"Paired comparison with `{reference}`")]
    if reference not in folder.strategies:
        return blocks + [Notice(f"The reference strategy `{reference}` is not in this experiment, so no paired "
                                f"comparison was made; strategies: {', '.join(folder.strategies)}.")]
    comparisons = compare_strategies(folder.runs, reference, folder.strategies)
    if not comparisons:
        return blocks + [Paragraph(f"`{reference}` is the only strategy.")]
    return blocks + [
        Paragraph("Pairs are (task, repeat) runs with the same seed. p: exact McNemar test on the discordant pairs; "
                  "intervals: bootstrap 95% over pairs (seeded); MDD: smallest difference in completion rate "
                  "this design detects with 80% power at α = 0.05."),
        Bullets(tuple(verdict_line(c) for c in comparisons)),
        Table(comparison_frame(comparisons), id="comparison"),
    ]


def report_blocks(folder: ResultsFolder, reference: str, plots_dir: Path) -> tuple[list[Block], list[StrategySummary], list[Path]]:
    """Compute everything, draw the plots into `plots_dir`, and lay out the report.

    Returns:
        The blocks, the summaries (for summary.csv) and the plot paths.
    """
    m, runs, order = folder.manifest, folder.runs, folder.strategies
    summaries = summarize(runs, order)
    fill = fill_frame(folder.path)
    plots = [
        plot_completion(summaries, plots_dir / "completion.png"),
        plot_stability(repeat_rates(runs), order, plots_dir / "stability.png"),
        plot_tokens(runs, order, plots_dir / "tokens.png"),
        plot_failures(failure_frame(summaries, share=True), plots_dir / "failures.png"),
    ]
    fill_blocks: list[Block] = [Heading("Context fill")]
    if fill.empty:
        fill_blocks.append(Notice("No transcripts in this folder: the context-fill plot was not drawn."))
    else:
        plots.append(plot_context_fill(fill, order, plots_dir / "context_fill.png"))
        fill_blocks.append(Figure(plots[-1], "Context fill over turns: median and 25–75% band per strategy "
                                             "(at each turn, over the runs still going)."))
    tasks = runs["task_id"].nunique()
    blocks: list[Block] = [
        *manifest_notices(m),
        Heading(f"ctxbench report — {m.name}", 1),
        Paragraph(f"Experiment `{m.experiment_id}`, started {m.created}, harness {m.harness_version}. "
                  f"Model `{m.model_name}` (provider `{m.config.get('model', {}).get('provider', '?')}`); "
                  f"{tasks} tasks × {runs['repeat'].nunique()} repeats × {len(order)} strategies = {len(runs)} runs."),
        Heading("Summary"),
        Table(_summary_table(summaries), id="summary"),
        *_pricing_note(m),
        Figure(plots[0], "Completion rate per strategy with Wilson 95% intervals."),
        *_comparison_blocks(folder, reference),
        Heading("Stability"),
        Figure(plots[1], "Completion rate of each repeat, per strategy."),
        Paragraph("pass@k: chance that at least one of k repeats resolves a task (unbiased estimator, Chen et al. "
                  "2021); pass^k: chance that all k do; both averaged over tasks."),
        Table(_pass_table(summaries), id="passk"),
        Heading("Tokens"),
        Figure(plots[2], "Total tokens per run (prompt + completion + strategy)."),
        Heading("Failure reasons"),
        Table(_failure_table(summaries), id="failures") if any(s.runs > s.resolved for s in summaries)
        else Paragraph("Every run resolved its task."),
        Figure(plots[3], "Failure reasons as a share of each strategy's runs."),
        *fill_blocks,
        Heading("Tasks × strategies"),
        Paragraph("Resolved repeats / runs."),
        Table(task_table(runs, order).rename_axis("task", axis=0), id="tasks"),
    ]
    return blocks, summaries, plots


def write_report(run_dir: str | Path, reference: str = "baseline") -> ReportPaths:
    """Write report.md, report.html (self-contained), summary.csv and plots/*.png into a results folder.

    Args:
        run_dir: A results folder (manifest.json, runs.jsonl, optional transcripts/).
        reference: Strategy the others are compared with; when absent the report says so.

    Raises:
        InputError: not a results folder, or no runs.
    """
    run_dir = Path(run_dir)
    folder = load_results(run_dir)
    blocks, summaries, plots = report_blocks(folder, reference, run_dir / "plots")
    md, page, csv = run_dir / "report.md", run_dir / "report.html", run_dir / "summary.csv"
    md.write_text(to_markdown(blocks, run_dir), encoding="utf-8")
    page.write_text(to_html(blocks, f"ctxbench report — {folder.manifest.name}"), encoding="utf-8")
    summary_frame(summaries).to_csv(csv, index=False)
    return ReportPaths(md, page, csv, plots)
