"""Core domain objects: products, warehouses, bins, orders and movements."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime, timezone
from decimal import Decimal

from .errors import UnknownProductError, UnknownWarehouseError


def utcnow() -> datetime:
    """Timezone-aware current time; the whole package stores UTC."""
    return datetime.now(timezone.utc)


@dataclass
class Product:
    """A stock-keeping unit.

    ``units_per_case`` is how many eaches a supplier case holds; purchase
    quantities are rounded up to whole cases.  ``lead_time_days`` is the
    supplier lead time used by reorder planning.
    """

    sku: str
    name: str
    category: str = "general"
    unit_cost: Decimal = Decimal("0")
    price: Decimal = Decimal("0")
    units_per_case: int = 1
    lead_time_days: int = 7
    safety_stock: int = 0
    active: bool = True

    def __post_init__(self) -> None:
        self.sku = self.sku.strip().upper()
        if not self.sku:
            raise ValueError("SKU must not be empty")
        if self.units_per_case < 1:
            raise ValueError(f"{self.sku}: units_per_case must be >= 1")
        if self.lead_time_days < 0:
            raise ValueError(f"{self.sku}: lead_time_days must be >= 0")


@dataclass(frozen=True)
class Bin:
    """A storage location inside a warehouse, addressed as aisle-rack-level."""

    aisle: str
    rack: int
    level: int

    @property
    def code(self) -> str:
        return f"{self.aisle}-{self.rack:02d}-{self.level}"

    @classmethod
    def parse(cls, code: str) -> "Bin":
        try:
            aisle, rack, level = code.strip().split("-")
            return cls(aisle.upper(), int(rack), int(level))
        except ValueError as exc:
            raise ValueError(f"invalid bin code {code!r}, expected e.g. 'A-03-2'") from exc

    def __str__(self) -> str:
        return self.code


DEFAULT_BIN = Bin("RCV", 0, 0)
"""Receiving dock; stock lands here unless a bin is given."""


@dataclass
class Warehouse:
    """A stocking location. Lower ``priority`` numbers are preferred when allocating."""

    code: str
    name: str = ""
    region: str = "US"
    priority: int = 100
    active: bool = True
    bins: list[Bin] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.code = self.code.strip().upper()
        if DEFAULT_BIN not in self.bins:
            self.bins.insert(0, DEFAULT_BIN)

    def add_bin(self, code: str) -> Bin:
        b = Bin.parse(code)
        if b not in self.bins:
            self.bins.append(b)
        return b


class MovementKind(str, enum.Enum):
    """What a stock movement did. Quantities on movements are always positive
    except for ADJUST, which carries the signed correction."""

    RECEIVE = "receive"
    PICK = "pick"
    TRANSFER_OUT = "transfer_out"
    TRANSFER_IN = "transfer_in"
    ADJUST = "adjust"
    SCRAP = "scrap"


@dataclass(frozen=True)
class Movement:
    """One change to the stock of a SKU in one bin of one warehouse."""

    kind: MovementKind
    sku: str
    warehouse: str
    bin: str
    quantity: int
    timestamp: datetime
    reference: str = ""
    reason: str = ""


@dataclass
class OrderLine:
    sku: str
    quantity: int

    def __post_init__(self) -> None:
        self.sku = self.sku.strip().upper()
        if self.quantity <= 0:
            raise ValueError(f"order line for {self.sku} must have a positive quantity")


@dataclass
class Order:
    order_id: str
    lines: list[OrderLine]
    region: str = "US"
    customer: str = ""
    discount_code: str | None = None

    def quantity_of(self, sku: str) -> int:
        return sum(line.quantity for line in self.lines if line.sku == sku.upper())


class Catalog:
    """In-memory registry of products and warehouses."""

    def __init__(self) -> None:
        self._products: dict[str, Product] = {}
        self._warehouses: dict[str, Warehouse] = {}

    # products -------------------------------------------------------------
    def add_product(self, product: Product) -> Product:
        self._products[product.sku] = product
        return product

    def product(self, sku: str) -> Product:
        try:
            return self._products[sku.strip().upper()]
        except KeyError:
            raise UnknownProductError(sku) from None

    def products(self) -> list[Product]:
        return sorted(self._products.values(), key=lambda p: p.sku)

    def __contains__(self, sku: object) -> bool:
        return isinstance(sku, str) and sku.strip().upper() in self._products

    # warehouses -----------------------------------------------------------
    def add_warehouse(self, warehouse: Warehouse) -> Warehouse:
        self._warehouses[warehouse.code] = warehouse
        return warehouse

    def warehouse(self, code: str) -> Warehouse:
        try:
            return self._warehouses[code.strip().upper()]
        except KeyError:
            raise UnknownWarehouseError(code) from None

    def warehouses(self, *, active_only: bool = False) -> list[Warehouse]:
        found = [w for w in self._warehouses.values() if w.active or not active_only]
        return sorted(found, key=lambda w: (w.priority, w.code))
