"""Report plots: each function draws one PNG (matplotlib, Agg canvas, no pyplot state) and returns its path."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ctxbench.harness.paths import write_atomically
from ctxbench.reports.metrics import PairedComparison, Ratio
from ctxbench.reports.summary import StrategySummary
from ctxbench.reports.verdict_table import VERDICT_COLOURS

__all__ = ["plot_completion", "plot_stability", "plot_tokens", "plot_failures", "plot_context_fill", "plot_trend",
           "plot_forest", "plot_outcome_grid"]

_DPI = 110


def _figure(width: float = 7.0, height: float = 4.0, rows: int = 1) -> tuple[Figure, list]:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, squeeze=False)[:, 0]
    return fig, list(axes)


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    png = io.BytesIO()
    fig.savefig(png, dpi=_DPI, format="png")
    return write_atomically(path, png.getvalue())


def plot_completion(summaries: list[StrategySummary], path: Path) -> Path:
    """Completion rate per strategy with its 95% interval clustered by task."""
    fig, (ax,) = _figure()
    x = np.arange(len(summaries))
    rates = np.array([s.completion_rate for s in summaries])
    low = np.array([s.ci_low for s in summaries])
    high = np.array([s.ci_high for s in summaries])
    err = np.clip(np.array([rates - low, high - rates]), 0.0, None)
    ax.bar(x, rates, color="#4c78a8", alpha=0.8)
    ax.errorbar(x, rates, yerr=err, fmt="none", ecolor="black", capsize=5)
    ax.set_xticks(x, [s.strategy for s in summaries], rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("completion rate")
    ax.set_title("Completion rate (95% interval, clustered by task)")
    return _save(fig, path)


def plot_stability(repeat_rates: pd.DataFrame, order: list[str], path: Path) -> Path:
    """Per-repeat completion rate per strategy: every repeat as a labelled point, its range as a line
    and the mean as a tick (a box over 3-10 points would hide them)."""
    fig, (ax,) = _figure()
    for i, s in enumerate(order):
        part = repeat_rates[repeat_rates["strategy"] == s].sort_values("repeat")
        values = part["completion_rate"].to_numpy(dtype=float)
        if values.size == 0:
            continue
        offsets = np.linspace(-0.25, 0.25, values.size) if values.size > 1 else np.zeros(1)
        ax.vlines(i, values.min(), values.max(), color="#999999", linewidth=6, alpha=0.4)
        ax.hlines(values.mean(), i - 0.3, i + 0.3, color="black", linewidth=1.5)
        ax.scatter(i + offsets, values, s=22, color="#e45756", zorder=3)
        if values.size <= 10:
            for x, y, r in zip(i + offsets, values, part["repeat"]):
                ax.annotate(str(r), (x, y), textcoords="offset points", xytext=(0, 5), ha="center", fontsize=6)
    ax.set_xticks(range(len(order)), order, rotation=20, ha="right")
    ax.set_ylim(-0.05, 1.1)
    ax.set_ylabel("completion rate of one repeat")
    ax.set_title("Stability: each repeat (numbered), its range (grey) and mean (black)")
    return _save(fig, path)


def _ratio_markers(ax: Any, y: float, figure: Ratio, marker: str, offset: float) -> None:
    colour = VERDICT_COLOURS.get(figure.verdict, "#7f7f7f")
    low, high = figure.ci
    if not np.isnan(low):
        ax.hlines(y + offset, low, high, color=colour, linewidth=2)
    if not np.isnan(figure.ratio) and figure.ratio > 0:
        ax.plot(figure.ratio, y + offset, marker, color=colour)
        ax.annotate(f"{figure.metric} {figure.verdict}", (figure.ratio, y + offset), textcoords="offset points",
                    xytext=(0, 5), ha="center", fontsize=7, color=colour)


def plot_forest(comparisons: list[PairedComparison], path: Path) -> Path:
    """Forest plot: each candidate's paired difference in completion (the interval its verdict rests on,
    margin drawn) and its token and cost ratios of totals (sign-flip intervals over tasks, log scale),
    each marker coloured and labelled by its verdict (colours: `VERDICT_COLOURS`)."""
    height = 1.8 + 0.6 * max(1, len(comparisons))
    fig = Figure(figsize=(9.0, height), layout="constrained")
    FigureCanvasAgg(fig)
    left, right = fig.subplots(1, 2, sharey=True)
    y = np.arange(len(comparisons))[::-1]
    margin = comparisons[0].completion.margin if comparisons else 0.05
    for yi, c in zip(y, comparisons):
        low, high = c.completion.ci
        colour = VERDICT_COLOURS.get(c.completion.verdict, "#7f7f7f")
        if not np.isnan(low):
            left.hlines(yi, low * 100, high * 100, color=colour, linewidth=2)
        left.plot(c.completion.difference * 100, yi, "o", color=colour)
        left.annotate(c.completion.verdict, (c.completion.difference * 100, yi), textcoords="offset points",
                      xytext=(0, 5), ha="center", fontsize=7, color=colour)
        _ratio_markers(right, yi, c.tokens, "s", 0.0 if c.cost is None else 0.15)
        if c.cost is not None:
            _ratio_markers(right, yi, c.cost, "D", -0.15)
    left.axvline(0, color="black", linewidth=0.8)
    left.axvline(-margin * 100, color="#d62728", linestyle="--", linewidth=0.8, label=f"margin −{margin * 100:g} pts")
    left.set_yticks(y, [f"{c.strategy} vs {c.reference}" for c in comparisons])
    left.set_ylim(-0.6, len(comparisons) - 0.4)
    left.set_xlabel("completion difference (pts), the interval of its verdict")
    left.legend(fontsize=7, loc="lower right")
    right.axvline(1, color="black", linewidth=0.8)
    right.set_xscale("log")
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    right.xaxis.set_major_locator(FixedLocator([0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 4, 10]))
    right.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"×{v:g}"))
    right.xaxis.set_minor_formatter(NullFormatter())
    right.set_xlabel("total token (■) and cost (◆) ratio, log scale, task-level CI")
    fig.suptitle("Paired differences against the reference, coloured by verdict (Holm-adjusted intervals)")
    return _save(fig, path)


def plot_outcome_grid(grids: dict[str, pd.DataFrame], path: Path) -> Path:
    """Task × repeat outcomes, one panel per strategy: green resolved, red not, grey harness error or
    missing. Rows that mix colours are where the instability is."""
    from matplotlib.colors import ListedColormap

    tasks = sorted({t for g in grids.values() for t in g.index})
    width = 1.2 + 0.35 * sum(max(1, g.shape[1]) for g in grids.values()) + 0.6 * len(grids)
    fig = Figure(figsize=(max(5.0, min(width, 18.0)), 1.5 + 0.22 * len(tasks)), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, max(1, len(grids)), sharey=True, squeeze=False)[0]
    cmap = ListedColormap(["#e45756", "#54a24b"]).with_extremes(bad="#cccccc")
    for ax, (strategy, grid) in zip(axes, grids.items()):
        data = grid.reindex(tasks).to_numpy(dtype=float)
        ax.imshow(np.ma.masked_invalid(data), cmap=cmap, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
        ax.set_xticks(range(grid.shape[1]), [str(c) for c in grid.columns], fontsize=7)
        ax.set_title(strategy, fontsize=8)
        ax.set_xlabel("repeat", fontsize=7)
    axes[0].set_yticks(range(len(tasks)), tasks, fontsize=6)
    fig.suptitle("Outcome per task and repeat (green resolved, red not, grey excluded/missing)", fontsize=9)
    return _save(fig, path)


def plot_tokens(runs: pd.DataFrame, order: list[str], path: Path) -> Path:
    """Total tokens per run, per strategy (box plot, mean marked)."""
    fig, (ax,) = _figure()
    data = [runs.loc[runs["strategy"] == s, "total_tokens"].to_numpy(dtype=float) for s in order]
    ax.boxplot(data, positions=range(len(order)), widths=0.5, showmeans=True)
    ax.set_xticks(range(len(order)), order, rotation=20, ha="right")
    ax.set_ylabel("total tokens per run")
    ax.set_title("Tokens per run (triangle: mean)")
    return _save(fig, path)


def plot_failures(shares: pd.DataFrame, path: Path) -> Path:
    """Failure reasons as stacked bars: share of each strategy's runs (rows reasons, columns strategies)."""
    fig, (ax,) = _figure()
    x = np.arange(len(shares.columns))
    bottom = np.zeros(len(x))
    colors = [f"C{i}" for i in range(len(shares.index))]
    for reason, color in zip(shares.index, colors):
        values = shares.loc[reason].to_numpy(dtype=float)
        ax.bar(x, values, bottom=bottom, label=reason, color=color)
        bottom += values
    ax.set_xticks(x, list(shares.columns), rotation=20, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share of runs")
    ax.set_title("Failure reasons (share of runs)" if len(shares.index) else "No failed runs")
    if len(shares.index):
        ax.legend(fontsize=8, loc="upper right")
    return _save(fig, path)


def plot_context_fill(fill: pd.DataFrame, order: list[str], path: Path) -> Path:
    """Context fill (tokens / window) over turns: median and 25–75% band per strategy, over runs still going."""
    fig, (ax,) = _figure()
    for i, s in enumerate(order):
        per_turn = fill[fill["strategy"] == s].groupby("turn")["fill"]
        if per_turn.ngroups == 0:
            continue
        q = per_turn.quantile(np.array([0.25, 0.5, 0.75])).unstack()
        ax.plot(q.index, q[0.5], color=f"C{i}", label=s)
        ax.fill_between(q.index, q[0.25], q[0.75], color=f"C{i}", alpha=0.2)
    ax.set_xlabel("turn")
    ax.set_ylabel("context fill (tokens / window)")
    ax.set_title("Context fill over turns (median, 25–75%)")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_trend(trend: pd.DataFrame, order: list[str], path: Path) -> Path:
    """Nightly trend: completion rate (Wilson band) and mean tokens (bootstrap band) per strategy over dates.

    Args:
        trend: Columns date, strategy, completion_rate, ci_low, ci_high, tokens_mean, tokens_low, tokens_high.
        order: Strategies to draw.
        path: Output PNG.
    """
    fig, (top, bottom) = _figure(8.0, 6.5, rows=2)
    runs = trend.drop_duplicates("run").sort_values(["date", "run"])
    position = {r: i for i, r in enumerate(runs["run"])}
    labels = [pd.to_datetime(d).strftime("%m-%d %H:%M") + ("*" if not c else "")
              for d, c in zip(runs["date"], runs.get("controlled", pd.Series(True, index=runs.index)))]
    for i, s in enumerate(order):
        t = trend[trend["strategy"] == s].sort_values(["date", "run"])
        x = [position[r] for r in t["run"]]
        top.plot(x, t["completion_rate"], marker="o", color=f"C{i}", label=s)
        top.fill_between(x, t["ci_low"], t["ci_high"], color=f"C{i}", alpha=0.15)
        bottom.plot(x, t["tokens_mean"], marker="o", color=f"C{i}", label=s)
        bottom.fill_between(x, t["tokens_low"], t["tokens_high"], color=f"C{i}", alpha=0.15)
    top.set_ylim(-0.05, 1.05)
    top.set_ylabel("completion rate")
    top.set_title("Completion rate (Wilson 95% band)")
    top.legend(fontsize=8)
    bottom.set_ylabel("mean tokens per run")
    bottom.set_title("Tokens (bootstrap 95% band); * = fixed variables differ from the latest run")
    for ax in (top, bottom):
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right", fontsize=7)
    return _save(fig, path)
