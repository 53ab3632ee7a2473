"""Prices from the experiment file or the genai-prices database (offline); cost_usd per run and in the report."""

from __future__ import annotations

import csv
import json

import pytest

from ctxbench.harness.config import ModelConfig, load_config
from ctxbench.harness.errors import InputError
from ctxbench.harness.pricing import Prices, call_cost, lookup_prices, resolve_prices, run_cost, usage_cost
from ctxbench.harness.records import Usage
from ctxbench.harness.run.runner import prepare, run_experiment
from ctxbench.reports import write_report


def test_prices_from_the_experiment_file() -> None:
    prices = resolve_prices(ModelConfig(pricing={"input": 2.0, "cached_input": 0.5, "output": 8.0}))
    assert prices == Prices(2.0, 0.5, 2.0, 8.0, "experiment file")  # cache writes at the input price
    assert resolve_prices(ModelConfig(pricing={"input": 2.0, "output": 8.0})).cached_input == 2.0
    assert run_cost(prices, prompt_tokens=1_000_000, cached_tokens=400_000, completion_tokens=100_000) == \
        pytest.approx(0.6 * 2.0 + 0.4 * 0.5 + 0.1 * 8.0)
    assert run_cost(None, 10, 0, 10) is None


def test_cache_writes_cost_their_write_price_by_the_one_rule_the_regimes_follow() -> None:
    found = lookup_prices("claude-sonnet-4-5")
    assert found is not None and (found.input, found.cached_input, found.cache_write) == pytest.approx((3.0, 0.3, 3.75))
    usage = Usage(prompt_tokens=10_000, completion_tokens=100, cached_tokens=6_000, cache_write_tokens=3_000)
    assert usage_cost(found, usage) == pytest.approx((1_000 * 3.0 + 6_000 * 0.3 + 3_000 * 3.75 + 100 * 15.0) / 1e6)
    assert usage_cost(found, usage) == pytest.approx(call_cost(10_000, 6_000, 3_000, 100, input=3.0, cache_read=0.3,
                                                               cache_write=3.75, output=15.0))
    assert call_cost(100, 80, 50, 0, input=1.0, cache_read=0.0, cache_write=2.0, output=0.0) == \
        pytest.approx(20 * 2.0 / 1e6), "writes count up to what the reads leave of the prompt"
    assert lookup_prices("gpt-4o-mini").cache_write == lookup_prices("gpt-4o-mini").input  # no write price: input


def test_prices_from_the_database_need_no_network() -> None:
    found = lookup_prices("gpt-4o-mini")
    assert found is not None and found.source.startswith("genai-prices ") and "gpt-4o-mini" in found.source
    assert 0 < found.cached_input < found.input < found.output
    assert resolve_prices(ModelConfig(pricing={"model": "gpt-4o-mini"})) == found
    assert resolve_prices(ModelConfig(provider="openai", name="gpt-4o-mini",
                                      base_url="http://127.0.0.1:8000/v1")) == found, "a local URL: by name"
    assert resolve_prices(ModelConfig()) is None, "the simulator has no price of its own"
    assert resolve_prices(ModelConfig(provider="openai", name="my-finetune-xyz")) is None
    with pytest.raises(InputError, match="not in the genai-prices database"):
        resolve_prices(ModelConfig(pricing={"model": "no-such-model-xyz"}))


@pytest.mark.parametrize("pricing, problem", [
    ({"model": "gpt-4o", "input": 1.0}, "either model or prices"),
    ({"input": 1.0}, "at least input and output"),
    ({}, "give model"),
    ({"input": -1, "output": 1}, "greater than or equal to 0"),
])
def test_bad_pricing_is_an_input_error(experiment_file, pricing, problem) -> None:
    with pytest.raises(InputError, match=problem):
        load_config(experiment_file(model={"pricing": pricing}))


def test_cost_per_run_in_runs_summary_and_report(experiment_file, tmp_path) -> None:
    path = experiment_file(model={"pricing": {"input": 3.0, "cached_input": 0.3, "output": 15.0}})
    config = load_config(path, ["taskset.ids=[calc-median-even-length]",
                                "strategies=[{name: baseline}, {name: summarizer, params: {history_share: 0.1}}]"])
    out = tmp_path / "out"
    run_experiment(prepare(config, path.parent, out), progress=False)
    runs = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    for r in runs:
        assert r["cost_usd"] == pytest.approx(((r["prompt_tokens"] + r["strategy_tokens"] - r["cached_tokens"]) * 3.0
                                               + r["cached_tokens"] * 0.3 + r["completion_tokens"] * 15.0) / 1e6,
                                              rel=1e-6)
    baseline = next(r for r in runs if r["strategy"] == "baseline")
    assert 0 < baseline["cached_tokens"] < baseline["prompt_tokens"], "the simulator reports prompt-cache hits"
    assert json.loads((out / "manifest.json").read_text())["pricing"] == {
        "input": 3.0, "cached_input": 0.3, "cache_write": 3.0, "output": 15.0, "source": "experiment file"}
    paths = write_report(out)
    rows = {row["strategy"]: row for row in csv.DictReader(paths.summary_csv.open())}
    assert float(rows["baseline"]["cost_mean"]) == pytest.approx(baseline["cost_usd"])
    report = paths.markdown.read_text()
    assert "cost $ mean / per resolved" in report and f"${baseline['cost_usd']:,.4f}" in report
    assert "$3 per million prompt tokens, $0.3 per million cached prompt tokens" in report
