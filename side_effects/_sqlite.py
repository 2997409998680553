"""SQLite databases as canonical records: every table, keyed by primary key or rowid."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ._adapters import register_adapter
from ._records import Record


def _value(v: Any) -> Any:
    """Blobs become their SHA-256 (a record stays small and comparable)."""
    if isinstance(v, bytes | memoryview):
        return "sha256:" + hashlib.sha256(bytes(v)).hexdigest()
    return v


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


@register_adapter
class SqliteAdapter:
    """Records from every user table of a SQLite database (read-only).

    Resource type is ``<prefix><table>``; the key is the primary-key columns in
    declared order, or ``rowid`` for tables without one (a rowid key cannot
    tell an update from delete-and-reinsert, which is why a declared primary
    key is preferred).
    """

    name = "sqlite"

    def __init__(self, prefix: str = "", tables: Iterable[str] | None = None) -> None:
        self.prefix = prefix
        self.tables = set(tables) if tables is not None else None

    def records(self, source: str | Path | sqlite3.Connection) -> Iterable[Record]:
        """Yield one record per row of every table."""
        own = not isinstance(source, sqlite3.Connection)
        conn = (
            source
            if isinstance(source, sqlite3.Connection)
            else sqlite3.connect(f"file:{Path(source)}?mode=ro", uri=True)
        )
        try:
            names = [
                r[0]
                for r in conn.execute(
                    "SELECT name FROM sqlite_master WHERE type='table' "
                    "AND name NOT LIKE 'sqlite_%' ORDER BY name"
                )
            ]
            for table in names:
                if self.tables is not None and table not in self.tables:
                    continue
                yield from self._table(conn, table)
        finally:
            if own:
                conn.close()

    def _table(self, conn: sqlite3.Connection, table: str) -> Iterable[Record]:
        info = conn.execute(f"PRAGMA table_info({_quote(table)})").fetchall()
        cols = [r[1] for r in info]
        pk = [r[1] for r in sorted((r for r in info if r[5] > 0), key=lambda r: r[5])]
        rtype = f"{self.prefix}{table}"
        if pk:
            sql = f"SELECT {', '.join(_quote(c) for c in cols)} FROM {_quote(table)}"
            for row in conn.execute(sql):
                fields = {c: _value(v) for c, v in zip(cols, row, strict=True)}
                yield Record(rtype, tuple(str(fields[c]) for c in pk), fields)
        else:
            sql = f"SELECT rowid, {', '.join(_quote(c) for c in cols)} FROM {_quote(table)}"
            for row in conn.execute(sql):
                fields = {c: _value(v) for c, v in zip(cols, row[1:], strict=True)}
                yield Record(rtype, (str(row[0]),), fields)
