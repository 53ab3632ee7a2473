"""Report plots: each function draws one PNG (matplotlib, Agg canvas, no pyplot state) and returns its path."""

from __future__ import annotations

from pathlib import Path

import matplotlib.dates as mdates
import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from ctxbench.reports.summary import StrategySummary

__all__ = ["plot_completion", "plot_stability", "plot_tokens", "plot_failures", "plot_context_fill", "plot_trend"]

_DPI = 110


def _figure(width: float = 7.0, height: float = 4.0, rows: int = 1) -> tuple[Figure, list]:
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(rows, 1, squeeze=False)[:, 0]
    return fig, list(axes)


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=_DPI)
    return path


def plot_completion(summaries: list[StrategySummary], path: Path) -> Path:
    """Completion rate per strategy with its Wilson 95% interval."""
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
    ax.set_title("Completion rate (Wilson 95% interval)")
    return _save(fig, path)


def plot_stability(repeat_rates: pd.DataFrame, order: list[str], path: Path) -> Path:
    """Per-repeat completion rate per strategy: a box per strategy with each repeat as a point."""
    fig, (ax,) = _figure()
    data = [repeat_rates.loc[repeat_rates["strategy"] == s, "completion_rate"].to_numpy() for s in order]
    ax.boxplot(data, positions=range(len(order)), widths=0.5, showfliers=False)
    rng = np.random.default_rng(0)
    for i, values in enumerate(data):
        ax.scatter(i + rng.uniform(-0.12, 0.12, len(values)), values, s=18, color="#e45756", zorder=3)
    ax.set_xticks(range(len(order)), order, rotation=20, ha="right")
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("completion rate of one repeat")
    ax.set_title("Stability: completion rate per repeat")
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
        q = per_turn.quantile([0.25, 0.5, 0.75]).unstack()
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
    for i, s in enumerate(order):
        t = trend[trend["strategy"] == s].sort_values("date")
        dates = pd.to_datetime(t["date"])
        top.plot(dates, t["completion_rate"], marker="o", color=f"C{i}", label=s)
        top.fill_between(dates, t["ci_low"], t["ci_high"], color=f"C{i}", alpha=0.15)
        bottom.plot(dates, t["tokens_mean"], marker="o", color=f"C{i}", label=s)
        bottom.fill_between(dates, t["tokens_low"], t["tokens_high"], color=f"C{i}", alpha=0.15)
    top.set_ylim(-0.05, 1.05)
    top.set_ylabel("completion rate")
    top.set_title("Completion rate (Wilson 95% band)")
    top.legend(fontsize=8)
    bottom.set_ylabel("mean tokens per run")
    bottom.set_title("Tokens (bootstrap 95% band)")
    for ax in (top, bottom):
        locator = mdates.AutoDateLocator()
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    return _save(fig, path)
