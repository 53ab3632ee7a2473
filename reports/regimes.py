"""Cost under several pricing regimes: every run re-priced call by call, and each cost verdict checked
under each regime.

The regimes (`REGIMES`), per model call of the agent, with P prompt, C cache-read, W cache-write, O
completion tokens as the provider reported them and g the seconds since the run's previous call:

- `no cache`: P at the input price, O at the output price — as if nothing were cached.
- `cache as observed`: C at the cache-read price, W at the 5-minute cache-write price, the rest of P at
  the input price (what the provider reported, priced as the database lists): the rule `cost_usd`
  follows, `ctxbench.harness.pricing.call_cost`, by which every regime prices a call.
- `5-minute TTL`, `1-hour TTL`: an explicit cache that lives that long: C is read from the cache only
  when g is within the TTL (the first call keeps what it reported; g unrecorded counts as within), and
  the rest of the prompt is written to the cache at that TTL's write price, for the next call.
- `batch`: the batch prices, the cache as observed.

The strategy's own calls (a summarizer's) have no cache figures: their prompt at the input price,
their completion at the output price, in every regime (batch: at batch prices).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import pandas as pd

from ctxbench.harness.pricing import PriceSheet, call_cost, lookup_price_sheet
from ctxbench.harness.records import Manifest
from ctxbench.reports.compare import compare_strategies
from ctxbench.reports.metrics import MARGIN, PairedComparison

__all__ = ["Regime", "REGIMES", "RegimeVerdicts", "price_sheets", "regime_costs", "regime_verdicts", "verdict_sentence"]

Regime = Literal["no cache", "cache as observed", "5-minute TTL", "1-hour TTL", "batch"]
REGIMES: tuple[Regime, ...] = ("no cache", "cache as observed", "5-minute TTL", "1-hour TTL", "batch")
_TTL = {"5-minute TTL": 300.0, "1-hour TTL": 3600.0}


def _model_of(manifest: Manifest) -> str | None:
    """The price-database model the experiment was costed as, when it was costed from the database."""
    source = (manifest.pricing or {}).get("source", "")
    if source.startswith("genai-prices") and "/" in source:
        return source.rsplit("/", 1)[1]
    model = manifest.config.get("model", {})
    named = (model.get("pricing") or {}).get("model")
    return named or (None if model.get("provider") == "sim" else model.get("name"))


def price_sheets(manifest: Manifest, price_as: str | None = None) -> tuple[PriceSheet, PriceSheet | None] | None:
    """The interactive and batch price sheets to re-price with: those of `price_as`, else of the model
    the experiment was costed as; prices given in the experiment file have no batch sheet and their
    cache writes cost the input price. None when there are no prices to use."""
    pricing = manifest.pricing or {}
    if price_as is None and pricing.get("source") == "experiment file":
        p = pricing
        return PriceSheet(p["input"], p["cached_input"], p["input"], p["input"], p["output"],
                          "experiment file (cache writes at the input price)"), None
    model = price_as or _model_of(manifest)
    sheet = lookup_price_sheet(model) if model else None
    if model is None or sheet is None:
        return None
    return sheet, lookup_price_sheet(model, batch=True)


def _turn_cost(regime: Regime, sheet: PriceSheet, turn: pd.Series) -> float:
    """Dollars of one turn under `regime` (`call_cost`, the cost rule `cost_usd` follows too): the agent's
    call, and the strategy's own calls, which have no cache figures."""
    prompt, cached, written, out = (float(turn[k]) for k in
                                    ("prompt_tokens", "cached_tokens", "cache_write_tokens", "completion_tokens"))
    write = sheet.cache_write_1h if regime == "1-hour TTL" else sheet.cache_write_5m
    if regime == "no cache":
        cached = written = 0.0
    elif regime in _TTL:
        gap = turn["gap_s"]
        within = gap is None or (isinstance(gap, float) and math.isnan(gap)) or float(gap) <= _TTL[regime]
        cached = min(cached, prompt) if within else 0.0
        written = prompt - cached  # the rest of the prompt is written, for the next call
    prices = {"input": sheet.input, "cache_read": sheet.cache_read, "cache_write": write, "output": sheet.output}
    own = call_cost(float(turn["strategy_prompt_tokens"]), 0, 0, float(turn["strategy_completion_tokens"]), **prices)
    return call_cost(prompt, cached, written, out, **prices) + own


def regime_costs(turns: pd.DataFrame, sheets: tuple[PriceSheet, PriceSheet | None]) -> pd.DataFrame:
    """Dollars per run under each regime (rows run ids, columns the regimes that have prices), from the
    turns of `turns_df`."""
    interactive, batch = sheets
    out: dict[str, pd.Series] = {}
    for regime in REGIMES:
        sheet = batch if regime == "batch" else interactive
        if sheet is None:
            continue
        costs = turns.apply(lambda t: _turn_cost(regime, sheet, t), axis=1) if len(turns) else pd.Series(dtype=float)
        out[regime] = costs.groupby(turns["run_id"]).sum()
    return pd.DataFrame(out)


@dataclass(frozen=True)
class RegimeVerdicts:
    """One candidate's cost comparison with the reference under each regime."""

    strategy: str
    reference: str
    by_regime: dict[str, PairedComparison]

    def verdicts(self) -> dict[str, str]:
        return {r: c.cost.verdict for r, c in self.by_regime.items() if c.cost is not None}

    def flips(self, base: str | None = None) -> dict[str, str]:
        """The regimes whose verdict differs from `base` (default: the verdict with the cache as
        observed), with their verdict; empty when there is nothing to compare with."""
        v = self.verdicts()
        base = base or v.get("cache as observed")
        return {r: w for r, w in v.items() if base is not None and w != base}


def regime_verdicts(runs: pd.DataFrame, costs: pd.DataFrame, reference: str, order: list[str],
                    margin: float = MARGIN) -> list[RegimeVerdicts]:
    """Each candidate's paired cost comparison (task bootstrap, Holm across candidates) with the runs
    priced under each regime; runs without a price under a regime leave cost out of that comparison."""
    per_regime: dict[str, list[PairedComparison]] = {}
    for regime in costs.columns:
        priced = runs.assign(cost_usd=runs["run_id"].map(costs[regime]))
        per_regime[regime] = compare_strategies(priced, reference, order, margin=margin)
    candidates = [c.strategy for c in next(iter(per_regime.values()), [])]
    return [RegimeVerdicts(s, reference, {r: next(c for c in cs if c.strategy == s) for r, cs in per_regime.items()})
            for s in candidates]


def verdict_sentence(v: RegimeVerdicts) -> str:
    """e.g. "`summarizer` vs `baseline`: **same** in cost under cache as observed; flips to **dearer**
    under no cache"."""
    verdicts = v.verdicts()
    base = verdicts.get("cache as observed")
    if base is None:
        return f"`{v.strategy}` vs `{v.reference}`: no cost comparison (some runs have no price)."
    flips = v.flips()
    if not flips:
        return (f"`{v.strategy}` vs `{v.reference}`: **{base}** in cost under every regime "
                f"({', '.join(verdicts)}).")
    changed = "; ".join(f"**{w}** under {r}" for r, w in flips.items())
    return f"`{v.strategy}` vs `{v.reference}`: **{base}** in cost with the cache as observed; flips to {changed}."
