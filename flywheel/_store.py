"""One small store interface over two ClickHouse backends.

``open_store("chdb:///PATH")`` is the embedded engine (chDB, a persistent
directory); ``open_store("clickhouse://USER:PASS@HOST:8123/DB")`` a server or
cluster through clickhouse-connect. The same SQL runs on both; inserts are
columnar (Arrow), reads use bound parameters (``{name:Type}``) and come back
as Arrow from the engine, so rows look the same on both backends.
"""

from __future__ import annotations

import abc
import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import pyarrow as pa

from ._arrow import arrow_to_rows, columns_to_arrow
from .errors import StoreUnavailable, UserError

_TOKEN = re.compile(r"[A-Za-z0-9_.:/-]{1,200}")

#: Backslash escapes of a ClickHouse string literal (and of a text parameter's value).
SQL_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"})


def sql_string(value: str) -> str:
    """``value`` as a ClickHouse string literal (DDL takes no bound parameters)."""
    return "'" + value.translate(SQL_ESCAPES).replace("'", "\\'") + "'"


#: Settings that make a tokened insert idempotent in views too.
DEDUP_SETTINGS = {"deduplicate_blocks_in_dependent_materialized_views": 1, "insert_deduplicate": 1}

Params = Mapping[str, Any] | None
Columns = Mapping[str, Sequence[Any]] | pa.Table


class Store(abc.ABC):
    """A ClickHouse database the platform reads and writes.

    Subclasses implement four primitives; everything else (typed inserts,
    migrations, rows) is shared so both backends behave alike.
    """

    url: str
    database: str
    cluster: str | None = None
    #: The span table (``otel_traces`` unless adopting a collector's table).
    otel_table: str = "otel_traces"

    def __init__(self) -> None:
        self._schemas: dict[str, dict[str, str]] = {}
        self._schema_lock = threading.Lock()

    # -- primitives -------------------------------------------------------
    @abc.abstractmethod
    def query_arrow(self, sql: str, params: Params = None) -> pa.Table:
        """Run a SELECT with bound parameters; the result as an Arrow table."""

    @abc.abstractmethod
    def command(self, sql: str, params: Params = None) -> None:
        """Run a statement that returns no rows (DDL, ALTER, INSERT ... SELECT)."""

    @abc.abstractmethod
    def _insert_arrow(self, table: str, data: pa.Table, token: str | None) -> None:
        """Insert an Arrow table whose column names are columns of ``table``.

        With ``token``, ClickHouse drops a block it has already seen with the
        same token (in the table and in every view fed by it), which makes
        replaying a write-ahead log idempotent.
        """

    @abc.abstractmethod
    def close(self) -> None:
        """Release the connection (the data stays)."""

    # -- shared -----------------------------------------------------------
    def query(self, sql: str, params: Params = None) -> list[dict[str, Any]]:
        """Rows as dicts: timestamps as int ns since the epoch, maps as dicts."""
        return arrow_to_rows(self.query_arrow(sql, params))

    def scalar(self, sql: str, params: Params = None) -> Any:
        """The first column of the first row, or None."""
        rows = self.query(sql, params)
        return next(iter(rows[0].values())) if rows else None

    def table_schema(self, table: str, *, refresh: bool = False) -> dict[str, str]:
        """Column name -> ClickHouse type of ``table`` (cached)."""
        with self._schema_lock:
            if refresh or table not in self._schemas:
                rows = self.query(
                    "SELECT name, type FROM system.columns "
                    "WHERE database = {db:String} AND table = {t:String} ORDER BY position",
                    {"db": self.database, "t": table},
                )
                if not rows:
                    raise UserError(f"table {self.database}.{table} does not exist; run migrations")
                self._schemas[table] = {r["name"]: r["type"] for r in rows}
            return self._schemas[table]

    def insert(self, table: str, columns: Columns, *, dedup_token: str | None = None) -> int:
        """Columnar insert: a dict of column -> values, or an Arrow table.

        Values are typed from the table's ClickHouse schema (maps from dicts,
        DateTime64 from int ns or datetimes). ``dedup_token`` makes the insert
        idempotent (see ``_insert_arrow``). Returns the row count.
        """
        if dedup_token is not None and not _TOKEN.fullmatch(dedup_token):
            raise UserError(f"invalid dedup token {dedup_token!r}")
        if isinstance(columns, pa.Table):
            data = columns
        else:
            data = columns_to_arrow(columns, self.table_schema(table))
        if data.num_rows:
            self._insert_arrow(table, data, dedup_token)
        return data.num_rows

    def dictionary_credentials(self) -> str:
        """The ``USER ... PASSWORD ...`` a dictionary over this store's own tables logs in with.

        Empty: the embedded engine runs a dictionary's reads in-process as its only user.
        """
        return ""

    def release_memory(self) -> dict[str, int]:
        """Give back memory the backend no longer uses (a long-running process calls it when idle).

        A server backend holds nothing in this process: nothing to do.
        """
        return {}

    def ping(self) -> bool:
        """True when the store answers a trivial query."""
        try:
            return self.scalar("SELECT 1 AS ok") == 1
        except Exception:  # noqa: BLE001 - readiness must never raise
            return False

    def migrate(self, packages: Sequence[str] | None = None) -> list[str]:
        """Apply every package's pending numbered migrations; return their ids."""
        from ._migrations import apply_migrations

        return apply_migrations(self, packages)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _store_error(url: str, exc: Exception) -> StoreUnavailable:
    return StoreUnavailable(
        f"the store at {url} did not answer ({exc}); for a server start deploy/compose.yaml, "
        "or pass --store chdb:///PATH for the embedded engine"
    )


def open_store(
    url: str, *, cluster: str | None = None, otel_table: str | None = None
) -> Store:
    """Open a store from its URL (see the module docstring)."""
    store = _open(url, cluster)
    if otel_table:
        if not otel_table.replace("_", "").isalnum():
            raise UserError(f"invalid --otel-table {otel_table!r}")
        store.otel_table = otel_table
    return store


def chdb_path(url: str) -> str | None:
    """The directory of an embedded store URL (``chdb:///PATH``), else None."""
    parsed = urlparse(url)
    if parsed.scheme != "chdb":
        return None
    path = unquote(parsed.netloc + parsed.path)
    if path.startswith("/./") or path.startswith("/../"):
        path = path[1:]
    return path


def _open(url: str, cluster: str | None) -> Store:
    parsed = urlparse(url)
    query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
    if parsed.scheme == "chdb":
        from ._store_chdb import ChdbStore

        path = chdb_path(url) or ""
        if not path or path == "/":
            raise UserError(f"store URL {url} has no directory; use chdb:///PATH")
        return ChdbStore(path, database=query.get("database", "flywheel"), url=url)
    if parsed.scheme in {"clickhouse", "clickhouses", "http", "https"}:
        from ._store_clickhouse import ClickHouseStore

        return ClickHouseStore(url, cluster=cluster or query.get("cluster"))
    raise UserError(
        f"unknown store URL {url!r}; use chdb:///PATH or clickhouse://USER:PASS@HOST:8123/DB"
    )
