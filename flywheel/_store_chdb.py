"""The embedded backend: chDB, ClickHouse in-process over a persistent directory.

chDB runs one embedded server per process, bound to one directory: opening a
second directory in the same process is a ``UserError`` that says so. Each
store object has its own session (its own current database) on that server.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

from ._store import DEDUP_SETTINGS, Params, Store, _store_error
from .errors import FlywheelError, StoreUnavailable, UserError

_server_path: str | None = None
_server_lock = threading.Lock()


def _identifier(name: str) -> str:
    if not name.replace("_", "").isalnum():
        raise UserError(f"invalid database or table name {name!r}")
    return name


class ChdbStore(Store):
    """A store in a local directory through chDB."""

    def __init__(self, path: str, *, database: str = "flywheel", url: str | None = None) -> None:
        super().__init__()
        global _server_path
        from chdb import session as chdb_session

        self.path = str(Path(path).expanduser().resolve())
        self.database = _identifier(database)
        self.url = url or f"chdb://{self.path}"
        with _server_lock:
            if _server_path is not None and _server_path != self.path:
                raise UserError(
                    f"chDB already holds the store {_server_path} in this process; "
                    f"one process can open one chDB directory (asked for {self.path})"
                )
            os.makedirs(self.path, exist_ok=True)
            try:
                self._session = chdb_session.Session(self.path)
            except Exception as exc:  # chDB raises RuntimeError for a locked or bad dir
                if "Another server instance" in str(exc):
                    raise StoreUnavailable(
                        f"the chDB store {self.path} is open in another process (a running "
                        "`flywheel serve`?); stop it, or reach that server through its API"
                    ) from exc
                raise _store_error(self.url, exc) from exc
            _server_path = self.path
        self._lock = threading.RLock()
        self._run(f"CREATE DATABASE IF NOT EXISTS {self.database}")
        self._run(f"USE {self.database}")

    def _run(self, sql: str, fmt: str = "CSV", params: Params = None) -> Any:
        with self._lock:
            try:
                if params:
                    return self._session.query(sql, fmt, params=_params(params))
                return self._session.query(sql, fmt)
            except Exception as exc:
                raise _query_error(exc, sql) from exc

    def query_arrow(self, sql: str, params: Params = None) -> pa.Table:
        res = self._run(
            sql + "\nSETTINGS output_format_arrow_string_as_string = 1", "ArrowStream", params
        )
        data = res.bytes()
        if not data:
            return pa.table({})
        return ipc.open_stream(pa.py_buffer(data)).read_all()

    def command(self, sql: str, params: Params = None) -> None:
        self._run(sql, "CSV", params)

    def _insert_arrow(self, table: str, data: pa.Table, token: str | None) -> None:
        cols = ", ".join(f"`{c}`" for c in data.column_names)
        sql = f"INSERT INTO {_identifier(table)} ({cols}) SELECT * FROM Python(arrow_data)"
        if token:  # validated by Store.insert: [A-Za-z0-9_.:/-]
            settings = ", ".join(f"{k} = {v}" for k, v in DEDUP_SETTINGS.items())
            sql += f" SETTINGS insert_deduplication_token = '{token}', {settings}"
        with self._lock:
            try:
                _insert_from(self._session, sql, data)
            except Exception as exc:
                raise _query_error(exc, sql) from exc

    def close(self) -> None:
        # The embedded server stays up for the process (chDB allows one path
        # per process); closing the session only drops this connection.
        with self._lock:
            try:
                self._session.close()
            except Exception:  # noqa: BLE001 - closing never raises
                pass


def _insert_from(session: Any, sql: str, arrow_data: pa.Table) -> None:
    """Run ``sql``; chDB's ``Python(arrow_data)`` finds the table in this frame."""
    session.query(sql)


def _params(params: dict[str, Any] | Any) -> dict[str, Any]:
    out = {}
    for k, v in params.items():
        if isinstance(v, bool):
            out[k] = int(v)
        elif isinstance(v, list | tuple):
            out[k] = "[" + ",".join(_literal(x) for x in v) + "]"
        elif isinstance(v, str):
            out[k] = v.translate(_ESCAPES)  # parameter values are escaped text
        else:
            out[k] = v
    return out


_ESCAPES = str.maketrans({"\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r", "\0": "\\0"})


def _literal(v: Any) -> str:
    if isinstance(v, str):
        return "'" + v.translate(_ESCAPES).replace("'", "\\'") + "'"
    return str(v)


def _query_error(exc: Exception, sql: str) -> FlywheelError:
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return FlywheelError(f"ClickHouse error: {msg[:500]}")
