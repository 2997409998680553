"""The server backend: a ClickHouse server or cluster through clickhouse-connect."""

from __future__ import annotations

import threading
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import pyarrow as pa

from ._store import DEDUP_SETTINGS, Params, Store, _store_error, sql_string
from .errors import FlywheelError, UserError


class ClickHouseStore(Store):
    """A store in a ClickHouse database reached over HTTP."""

    def __init__(self, url: str, *, cluster: str | None = None) -> None:
        super().__init__()
        import clickhouse_connect
        from clickhouse_connect.driver.exceptions import ClickHouseError

        p = urlparse(url)
        query = {k: v[-1] for k, v in parse_qs(p.query).items()}
        self.database = (p.path or "/flywheel").strip("/") or "flywheel"
        if not self.database.replace("_", "").isalnum():
            raise UserError(f"invalid database name {self.database!r} in {url}")
        self.cluster = cluster
        safe_netloc = p.hostname or "localhost"
        self.url = f"{p.scheme}://{safe_netloc}:{p.port or 8123}/{self.database}"
        self._lock = threading.RLock()
        self._errors: tuple[type[Exception], ...] = (ClickHouseError,)
        try:
            admin = clickhouse_connect.get_client(
                host=p.hostname or "localhost",
                port=p.port or 8123,
                username=unquote(p.username or "default"),
                password=unquote(p.password or ""),
                secure=p.scheme in {"clickhouses", "https"},
                connect_timeout=float(query.get("connect_timeout", 10)),
                send_receive_timeout=float(query.get("timeout", 300)),
                compress=query.get("compress", "lz4"),
            )
            on_cluster = f" ON CLUSTER {cluster}" if cluster else ""
            admin.command(f"CREATE DATABASE IF NOT EXISTS {self.database}{on_cluster}")
            admin.database = self.database
        except Exception as exc:
            raise _store_error(self.url, exc) from exc
        self._client = admin
        self._login = (unquote(p.username or "default"), unquote(p.password or ""))

    def dictionary_credentials(self) -> str:
        """This connection's user and password for a dictionary reading the server's own tables.

        Written into the dictionary's DDL (the server masks the password when it
        shows the DDL); nothing for ``default`` without a password, the server's own default.
        A changed password needs the dictionary recreated (ingest migration 013).
        """
        user, password = self._login
        if (user, password) == ("default", ""):
            return ""
        return f"USER {sql_string(user)} PASSWORD {sql_string(password)}"

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            try:
                return fn(*args, **kwargs)
            except self._errors as exc:
                msg = str(exc).strip().splitlines()
                text = next((line for line in msg if "Exception" in line), msg[0] if msg else "")
                if "Connection" in type(exc).__name__ or "OperationalError" in type(exc).__name__:
                    raise _store_error(self.url, exc) from exc
                raise FlywheelError(f"ClickHouse error: {text[:500]}") from exc

    def query_arrow(self, sql: str, params: Params = None) -> pa.Table:
        return self._call(
            self._client.query_arrow,
            sql,
            parameters=dict(params or {}),
            settings={"output_format_arrow_string_as_string": 1},
            use_strings=True,
        )

    def command(self, sql: str, params: Params = None) -> None:
        self._call(self._client.command, sql, parameters=dict(params or {}) or None)

    def _insert_arrow(self, table: str, data: pa.Table, token: str | None) -> None:
        settings = {"insert_deduplication_token": token, **DEDUP_SETTINGS} if token else None
        self._call(self._client.insert_arrow, table, data, settings=settings)

    def close(self) -> None:
        try:
            self._client.close()
        except Exception:  # noqa: BLE001 - closing never raises
            pass
