"""Read and write delimited tables whose dialect is detected automatically."""

from __future__ import annotations

import csv
import io
import os
from dataclasses import dataclass, field
from typing import Iterator

from .sniff import Dialect, sniff

__all__ = ["Table", "iter_records", "read_table", "write_table"]

#: How much of a file is handed to :func:`textkit.sniff.sniff`.
SNIFF_BYTES = 64 * 1024


@dataclass
class Table:
    """Rows of a delimited file, with the header split off if there is one."""

    header: list[str] | None
    rows: list[list[str]]
    dialect: Dialect = field(default_factory=Dialect)

    @property
    def width(self) -> int:
        widths = [len(r) for r in self.rows]
        if self.header is not None:
            widths.append(len(self.header))
        return max(widths, default=0)

    def column(self, key: int | str) -> list[str]:
        """Return one column by index or, when there is a header, by name."""
        if isinstance(key, str):
            if self.header is None:
                raise KeyError(f"table has no header, cannot look up column {key!r}")
            key = self.header.index(key)
        return [row[key] if key < len(row) else "" for row in self.rows]


def _read_text(source: str | os.PathLike[str], encoding: str) -> str:
    """*source* is a path, unless it contains a newline (then it is the data)."""
    if isinstance(source, str) and "\n" in source:
        return source
    with open(source, encoding=encoding, newline="") as handle:
        return handle.read()


def _reader(text: str, dialect: Dialect) -> Iterator[list[str]]:
    return csv.reader(io.StringIO(text, newline=""), **dialect.as_csv_kwargs())


def read_table(
    source: str | os.PathLike[str],
    *,
    dialect: Dialect | None = None,
    header: bool | None = None,
    encoding: str = "utf-8-sig",
) -> Table:
    """Read a delimited file (or a string of data) into a :class:`Table`.

    The dialect is sniffed from the first :data:`SNIFF_BYTES` characters
    unless given.  *header* overrides the sniffed ``has_header``.  Blank
    lines are skipped.
    """
    text = _read_text(source, encoding)
    if dialect is None:
        dialect = sniff(text[:SNIFF_BYTES])
    rows = [row for row in _reader(text, dialect) if any(cell.strip() for cell in row)]
    use_header = dialect.has_header if header is None else header
    if use_header and rows:
        return Table(rows[0], rows[1:], dialect)
    return Table(None, rows, dialect)


def iter_records(source: str | os.PathLike[str], **kwargs) -> Iterator[dict[str, str]]:
    """Yield each row of a file with a header as a ``{column: value}`` dict."""
    table = read_table(source, header=True, **kwargs)
    assert table.header is not None
    for row in table.rows:
        padded = row + [""] * (len(table.header) - len(row))
        yield dict(zip(table.header, padded))


def write_table(table: Table, dialect: Dialect | None = None) -> str:
    """Serialise *table* (header first) in *dialect* (default: the table's own)."""
    dialect = dialect or table.dialect
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n", **dialect.as_csv_kwargs())
    if table.header is not None:
        writer.writerow(table.header)
    writer.writerows(table.rows)
    return out.getvalue()
