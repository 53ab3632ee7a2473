"""Dollar prices per model: from the experiment file (`model.pricing`) or the `genai-prices` database, and
the one cost rule (`call_cost`).

genai-prices ships its price data inside the package, so a lookup needs no network; ctxbench never
asks it to update. Prices are resolved once per experiment and written to the manifest.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ctxbench.harness.config import ModelConfig
from ctxbench.harness.errors import InputError
from ctxbench.harness.records import Usage

__all__ = ["Prices", "PriceSheet", "resolve_prices", "lookup_prices", "lookup_price_sheet", "call_cost", "run_cost",
           "usage_cost"]

_PROBE = 1000
"""Tokens of the probe request used to read per-million prices (the base tier of tiered prices)."""


@dataclass(frozen=True)
class Prices:
    """Dollars per million tokens, and where they came from."""

    input: float
    """Prompt tokens not served from cache."""
    cached_input: float
    """Prompt tokens served from cache."""
    cache_write: float
    """Prompt tokens written to the cache (an entry of the default 5-minute TTL; prices given in the
    experiment file: the input price)."""
    output: float
    """Completion tokens."""
    source: str
    """`experiment file`, or `genai-prices <version>: <provider>/<model>`."""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def lookup_prices(model_ref: str, base_url: str | None = None) -> Prices | None:
    """Prices of `model_ref` in the genai-prices database (offline), or None when it is not there."""
    try:
        import genai_prices
    except ImportError:  # an optional install without it: cost is unknown, not an error
        return None
    def per_million(**usage: int) -> Any:
        return genai_prices.calc_price(genai_prices.Usage(**usage), model_ref, provider_api_url=base_url or None)

    try:
        plain = per_million(input_tokens=_PROBE)
        cached = per_million(input_tokens=_PROBE, cache_read_tokens=_PROBE)
        written = per_million(input_tokens=_PROBE, cache_write_tokens=_PROBE, cache_write_5m_tokens=_PROBE)
        out = per_million(output_tokens=_PROBE)
    except LookupError:
        if base_url:  # an unknown endpoint (a local server): try the name alone
            return lookup_prices(model_ref)
        return None
    scale = 1_000_000 / _PROBE
    read, write, output = (float(p.total_price) * scale for p in (cached, written, out))
    return Prices(float(plain.total_price) * scale, read, write, output,
                  f"genai-prices {genai_prices.__version__}: {plain.provider.id}/{plain.model.id}")


@dataclass(frozen=True)
class PriceSheet:
    """One model's dollars per million tokens for every kind of token, as the price database lists them."""

    input: float
    """Prompt tokens neither read from nor written to the cache."""
    cache_read: float
    cache_write_5m: float
    """Prompt tokens written to a cache entry that lives 5 minutes (the default TTL)."""
    cache_write_1h: float
    """Prompt tokens written to a cache entry that lives 1 hour."""
    output: float
    """Completion tokens (reasoning included)."""
    source: str
    """`genai-prices <version>: <provider>/<model>`, with `, batch` for batch prices."""


def lookup_price_sheet(model_ref: str, batch: bool = False) -> PriceSheet | None:
    """The price sheet of `model_ref` in the genai-prices database (offline): its interactive prices, or
    with `batch` its batch-processing prices (where the database has none, the interactive ones). None
    when the model is not there or genai-prices is not installed."""
    try:
        import genai_prices
    except ImportError:
        return None
    context = {"processing": "batch"} if batch else None

    def per_million(**usage: int) -> Any:
        return genai_prices.calc_price(genai_prices.Usage(input_tokens=_PROBE, **usage), model_ref,
                                       price_context=context)

    try:
        plain = per_million()
        prices = [plain, per_million(cache_read_tokens=_PROBE),
                  per_million(cache_write_tokens=_PROBE, cache_write_5m_tokens=_PROBE),
                  per_million(cache_write_tokens=_PROBE, cache_write_1h_tokens=_PROBE)]
        out = genai_prices.calc_price(genai_prices.Usage(output_tokens=_PROBE), model_ref, price_context=context)
    except LookupError:
        return None
    scale = 1_000_000 / _PROBE
    read, write_5m, write_1h = (float(p.total_price) * scale for p in prices[1:])
    return PriceSheet(float(plain.total_price) * scale, read, write_5m, write_1h, float(out.total_price) * scale,
                      f"genai-prices {genai_prices.__version__}: {plain.provider.id}/{plain.model.id}"
                      + (", batch" if batch else ""))


def resolve_prices(model: ModelConfig) -> Prices | None:
    """The prices an experiment's runs are costed at; None when unknown (cost is then left empty).

    Raises:
        InputError: `model.pricing.model` names a model the price database does not have.
    """
    pricing = model.pricing
    if pricing is not None and pricing.input is not None and pricing.output is not None:  # both, or neither
        return Prices(pricing.input, pricing.cached_input if pricing.cached_input is not None else pricing.input,
                      pricing.input, pricing.output, "experiment file")
    if pricing is not None and pricing.model:
        found = lookup_prices(pricing.model)
        if found is None:
            raise InputError(f"model.pricing.model: {pricing.model!r} is not in the genai-prices database "
                             f"(give model.pricing.input and output in $ per million tokens instead)")
        return found
    if model.provider == "sim":
        return None
    return lookup_prices(model.name, model.base_url)


def call_cost(prompt: float, cached: float, written: float, completion: float, *, input: float, cache_read: float,
              cache_write: float, output: float) -> float:
    """The one cost rule: dollars for a model call's tokens at these prices (dollars per million tokens).

    The prompt tokens read from the cache cost the cache-read price, those written to it the cache-write
    price, the rest of the prompt the input price, the completion the output price. Reads and writes are
    parts of the prompt: reads count up to the prompt, writes up to what the reads leave.
    """
    reads = min(cached, prompt)
    writes = min(written, max(0.0, prompt - reads))
    return ((prompt - reads - writes) * input + reads * cache_read + writes * cache_write
            + completion * output) / 1_000_000


def run_cost(prices: Prices | None, prompt_tokens: int, cached_tokens: int, completion_tokens: int,
             cache_write_tokens: int = 0) -> float | None:
    """Dollars for these tokens at `prices` (`call_cost`); None without prices."""
    if prices is None:
        return None
    return call_cost(prompt_tokens, cached_tokens, cache_write_tokens, completion_tokens, input=prices.input,
                     cache_read=prices.cached_input, cache_write=prices.cache_write, output=prices.output)


def usage_cost(prices: Prices | None, usage: Usage) -> float | None:
    """Dollars of one model call's usage at `prices` (`call_cost`); None without prices."""
    return run_cost(prices, usage.prompt_tokens, usage.cached_tokens, usage.completion_tokens,
                    usage.cache_write_tokens)
