"""Sales-tax rules.

A rule applies to a region (``"US"``, ``"US-CA"``; ``None`` for everywhere)
and optionally to a product category.  When several rules match, the most
specific one wins:

* a deeper region beats a shallower one (``US-CA`` over ``US`` over none);
* at the same region level, a category rule beats a general rule.

Rates are fractions (``Decimal("0.0725")`` for 7.25 %).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Iterable

from .money import to_decimal


@dataclass(frozen=True)
class TaxRule:
    name: str
    rate: Decimal
    region: str | None = None
    category: str | None = None

    def __post_init__(self) -> None:
        rate = to_decimal(self.rate)
        if not Decimal("0") <= rate < Decimal("1"):
            raise ValueError(f"tax rule {self.name}: rate {rate} must be a fraction in [0, 1)")
        object.__setattr__(self, "rate", rate)
        if self.region is not None:
            object.__setattr__(self, "region", self.region.upper())

    def matches(self, region: str, category: str) -> bool:
        if self.category is not None and self.category != category:
            return False
        if self.region is None:
            return True
        region = region.upper()
        return region == self.region or region.startswith(self.region + "-")

    @property
    def specificity(self) -> tuple[int, int]:
        depth = 0 if self.region is None else self.region.count("-") + 1
        return (depth, int(self.category is None))


class TaxTable:
    """A set of :class:`TaxRule` with a fallback rate for unmatched sales."""

    def __init__(self, rules: Iterable[TaxRule] = (), default_rate: Decimal | str = "0") -> None:
        self._rules: list[TaxRule] = list(rules)
        self.default_rate = to_decimal(default_rate)

    def add(self, rule: TaxRule) -> None:
        self._rules.append(rule)

    def rules(self) -> list[TaxRule]:
        return list(self._rules)

    def rule_for(self, region: str, category: str) -> TaxRule | None:
        """The most specific rule for a sale, or None when no rule matches."""
        matching = [r for r in self._rules if r.matches(region, category)]
        if not matching:
            return None
        return max(matching, key=lambda r: r.specificity)

    def rate_for(self, region: str, category: str) -> Decimal:
        rule = self.rule_for(region, category)
        return rule.rate if rule is not None else self.default_rate

    def tax_on(self, amount: Decimal, region: str, category: str) -> Decimal:
        """Unrounded tax on ``amount``; callers round per line."""
        return to_decimal(amount) * self.rate_for(region, category)


def standard_us_table() -> TaxTable:
    """The handful of US rules the demo data and the CLI use."""
    return TaxTable(
        [
            TaxRule("US-CA state", Decimal("0.0725"), "US-CA"),
            TaxRule("US-NY state", Decimal("0.04"), "US-NY"),
            TaxRule("US-NY clothing", Decimal("0"), "US-NY", "apparel"),
            TaxRule("US-OR none", Decimal("0"), "US-OR"),
            TaxRule("US-TX state", Decimal("0.0625"), "US-TX"),
            TaxRule("US-TX groceries", Decimal("0"), "US-TX", "grocery"),
        ],
        default_rate="0",
    )
