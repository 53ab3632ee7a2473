"""Append-only audit log of stock movements.

Every change the :class:`~inventory.stock.StockLedger` makes is recorded
here.  :func:`replay` rebuilds balances from the log alone; the service uses
it to check that the live ledger has not drifted.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Iterator

from .models import Movement, MovementKind

# How each kind of movement changes the on-hand quantity.  Anything not listed
# (ADJUST) carries its own sign, so its multiplier is +1.
_SIGN = {
    MovementKind.RECEIVE: 1,
    MovementKind.TRANSFER_IN: 1,
    MovementKind.PICK: -1,
    MovementKind.TRANSFER_OUT: -1,
}


def signed_quantity(movement: Movement) -> int:
    """The change in on-hand caused by ``movement``."""
    return _SIGN.get(movement.kind, 1) * movement.quantity


@dataclass(frozen=True)
class AuditEntry:
    sequence: int
    movement: Movement
    user: str = "system"

    @property
    def timestamp(self) -> datetime:
        return self.movement.timestamp


class AuditLog:
    """Ordered record of movements with simple query helpers."""

    def __init__(self) -> None:
        self._entries: list[AuditEntry] = []

    def record(self, movement: Movement, user: str = "system") -> AuditEntry:
        entry = AuditEntry(len(self._entries) + 1, movement, user)
        self._entries.append(entry)
        return entry

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[AuditEntry]:
        return iter(self._entries)

    def movements(self) -> list[Movement]:
        return [e.movement for e in self._entries]

    def for_sku(self, sku: str) -> list[Movement]:
        sku = sku.upper()
        return [e.movement for e in self._entries if e.movement.sku == sku]

    def for_reference(self, reference: str) -> list[Movement]:
        return [e.movement for e in self._entries if e.movement.reference == reference]

    def between(self, start: datetime, end: datetime) -> list[Movement]:
        """Movements with ``start <= timestamp < end``."""
        return [e.movement for e in self._entries if start <= e.timestamp < end]


def replay(movements: Iterable[Movement]) -> dict[tuple[str, str, str], int]:
    """Rebuild ``{(sku, warehouse, bin): on_hand}`` from movements.

    Entries that end at zero are dropped, matching the ledger's view.
    """
    balances: dict[tuple[str, str, str], int] = defaultdict(int)
    for m in movements:
        balances[(m.sku, m.warehouse, m.bin)] += signed_quantity(m)
    return {key: qty for key, qty in balances.items() if qty != 0}
