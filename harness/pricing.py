"""Dollar prices per model: from the experiment file (`model.pricing`) or the `genai-prices` database.

genai-prices ships its price data inside the package, so a lookup needs no network; ctxbench never
asks it to update. Prices are resolved once per experiment and written to the manifest.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ctxbench.harness.config import ModelConfig
from ctxbench.harness.errors import InputError

__all__ = ["Prices", "resolve_prices", "lookup_prices", "run_cost"]

_PROBE = 1000
"""Tokens of the probe request used to read per-million prices (the base tier of tiered prices)."""


@dataclass(frozen=True)
class Prices:
    """Dollars per million tokens, and where they came from."""

    input: float
    """Prompt tokens not served from cache."""
    cached_input: float
    """Prompt tokens served from cache."""
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
        out = per_million(output_tokens=_PROBE)
    except LookupError:
        if base_url:  # an unknown endpoint (a local server): try the name alone
            return lookup_prices(model_ref)
        return None
    scale = 1_000_000 / _PROBE
    return Prices(float(plain.total_price) * scale, float(cached.total_price) * scale, float(out.total_price) * scale,
                  f"genai-prices {genai_prices.__version__}: {plain.provider.id}/{plain.model.id}")


def resolve_prices(model: ModelConfig) -> Prices | None:
    """The prices an experiment's runs are costed at; None when unknown (cost is then left empty).

    Raises:
        InputError: `model.pricing.model` names a model the price database does not have.
    """
    pricing = model.pricing
    if pricing is not None and pricing.input is not None and pricing.output is not None:  # both, or neither
        return Prices(pricing.input, pricing.cached_input if pricing.cached_input is not None else pricing.input,
                      pricing.output, "experiment file")
    if pricing is not None and pricing.model:
        found = lookup_prices(pricing.model)
        if found is None:
            raise InputError(f"model.pricing.model: {pricing.model!r} is not in the genai-prices database "
                             f"(give model.pricing.input and output in $ per million tokens instead)")
        return found
    if model.provider == "sim":
        return None
    return lookup_prices(model.name, model.base_url)


def run_cost(prices: Prices | None, prompt_tokens: int, cached_tokens: int, completion_tokens: int) -> float | None:
    """Dollars for these tokens: uncached prompt, cached prompt and completion each at its price."""
    if prices is None:
        return None
    cached = min(cached_tokens, prompt_tokens)
    return ((prompt_tokens - cached) * prices.input + cached * prices.cached_input
            + completion_tokens * prices.output) / 1_000_000
