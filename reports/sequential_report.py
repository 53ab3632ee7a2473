"""The report's section on a sequential experiment (sequential.json): each candidate's verdict, the
runs it took and the runs of the fixed design."""

from __future__ import annotations

import pandas as pd

from ctxbench.harness.config.sequential import SEQUENTIAL_FILE, ArmDecision, SequentialRecord
from ctxbench.reports.document import Block, Bullets, Heading, Notice, Paragraph, Table

__all__ = ["SEQUENTIAL_FILE", "sequential_blocks", "arm_statement"]


def _pts(x: float) -> str:
    return f"{x * 100:+.1f}"


def _level(record: SequentialRecord) -> str:
    return f"{1 - record.arm_alpha:.1%}".replace(".0%", "%")


def arm_statement(d: ArmDecision, record: SequentialRecord) -> str:
    """e.g. "`trimmer` vs `baseline`: **worse** after round 2: 48 runs of its own against 120 in the
    fixed design (60% fewer); confidence sequence [−40.1, −3.2] pts (97.5%)"."""
    when = f"after round {d.round}" if d.verdict != "undecided" else f"after {d.round} rounds (the maximum)"
    saved = 1 - d.runs / d.fixed_runs if d.fixed_runs else 0.0
    fewer = f"{saved:.0%} fewer" if saved > 0 else "as many"
    versus = (f"`{d.strategy}` vs itself in `{record.against}`" if record.against is not None
              else f"`{d.strategy}` vs `{record.reference}`")
    paired = "paired with as many of the previous run's" if record.against is not None else \
        "and as many of the reference's"
    return (f"{versus}: **{d.verdict}** {when}: {d.runs} runs of its own ({paired}) against {d.fixed_runs} in the "
            f"fixed design ({fewer}); confidence sequence [{_pts(d.low)}, {_pts(d.high)}] pts ({_level(record)})")


def _goal(record: SequentialRecord) -> str:
    if record.goal == "superiority":
        return (f"goal superiority: a candidate stops when it is better (lower bound > 0), worse (upper < 0) or "
                f"futile (upper < +{record.min_effect * 100:g} pts, the smallest gain sought)")
    return (f"goal non-inferiority: a candidate stops when it is non-inferior (lower bound > −{record.margin * 100:g} "
            "pts), better (lower > 0) or worse (upper < 0)")


def _rounds_table(record: SequentialRecord) -> pd.DataFrame:
    rows = [{"round": rnd.round, "runs so far": rnd.runs, "strategy": look.strategy, "pairs": look.pairs,
             "Δ so far (pts)": "n/a" if look.estimate is None else _pts(look.estimate),
             "confidence sequence (pts)": f"[{_pts(look.low)}, {_pts(look.high)}]", "verdict": look.verdict}
            for rnd in record.rounds for look in rnd.arms]
    return pd.DataFrame(rows)


def sequential_blocks(record: SequentialRecord | None) -> list[Block]:
    """The section; nothing for a fixed-design experiment."""
    if record is None:
        return []
    total = record.rounds[-1].runs if record.rounds else 0
    against = (f"itself in the previous nightly run `{record.against}` (the same task and repeat, so the same "
               "seeds)" if record.against is not None else f"`{record.reference}`")
    blocks: list[Block] = [
        Heading("Sequential experiment"),
        Paragraph(f"The arms ran in rounds (every task once more per round, on the same seeds), and after each round "
                  f"each candidate's anytime-valid confidence sequence for its completion difference against "
                  f"{against} was updated ({_goal(record)}). Each sequence has confidence "
                  f"{_level(record)} (α = {record.alpha:g} over the candidates, Bonferroni), and holds it at every "
                  f"look, whenever the experiment stops; the estimand is the mean difference over these "
                  f"{record.tasks} tasks. {len(record.rounds)} rounds, {total} runs in all; the fixed design of "
                  f"{record.tasks} tasks × {record.max_repeats} repeats takes {record.tasks * record.max_repeats} "
                  "runs per arm."),
    ]
    if record.finished:
        blocks.append(Bullets(tuple(arm_statement(d, record) for d in record.decisions)))
    else:
        blocks.append(Notice("**Sequential experiment not finished**: it stopped after round "
                             f"{len(record.rounds)} with candidates undecided (`ctxbench run … --resume` continues it "
                             "with the rounds recorded)."))
    blocks += [
        Notice("The fixed-design tests elsewhere in this report are computed on the runs recorded, as if their number "
               "had been fixed in advance: after stopping early their error rates do not hold. The verdicts of this "
               "section do."),
        Table(_rounds_table(record), id="sequential-rounds"),
    ]
    return blocks
