"""Nightly runs: find the previous comparable run, check for regressions, and write the trend report."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from ctxbench.harness.errors import InputError
from ctxbench.reports.compare import ALPHA, PairedComparison, compare_folders, verdict_line
from ctxbench.reports.document import Block, Bullets, Figure, Heading, Paragraph, Table, to_markdown
from ctxbench.reports.loading import ResultsFolder, load_results
from ctxbench.reports.plots import plot_trend
from ctxbench.reports.report import manifest_notices, write_report
from ctxbench.reports.stats import bootstrap_ci, wilson_interval

__all__ = ["StrategyCheck", "RegressionCheck", "check_regressions", "History", "read_history",
           "find_previous_run", "trend_frame", "write_trend_report", "NightlyOutcome", "nightly_check",
           "run_nightly", "nightly_run_dir", "DEFAULT_TOKEN_RATIO"]

DEFAULT_TOKEN_RATIO = 1.2


@dataclass(frozen=True)
class StrategyCheck:
    """One strategy of the latest run against the same strategy in the previous run."""

    comparison: PairedComparison
    completion_fell: bool
    """McNemar p < ALPHA and a lower completion rate."""
    tokens_rose: bool
    """The bootstrap 95% interval of the token ratio lies entirely above the allowed ratio."""

    @property
    def regressed(self) -> bool:
        return self.completion_fell or self.tokens_rose


@dataclass(frozen=True)
class RegressionCheck:
    """The verdict of a nightly run; exit code 1 when any strategy regressed."""

    previous: Path | None
    """The run compared with; None when the history holds no earlier comparable run."""
    current: Path
    token_ratio: float
    strategies: list[StrategyCheck]

    @property
    def regressed(self) -> list[str]:
        """Strategies that regressed."""
        return [s.comparison.strategy for s in self.strategies if s.regressed]

    @property
    def exit_code(self) -> int:
        return 1 if self.regressed else 0


def check_regressions(previous: ResultsFolder, current: ResultsFolder, token_ratio: float = DEFAULT_TOKEN_RATIO,
                      seed: int = 0) -> RegressionCheck:
    """Compare `current` with `previous`, strategy by strategy, paired on (task, repeat).

    A strategy regressed when its completion rate fell significantly (exact McNemar p < 0.05 and a
    lower rate) or its tokens rose beyond `token_ratio` (bootstrap 95% interval of
    mean-tokens(current) / mean-tokens(previous) entirely above `token_ratio`).

    Raises:
        FixedVariablesDiffer: the two runs' fixed variables differ.
    """
    folders = compare_folders(previous, current, force=False, seed=seed, a_label="previous")
    checks = [StrategyCheck(c, c.p_value < ALPHA and c.difference < 0, c.token_ratio_ci[0] > token_ratio)
              for c in folders.comparisons]
    return RegressionCheck(previous.path, current.path, token_ratio, checks)


@dataclass(frozen=True)
class History:
    """The runs of a history folder comparable with one run (same fixed variables), oldest first."""

    runs: list[ResultsFolder]
    skipped: list[str]
    """Sub-folders left out, each with the reason."""


def _order_key(folder: ResultsFolder) -> tuple[str, str]:
    return folder.manifest.created, folder.path.name


def read_history(history: Path, current: ResultsFolder) -> History:
    """Every run folder in `history` with the same fixed variables as `current` (current included)."""
    runs, skipped = [], []
    for sub in sorted(p for p in Path(history).iterdir() if p.is_dir() and (p / "manifest.json").exists()):
        if sub.resolve() == current.path.resolve():
            runs.append(current)
            continue
        try:
            folder = load_results(sub)
        except InputError as exc:
            skipped.append(f"`{sub.name}`: {exc}")
            continue
        if folder.manifest.fixed != current.manifest.fixed:
            differ = sorted(k for k in {*folder.manifest.fixed, *current.manifest.fixed}
                            if folder.manifest.fixed.get(k) != current.manifest.fixed.get(k))
            skipped.append(f"`{sub.name}`: different fixed variables ({', '.join(differ)})")
            continue
        runs.append(folder)
    return History(sorted(runs, key=_order_key), skipped)


def find_previous_run(history: History, current: ResultsFolder) -> ResultsFolder | None:
    """The latest run of the history that started before `current`."""
    earlier = [f for f in history.runs if _order_key(f) < _order_key(current)]
    return earlier[-1] if earlier else None


def trend_frame(runs: list[ResultsFolder], seed: int = 0) -> pd.DataFrame:
    """One row per (run, strategy): date, run, strategy, runs, completion_rate, ci_low, ci_high,
    tokens_mean, tokens_low, tokens_high (bootstrap 95% interval of the mean)."""
    rows = []
    for folder in runs:
        for s in folder.strategies:
            part = folder.runs[folder.runs["strategy"] == s]
            n, ok = len(part), int(part["resolved"].sum())
            low, high = wilson_interval(ok, n)
            tokens = part["total_tokens"].to_numpy(dtype=float)
            t_low, t_high = bootstrap_ci(lambda t: t.mean(axis=1), tokens, seed=seed)
            rows.append({"date": folder.manifest.created, "run": folder.path.name, "strategy": s, "runs": n,
                         "completion_rate": ok / n, "ci_low": low, "ci_high": high,
                         "tokens_mean": float(tokens.mean()), "tokens_low": t_low, "tokens_high": t_high})
    return pd.DataFrame(rows)


def _trend_table(trend: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "date": trend["date"], "run": trend["run"], "strategy": trend["strategy"], "runs": trend["runs"],
        "completion [95% CI]": [f"{r:.1%} [{lo:.1%}, {hi:.1%}]"
                                for r, lo, hi in zip(trend["completion_rate"], trend["ci_low"], trend["ci_high"])],
        "tokens mean [95% CI]": [f"{m:,.0f} [{lo:,.0f}, {hi:,.0f}]"
                                 for m, lo, hi in zip(trend["tokens_mean"], trend["tokens_low"], trend["tokens_high"])],
    })


def _check_blocks(check: RegressionCheck, current: ResultsFolder) -> list[Block]:
    if check.previous is None:
        return [Paragraph(f"No earlier run with the same fixed variables: `{current.path.name}` is the first; "
                          "nothing to compare.")]
    lines = []
    for s in check.strategies:
        why = [w for w, flag in (("completion fell", s.completion_fell),
                                 (f"tokens rose beyond ×{check.token_ratio:g}", s.tokens_rose)) if flag]
        lines.append(("**REGRESSION** (" + ", ".join(why) + ") " if why else "ok — ") + verdict_line(s.comparison))
    verdict = (f"**Regressed:** {', '.join(f'`{s}`' for s in check.regressed)}." if check.regressed
               else "No strategy regressed.")
    return [Paragraph(f"Latest run `{check.current.name}` against the previous comparable run "
                      f"`{check.previous.name}`, paired on (task, repeat). {verdict}"),
            Bullets(tuple(lines))]


def write_trend_report(history_dir: Path, current: ResultsFolder, history: History,
                       check: RegressionCheck) -> tuple[Path, Path]:
    """Write `trend.md` and `plots/trend.png` into the history folder; returns both paths."""
    trend = trend_frame(history.runs)
    order = list(dict.fromkeys(trend["strategy"]))
    plot = plot_trend(trend, order, history_dir / "plots" / "trend.png")
    blocks: list[Block] = [
        *manifest_notices(current.manifest),
        Heading(f"ctxbench nightly trend — {current.manifest.name}", 1),
        Paragraph(f"{len(history.runs)} runs with the same fixed variables as `{current.path.name}` "
                  f"(experiment `{current.manifest.experiment_id}`)."),
        Heading("Regression check"),
        *_check_blocks(check, current),
        Heading("Trend"),
        Figure(plot, "Completion rate and mean tokens per strategy over nightly runs, with 95% bands."),
        Table(_trend_table(trend), id="trend"),
    ]
    if history.skipped:
        blocks += [Heading("Left out of the trend"), Bullets(tuple(history.skipped))]
    md = history_dir / "trend.md"
    md.write_text(to_markdown(blocks, history_dir), encoding="utf-8")
    return md, plot


@dataclass(frozen=True)
class NightlyOutcome:
    run_dir: Path
    check: RegressionCheck
    trend_md: Path
    trend_png: Path

    @property
    def exit_code(self) -> int:
        return self.check.exit_code


def nightly_check(history_dir: str | Path, run_dir: str | Path, token_ratio: float = DEFAULT_TOKEN_RATIO) -> NightlyOutcome:
    """After a run landed in `history_dir`: compare it with the previous comparable run, write the trend.

    Args:
        history_dir: Folder of nightly runs, one sub-folder each.
        run_dir: The new run (usually inside history_dir).
        token_ratio: Allowed rise in mean tokens before it counts as a regression.
    """
    history_dir = Path(history_dir)
    current = load_results(run_dir)
    history = read_history(history_dir, current)
    if all(f.path.resolve() != current.path.resolve() for f in history.runs):
        history = History(sorted([*history.runs, current], key=_order_key), history.skipped)
    previous = find_previous_run(history, current)
    check = (check_regressions(previous, current, token_ratio) if previous is not None
             else RegressionCheck(None, current.path, token_ratio, []))
    md, png = write_trend_report(history_dir, current, history, check)
    return NightlyOutcome(current.path, check, md, png)


def nightly_run_dir(history_dir: Path, now: datetime | None = None) -> Path:
    """`<history>/<UTC date-time>` for a new nightly run, e.g. 2025-01-31T020000Z."""
    now = now or datetime.now(timezone.utc)
    return Path(history_dir) / now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H%M%SZ")


def run_nightly(experiment: str | Path, history_dir: str | Path, token_ratio: float = DEFAULT_TOKEN_RATIO,
                overrides: list[str] | None = None, strategies: list[str] | None = None) -> NightlyOutcome:
    """Run an experiment into `<history>/<UTC date-time>/`, write its report, then `nightly_check`.

    Raises:
        InputError: invalid experiment file, or the run folder already exists.
        ExperimentAborted: a fatal provider error stopped the experiment.
    """
    from ctxbench.harness.config import load_config, resolve_experiment_path
    from ctxbench.harness.runner import prepare, run_experiment

    experiment, history_dir = resolve_experiment_path(experiment), Path(history_dir)
    config = load_config(experiment, overrides, strategies)
    run_dir = nightly_run_dir(history_dir)
    ctx = prepare(config, experiment.resolve().parent, run_dir)
    history_dir.mkdir(parents=True, exist_ok=True)
    run_experiment(ctx)
    write_report(run_dir)
    return nightly_check(history_dir, run_dir, token_ratio)
