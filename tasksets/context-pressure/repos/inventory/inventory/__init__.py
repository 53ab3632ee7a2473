"""Inventory service library: catalog, stock ledger, orders, pricing and reports."""

from .errors import (
    AllocationError,
    ImportFormatError,
    InsufficientStockError,
    InventoryError,
    LedgerIntegrityError,
    ReservationError,
    UnknownProductError,
    UnknownWarehouseError,
)
from .models import Bin, Catalog, Movement, MovementKind, Order, OrderLine, Product, Warehouse
from .service import InventoryService

__all__ = [
    "AllocationError", "Bin", "Catalog", "ImportFormatError", "InsufficientStockError",
    "InventoryError", "InventoryService", "LedgerIntegrityError", "Movement", "MovementKind",
    "Order", "OrderLine", "Product", "ReservationError", "UnknownProductError",
    "UnknownWarehouseError", "Warehouse",
]
__version__ = "2.3.1"
