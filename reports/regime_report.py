"""The report's section on cost under pricing regimes, and its word for the verdict table."""

from __future__ import annotations

import math

import pandas as pd

from ctxbench.harness.errors import InputError
from ctxbench.harness.records import Manifest
from ctxbench.reports.document import Block, Bullets, Heading, Notice, Paragraph, Table
from ctxbench.reports.loading import ResultsFolder
from ctxbench.reports.regimes import (REGIMES, RegimeVerdicts, price_sheets, regime_costs, regime_verdicts,
                                      verdict_sentence)
from ctxbench.reports.verdict_table import VERDICT_COLOURS

__all__ = ["regime_section", "holds_word", "check_price_model"]


def check_price_model(manifest: Manifest, price_as: str | None) -> None:
    """Raises InputError when `price_as` names a model the price database does not have."""
    if price_as and price_sheets(manifest, price_as) is None:
        raise InputError(f"--price-as: {price_as!r} is not in the genai-prices database (or genai-prices is not "
                         "installed)")


def holds_word(v: RegimeVerdicts, verdict: str | None) -> str:
    """The verdict table's cell: `holds` when every regime gives `verdict` (the table's cost verdict;
    None: the one with the cache as observed), else which regimes give another and what."""
    if not v.verdicts():
        return "–"
    flips = v.flips(verdict)
    return "holds" if not flips else "flips: " + ", ".join(f"{r} ({w})" for r, w in flips.items())


def _means(folder: ResultsFolder, costs: pd.DataFrame) -> pd.DataFrame:
    strategy = folder.runs.set_index("run_id")["strategy"]
    means = costs.groupby(strategy.reindex(costs.index)).mean().reindex(folder.strategies)
    return means.map(lambda x: "–" if math.isnan(x) else f"${x:,.4f}").rename_axis("mean $ per run", axis=0)


def _verdict_table(verdicts: list[RegimeVerdicts], regimes: list[str]) -> pd.DataFrame:
    rows = []
    for v in verdicts:
        row: dict[str, str] = {"strategy": v.strategy}
        for r in regimes:
            c = v.by_regime[r].cost
            if c is None:
                row[r], row[f"{r} ratio"] = "–", "–"
                continue
            low, high = c.ci
            row[r] = c.verdict
            row[f"{r} ratio"] = f"×{c.ratio:.2f}" + ("" if math.isnan(low) else f" [{low:.2f}, {high:.2f}]")
        rows.append(row)
    return pd.DataFrame(rows)


def regime_section(folder: ResultsFolder, turns: pd.DataFrame, reference: str, margin: float,
                   price_as: str | None) -> tuple[list[Block], list[RegimeVerdicts]]:
    """The section's blocks and the verdicts under each regime (empty when nothing could be priced).

    Raises:
        InputError: `price_as` names a model the price database does not have.
    """
    check_price_model(folder.manifest, price_as)
    sheets = price_sheets(folder.manifest, price_as)
    head: list[Block] = [Heading("Cost under pricing regimes")]
    if sheets is None:
        return head + [Paragraph("No prices for this model: `ctxbench report --price-as MODEL` re-prices the runs "
                                 "as a model of the genai-prices database.")], []
    missing = set(folder.runs["run_id"]) - set(turns["run_id"])
    if missing:
        return head + [Notice(f"{len(missing)} runs have no transcript: the runs cannot be re-priced call by call.")], []
    costs = regime_costs(turns, sheets)
    regimes: list[str] = [r for r in REGIMES if r in costs.columns]
    verdicts = (regime_verdicts(folder.runs, costs, reference, folder.strategies, margin)
                if reference in folder.strategies and len(folder.strategies) > 1 else [])
    interactive, batch = sheets
    unrecorded = bool(turns["gap_s"].isna().sum() > turns["run_id"].nunique())
    blocks = head + [
        Paragraph(f"Every model call re-priced at {interactive.source}"
                  + (f" (batch: {batch.source})" if batch else "; no batch prices") + ": $ per million tokens "
                  f"input {interactive.input:g}, cache read {interactive.cache_read:g}, cache write 5 min "
                  f"{interactive.cache_write_5m:g} / 1 h {interactive.cache_write_1h:g}, output {interactive.output:g}. "
                  "Regimes: **no cache** (every prompt token at the input price); **cache as observed** (the cache "
                  "reads and writes the provider reported); **5-minute TTL** and **1-hour TTL** (a call reads the "
                  "cached prefix only when it comes within the TTL of the run's previous call, and writes the rest "
                  "of its prompt to the cache at that TTL's price); **batch** (batch prices, cache as observed)."),
        *([Notice("These transcripts record no gap between calls: the TTL regimes count every call as within its "
                  "TTL.")] if unrecorded else []),
        Table(_means(folder, costs), id="regime_costs"),
    ]
    if verdicts:
        blocks += [Bullets(tuple(verdict_sentence(v) for v in verdicts)),
                   Table(_verdict_table(verdicts, regimes), id="regimes", colours=tuple(VERDICT_COLOURS.items()))]
    return blocks, verdicts
