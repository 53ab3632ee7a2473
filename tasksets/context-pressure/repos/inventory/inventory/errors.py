"""Exception hierarchy for the inventory service.

Every error raised on purpose by this package derives from
:class:`InventoryError`, so callers can catch one type at the API boundary.
"""


class InventoryError(Exception):
    """Base class for all inventory errors."""


class UnknownProductError(InventoryError, KeyError):
    """A SKU was referenced that is not in the catalog."""

    def __init__(self, sku: str):
        super().__init__(sku)
        self.sku = sku

    def __str__(self) -> str:
        return f"unknown SKU {self.sku!r}"


class UnknownWarehouseError(InventoryError, KeyError):
    """A warehouse code was referenced that is not registered."""

    def __init__(self, code: str):
        super().__init__(code)
        self.code = code

    def __str__(self) -> str:
        return f"unknown warehouse {self.code!r}"


class InsufficientStockError(InventoryError):
    """A movement would take a bin or warehouse below zero."""


class ReservationError(InventoryError):
    """A reservation could not be created, found or released."""


class AllocationError(InventoryError):
    """An order cannot be allocated to any combination of warehouses."""


class LedgerIntegrityError(InventoryError):
    """Balances rebuilt from the audit log disagree with the live ledger."""


class ImportFormatError(InventoryError, ValueError):
    """A CSV file could not be parsed; carries the offending line number."""

    def __init__(self, message: str, line: int | None = None):
        super().__init__(message)
        self.line = line

    def __str__(self) -> str:
        base = super().__str__()
        return f"line {self.line}: {base}" if self.line is not None else base
