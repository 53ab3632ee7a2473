"""Nightly checks: compare the latest run of an experiment with the one before, say what changed,
and keep every run of the experiment in the trend. (Running the experiment is the CLI's job.)"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pandas as pd

from ctxbench.harness.errors import CantTell, Regressed
from ctxbench.harness.config.sequential import ArmDecision, SequentialRecord, read_sequential
from ctxbench.reports.compare import PairedComparison, accounting_lines, compare_folders, verdict_line
from ctxbench.reports.document import Block, Bullets, Figure, Heading, Notice, Paragraph, Table, to_markdown
from ctxbench.reports.fixed import what_differs
from ctxbench.reports.history_folder import History, find_previous_run, latest_run, read_history
from ctxbench.reports.loading import ResultsFolder, load_results
from ctxbench.reports.report import manifest_notices
from ctxbench.reports.stats import bootstrap_ci, wilson_interval
from ctxbench.reports.summary import split_harness_errors

__all__ = ["StrategyCheck", "RegressionCheck", "check_regressions", "History", "read_history",
           "find_previous_run", "latest_run", "trend_frame", "write_trend_report", "NightlyOutcome", "nightly_check",
           "DEFAULT_TOKEN_RATIO", "Status", "strategy_check"]

DEFAULT_TOKEN_RATIO = 1.2

Status = Literal["regressed", "can't tell", "ok"]
"""What nightly says of one strategy, each printed as loudly as the others (REGRESSION, CAN'T TELL, OK)."""


@dataclass(frozen=True)
class StrategyCheck:
    """One strategy of the latest run against the same strategy in the previous run."""

    comparison: PairedComparison
    completion_fell: bool
    """The task-level verdict (Holm across strategies) is `worse`."""
    tokens_rose: bool
    """The interval of the token ratio (sign-flip over tasks) lies entirely above the allowed ratio."""
    cant_tell: bool = False
    """Completion was lower on some task, yet nothing is decided (the verdict is inconclusive or there are
    too few tasks, or the rounds ended undecided): the runs can tell that drop neither from noise nor
    from a regression beyond the margin."""
    tokens_unclear: bool = False
    """The token ratio is above the allowed ratio, yet its interval does not settle it (or there are
    too few tasks for one)."""
    sequential: ArmDecision | None = None
    """How its rounds ended, when the run compared it with the previous run round by round (its
    confidence sequence then decides the completion status)."""
    level: float = 0.0
    """The confidence of that sequence."""

    @property
    def regressed(self) -> bool:
        return self.completion_fell or self.tokens_rose

    @property
    def status(self) -> Status:
        """regressed, else can't tell, else ok."""
        return "regressed" if self.regressed else "can't tell" if self.cant_tell or self.tokens_unclear else "ok"

    def why(self, token_ratio: float) -> str:
        """Why the status, in a few words ("" when ok)."""
        m = self.comparison.completion
        reasons = [w for w, flag in (("completion fell", self.completion_fell),
                                     (f"tokens rose beyond ×{token_ratio:g}", self.tokens_rose)) if flag]
        if not reasons and self.cant_tell and self.sequential is not None:
            reasons = [f"completion lower on {m.tasks_worse} of {self.comparison.tasks} tasks, undecided: its confidence "
                       f"sequence did not settle in {self.sequential.round} rounds, a fall beyond the margin is not "
                       "ruled out"]
        if not reasons and self.cant_tell:
            reasons = [f"completion lower on {m.tasks_worse} of {self.comparison.tasks} tasks, undecided: too few runs "
                       "to tell a regression from noise"]
        if not reasons and self.tokens_unclear:
            reasons = [f"tokens ×{self.comparison.tokens.ratio:.2f} above ×{token_ratio:g} on "
                       f"{self.comparison.tasks} tasks: too few runs to tell a rise from noise"]
        return ", ".join(reasons)


def strategy_check(c: PairedComparison, token_ratio: float, sequential: ArmDecision | None = None,
                   level: float = 0.0) -> StrategyCheck:
    """The nightly status of one comparison, decided here alone: by the task-level test, or by the
    confidence sequence of the run's rounds (`sequential`, at confidence `level`) where it had them."""
    m = c.completion
    undecided = ("inconclusive", "too few tasks")
    tokens_rose = c.tokens.ci[0] > token_ratio
    tokens_unclear = not tokens_rose and c.tokens.ratio > token_ratio
    if sequential is not None:
        return StrategyCheck(c, completion_fell=sequential.verdict == "worse", tokens_rose=tokens_rose,
                             cant_tell=sequential.verdict == "undecided" and m.tasks_worse > 0,
                             tokens_unclear=tokens_unclear, sequential=sequential, level=level)
    return StrategyCheck(c, completion_fell=m.verdict == "worse", tokens_rose=tokens_rose,
                         cant_tell=m.verdict in undecided and m.tasks_worse > 0, tokens_unclear=tokens_unclear)


def _level(confidence: float) -> str:
    return f"{confidence:.1%}".replace(".0%", "%")


_LOUD = {"regressed": "REGRESSION", "can't tell": "CAN'T TELL", "ok": "OK"}


@dataclass(frozen=True)
class RegressionCheck:
    """The verdict of a nightly run: exit code 1 when a strategy regressed, else 4 when one's completion was
    lower on some task or its tokens above the allowed ratio by an amount the runs cannot tell from noise,
    else 0."""

    previous: Path | None
    """The run compared with; None when the history holds no earlier run of the experiment."""
    current: Path
    token_ratio: float
    strategies: list[StrategyCheck]
    differences: tuple[str, ...] = ()
    """What differs from the previous run (fixed variables, strategy params, config keys); when
    non-empty the comparison is not controlled."""

    @property
    def controlled(self) -> bool:
        return not self.differences

    @property
    def regressed(self) -> list[str]:
        """Strategies that regressed."""
        return [s.comparison.strategy for s in self.strategies if s.status == "regressed"]

    @property
    def cant_tell(self) -> list[str]:
        """Strategies that did not regress, but whose completion was lower on some task or whose tokens rose
        past the allowed ratio, by an amount the runs cannot tell from noise."""
        return [s.comparison.strategy for s in self.strategies if s.status == "can't tell"]

    @property
    def exit_code(self) -> int:
        return Regressed.exit_code if self.regressed else CantTell.exit_code if self.cant_tell else 0

    def messages(self) -> list[str]:
        """One line per strategy, its status first (REGRESSION, CAN'T TELL or OK): why, the completion
        and token change, and what differs."""
        out = []
        for s in self.strategies:
            c, m = s.comparison, s.comparison.completion
            low, high = m.ci
            tlow, thigh = c.tokens.ci
            completion = f"completion {m.rate_reference:.1%} -> {m.rate_candidate:.1%} ({m.difference * 100:+.1f} pts" + (
                "" if math.isnan(low) else f" [{low * 100:+.1f}, {high * 100:+.1f}] {_level(m.ci_confidence)}") + ")"
            tokens = f"tokens ×{c.tokens.ratio:.2f}" + (
                "" if math.isnan(tlow) else f" [{tlow:.2f}, {thigh:.2f}] {_level(c.tokens.confidence)}")
            why = s.why(self.token_ratio)
            line = f"{_LOUD[s.status]} {c.strategy}{f' ({why})' if why else ''}: {completion}, {tokens}"
            if s.sequential is not None:
                line += f"; {sequence_phrase(s.sequential, s.level)}"
            relevant = [d for d in self.differences if not d.startswith("strategy ")
                        or d.startswith(f"strategy {c.strategy}:")]
            line += ("; what differs: " + "; ".join(relevant)) if relevant else "; nothing else differs"
            out.append(line)
        return out

    def conclusion(self) -> str:
        """The last line: what regressed, else what cannot be told, else no regression."""
        against = self.previous.name if self.previous is not None else "nothing"
        if self.regressed:
            return f"REGRESSION against {against}: {', '.join(self.regressed)}"
        if self.cant_tell:
            return (f"CAN'T TELL against {against}: {self.undecided()} (more tasks or repeats would tell; "
                    "`ctxbench plan` says how many)")
        return f"no regression against {against}"

    def undecided(self, quote: str = "") -> str:
        """The strategies that can't tell, each with why, e.g. "baseline (tokens ×1.35 above ×1.2 on 5 tasks:
        too few runs to tell a rise from noise)"."""
        return "; ".join(f"{quote}{s.comparison.strategy}{quote} ({s.why(self.token_ratio)})"
                         for s in self.strategies if s.status == "can't tell")


def sequence_phrase(d: ArmDecision, level: float) -> str:
    """e.g. "rounds: non-inferior after round 2 (24 runs, 60 in the fixed design), confidence sequence
    [-4.1, +8.3] pts (95%)"."""
    when = f"after round {d.round}" if d.verdict != "undecided" else f"undecided after {d.round} rounds"
    head = f"{d.verdict} {when}" if d.verdict != "undecided" else when
    return (f"rounds: {head} ({d.runs} runs, {d.fixed_runs} in the fixed design), confidence sequence "
            f"[{d.low * 100:+.1f}, {d.high * 100:+.1f}] pts ({_level(level)})")


def _decisions(previous: ResultsFolder, current: ResultsFolder) -> tuple[dict[str, ArmDecision], float]:
    """The current run's round-by-round decisions against `previous` (none when it ran no rounds
    against it), and their confidence."""
    record: SequentialRecord | None = read_sequential(current.path)
    if record is None or record.against != previous.path.name or not record.finished:
        return {}, 0.0
    return {d.strategy: d for d in record.decisions}, 1 - record.arm_alpha


def check_regressions(previous: ResultsFolder, current: ResultsFolder, token_ratio: float = DEFAULT_TOKEN_RATIO,
                      seed: int = 0) -> RegressionCheck:
    """Compare `current` with `previous`, strategy by strategy, paired on (task, repeat), the task as
    the unit (Holm across strategies).

    A strategy regressed when its completion verdict is `worse` or its tokens rose beyond
    `token_ratio` (the interval of the ratio of total tokens, current / previous, entirely above it);
    "can't tell" when it did not, but its completion was lower on some task and the verdict is
    inconclusive, or its token ratio is above `token_ratio` with an interval that does not settle it.
    Where `current` ran in rounds against `previous` (`nightly --until-decided`), the completion status
    is its confidence sequence's instead: worse, or undecided at the last round with some task lower
    (can't tell). When anything that a run measures differs between the two runs the comparison is still
    made, and the differences are listed: the comparison is then not controlled (running in rounds
    or not is how many runs were made, not what they measured).
    """
    folders = compare_folders(previous, current, force=True, seed=seed, a_label="previous")
    decisions, level = _decisions(previous, current)
    checks = [strategy_check(c, token_ratio, decisions.get(c.strategy), level) for c in folders.comparisons]
    return RegressionCheck(previous.path, current.path, token_ratio, checks,
                           tuple(what_differs(previous.manifest, current.manifest, rounds=False)))


def trend_frame(runs: list[ResultsFolder], latest: ResultsFolder | None = None, seed: int = 0) -> pd.DataFrame:
    """One row per (run, strategy): date, run, strategy, runs, completion_rate, ci_low, ci_high,
    tokens_mean, tokens_low, tokens_high (bootstrap 95% interval of the mean), controlled (same fixed
    variables and strategy params as `latest`). harness_error runs are left out."""
    rows = []
    for folder in runs:
        controlled = latest is None or not what_differs(folder.manifest, latest.manifest, rounds=False)
        counted, _ = split_harness_errors(folder.runs)
        for s in folder.strategies:
            part = counted[counted["strategy"] == s]
            if part.empty:
                continue
            n, ok = len(part), int(part["resolved"].sum())
            low, high = wilson_interval(ok, n)
            tokens = part["total_tokens"].to_numpy(dtype=float)
            t_low, t_high = bootstrap_ci(lambda t: t.mean(axis=1), tokens, seed=seed)
            rows.append({"date": folder.manifest.created, "run": folder.path.name, "strategy": s, "runs": n,
                         "completion_rate": ok / n, "ci_low": low, "ci_high": high,
                         "tokens_mean": float(tokens.mean()), "tokens_low": t_low, "tokens_high": t_high,
                         "controlled": controlled})
    return pd.DataFrame(rows)


def _trend_table(trend: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame({
        "date": trend["date"], "run": trend["run"] + ["" if c else " *" for c in trend["controlled"]],
        "strategy": trend["strategy"], "runs": trend["runs"],
        "completion [95% CI]": [f"{r:.1%} [{lo:.1%}, {hi:.1%}]"
                                for r, lo, hi in zip(trend["completion_rate"], trend["ci_low"], trend["ci_high"])],
        "tokens mean [95% CI]": [f"{m:,.0f} [{lo:,.0f}, {hi:,.0f}]"
                                 for m, lo, hi in zip(trend["tokens_mean"], trend["tokens_low"], trend["tokens_high"])],
    })


def _check_blocks(check: RegressionCheck, current: ResultsFolder) -> list[Block]:
    if check.previous is None:
        return [Paragraph(f"No earlier run of this experiment: `{current.path.name}` is the first; nothing to "
                          "compare.")]
    blocks: list[Block] = []
    if not check.controlled:
        blocks += [Notice(f"**Not a controlled comparison**: the previous run `{check.previous.name}` differs in "
                          "what should stay fixed; any change below may come from these differences."),
                   Bullets(check.differences)]
    whys = [s.why(check.token_ratio) for s in check.strategies]
    lines = [f"**{_LOUD[s.status]}**{f' ({why})' if why else ''} — {verdict_line(s.comparison)}"
             + ("" if s.sequential is None else f"; {sequence_phrase(s.sequential, s.level)}")
             for s, why in zip(check.strategies, whys)]
    rounds = any(s.sequential is not None for s in check.strategies)
    verdict = (f"**Regressed:** {', '.join(f'`{s}`' for s in check.regressed)}." if check.regressed
               else f"**Can't tell:** {check.undecided('`')}." if check.cant_tell else "No strategy regressed.")
    blocks += [Paragraph(f"Latest run `{check.current.name}` against the previous run `{check.previous.name}`, "
                         f"paired on (task, repeat), the task as the unit. "
                         + ("It ran in rounds, each strategy stopped once its anytime-valid confidence sequence "
                            "against the previous run decided it; that sequence decides completion, the "
                            "task-level tests are shown beside it. " if rounds else "") + verdict),
               *[Notice(line) for line in accounting_lines([s.comparison for s in check.strategies])],
               Bullets(tuple(lines))]
    return blocks


def write_trend_report(history_dir: Path, current: ResultsFolder, history: History,
                       check: RegressionCheck) -> tuple[Path, Path]:
    """Write `trend.md` and `plots/trend.png` into the history folder; returns both paths."""
    from ctxbench.reports.plots import plot_trend

    trend = trend_frame(history.runs, current)
    order = list(dict.fromkeys(trend["strategy"]))
    plot = plot_trend(trend, order, history_dir / "plots" / "trend.png")
    changed = [f for f in history.runs if what_differs(f.manifest, current.manifest, rounds=False)]
    blocks: list[Block] = [
        *manifest_notices(current.manifest),
        Heading(f"ctxbench nightly trend — {current.manifest.name}", 1),
        Paragraph(f"{len(history.runs)} runs of this experiment; latest `{current.path.name}` (experiment "
                  f"`{current.manifest.experiment_id}`, fixed variables `{current.manifest.fixed_id or '?'}`)."
                  + (f" Runs marked * ({len(changed)}) differ from it in what should stay fixed." if changed else "")),
        Heading("Regression check"),
        *_check_blocks(check, current),
        Heading("Trend"),
        Figure(plot, "Completion rate and mean tokens per strategy over nightly runs, with 95% bands "
                     "(* differs from the latest run)."),
        Table(_trend_table(trend), id="trend"),
    ]
    if changed:
        blocks += [Heading("What differs from the latest run")]
        for f in changed:
            blocks += [Paragraph(f"`{f.path.name}`:"),
                       Bullets(tuple(what_differs(f.manifest, current.manifest, rounds=False)))]
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
    """After a run landed in `history_dir`: compare it with the previous run of the experiment, write the trend.

    Args:
        history_dir: Folder of nightly runs, one sub-folder each.
        run_dir: The new run (usually inside history_dir).
        token_ratio: Allowed rise in mean tokens before it counts as a regression.
    """
    history_dir = Path(history_dir)
    current = load_results(run_dir)
    history = read_history(history_dir, current)
    previous = find_previous_run(history, current)
    check = (check_regressions(previous, current, token_ratio) if previous is not None
             else RegressionCheck(None, current.path, token_ratio, []))
    md, png = write_trend_report(history_dir, current, history, check)
    return NightlyOutcome(current.path, check, md, png)
