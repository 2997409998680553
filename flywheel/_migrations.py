"""Numbered SQL migrations, owned by each package, applied once and recorded.

Each package keeps ``<package>/migrations/NNN_name.sql``. A file may hold
several statements separated by ``;`` on its own line end. Engines and
``ON CLUSTER`` are written as placeholders so one DDL serves a single node
and a cluster:

- ``{{ON_CLUSTER}}`` -> ``ON CLUSTER name`` in cluster mode, else nothing;
- ``{{MergeTree}}``, ``{{ReplacingMergeTree(ver)}}`` (any ``*MergeTree``) ->
  the engine, or its ``Replicated*`` form in cluster mode (Keeper path and
  replica name from the server's ``default_replica_path`` /
  ``default_replica_name``, see deploy/clickhouse);
- ``{{OTEL_TABLE}}`` -> the configured span table name;
- ``{{SELF_CREDENTIALS}}`` -> what a dictionary reading this store's own tables
  (``SOURCE(CLICKHOUSE(TABLE ...))``) authenticates with: the store's own user
  and password on a server (``Store.dictionary_credentials``), nothing on the
  embedded engine. A server's dictionary over a local table logs in as
  ``default`` with no password unless told otherwise, which a deployment with
  its own user (deploy/compose.yaml) refuses.

Cluster mode also puts a ``Distributed`` table in front of every table: the
replicated data lives in ``NAME_local`` on each shard, ``NAME`` routes
inserts and fans reads out. Materialized views read and write the local
tables, so normalisation runs on each shard. Where a row goes:

- a table with a trace id (``TraceId`` / ``trace_id``) is sharded by it, so
  a trace stays on one shard and its views stay complete (unless it is a
  ``Replacing`` table whose sorting key does not hold the trace id, below);
- a ``Replacing*MergeTree`` is sharded by its sorting key: the rows that
  replace each other meet on one shard, which is where ``FINAL`` collapses
  them (``FINAL`` through a ``Distributed`` table works shard by shard);
- a small control table marked ``{{EVERY_NODE}}`` (keys, the audit log,
  review events, releases) is not distributed at all: one ``Replicated``
  table per node in a single replication group spanning every shard
  (Keeper path ``EVERY_NODE_PATH``), so each server reads a complete local
  copy and a row written on any node reaches every node;
- any other (append-only) table is spread by ``rand()``: its reads never
  depend on where a row is.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import FlywheelError

if TYPE_CHECKING:
    from ._store import Store

#: Packages in dependency order; each may own a ``migrations/`` folder. The
#: ledger records these short names; the modules live under ``flywheel.``.
PACKAGES: tuple[str, ...] = (
    "flywheel", "ingest", "evalset", "promote", "side_effects",
    "harness", "attribution", "safety", "ablation",
)

_ENGINE = re.compile(r"\{\{(\w*MergeTree)(?:\((.*?)\))?\}\}")
EVERY_NODE = "{{EVERY_NODE}}"
#: Keeper path of a table replicated on every node: one group, no ``{shard}``.
EVERY_NODE_PATH = "/clickhouse/tables/all/{database}/{table}"
_FILE = re.compile(r"^(\d{3,})_[\w-]+\.sql$")

LEDGER_DDL = """
CREATE TABLE IF NOT EXISTS schema_migrations {{ON_CLUSTER}} (
    package LowCardinality(String),
    version UInt32,
    name String,
    checksum String,
    applied_at DateTime64(3) DEFAULT now64(3)
) ENGINE = {{ReplacingMergeTree(applied_at)}} ORDER BY (package, version)
"""


@dataclass(frozen=True)
class Migration:
    """One numbered SQL file of one package."""

    package: str
    version: int
    name: str
    sql: str

    @property
    def checksum(self) -> str:
        """SHA-256 of the file text, to notice an edited applied migration."""
        return hashlib.sha256(self.sql.encode()).hexdigest()

    @property
    def id(self) -> str:
        """``package:NNN_name``."""
        return f"{self.package}:{self.name}"


def module_name(package: str) -> str:
    """The importable module of a package's short name (``ingest`` -> ``flywheel.ingest``)."""
    return package if package == "flywheel" else f"flywheel.{package}"


def package_migrations(package: str) -> list[Migration]:
    """The migrations of one package, in version order (without importing it)."""
    spec = importlib.util.find_spec(module_name(package))
    if spec is None or not spec.submodule_search_locations:
        return []
    folder = Path(next(iter(spec.submodule_search_locations))) / "migrations"
    if not folder.is_dir():
        return []
    found = []
    for f in sorted(folder.iterdir()):
        m = _FILE.match(f.name)
        if m:
            found.append(Migration(package, int(m.group(1)), f.stem, f.read_text()))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise FlywheelError(f"package {package} has two migrations with one number")
    return found


def render(sql: str, *, cluster: str | None, otel_table: str = "otel_traces",
           credentials: str = "") -> str:
    """Expand the placeholders of a migration (or one statement) for a single node or a cluster.

    In cluster mode a statement marked ``{{EVERY_NODE}}`` gets its engine's
    Keeper path and replica name spelled out (``EVERY_NODE_PATH``), which is
    what ``cluster_statements`` recognises.
    """
    every = cluster is not None and EVERY_NODE in sql

    def engine(m: re.Match[str]) -> str:
        name, args = m.group(1), m.group(2)
        if cluster:
            name = f"Replicated{name}"
            if every:
                args = ", ".join(a for a in (f"'{EVERY_NODE_PATH}'", "'{replica}'", args) if a)
        return f"{name}({args})" if args is not None else name

    sql = _ENGINE.sub(engine, sql).replace(EVERY_NODE, "")
    sql = sql.replace("{{ON_CLUSTER}}", f"ON CLUSTER {cluster}" if cluster else "")
    return sql.replace("{{OTEL_TABLE}}", otel_table).replace("{{SELF_CREDENTIALS}}", credentials)


_CREATE_TABLE = re.compile(r"^CREATE TABLE IF NOT EXISTS (\w+) ", re.IGNORECASE)
_CREATE_VIEW = re.compile(r"^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) ", re.IGNORECASE)
_ALTER = re.compile(r"^ALTER TABLE (\w+) ", re.IGNORECASE)


def cluster_statements(stmt: str, cluster: str, tables: set[str]) -> list[str]:
    """Rewrite one rendered statement for cluster mode (local + Distributed).

    ``tables`` collects the names of platform tables seen so far; views and
    ALTERs that name them are pointed at the local tables.
    """
    m = _CREATE_TABLE.match(stmt)
    if m:
        name = m.group(1)
        if f"'{EVERY_NODE_PATH}'" in stmt:
            return [stmt]  # replicated on every node under its own name; nothing in front
        tables.add(name)
        local = f"{name}_local"
        key = sharding_key(stmt)
        return [
            _CREATE_TABLE.sub(f"CREATE TABLE IF NOT EXISTS {local} ", stmt, count=1),
            f"CREATE TABLE IF NOT EXISTS {name} ON CLUSTER {cluster} AS {local} "
            f"ENGINE = Distributed({cluster}, currentDatabase(), {local}, {key})",
        ]
    if _CREATE_VIEW.match(stmt):
        for name in sorted(tables, key=len, reverse=True):
            stmt = re.sub(rf"\b(TO|FROM) {name}\b(?!_local)", rf"\1 {name}_local", stmt)
        return [stmt]
    m = _ALTER.match(stmt)
    if m and m.group(1) in tables:
        name = m.group(1)
        return [_ALTER.sub(f"ALTER TABLE {name}_local ", stmt, count=1), stmt]
    return [stmt]


_ORDER_BY = re.compile(r"\bORDER BY\s+(\([^()]*\)|\w+)", re.IGNORECASE)


def sharding_key(stmt: str) -> str:
    """The ``Distributed`` sharding expression of one rendered ``CREATE TABLE``."""
    order = _ORDER_BY.search(stmt)
    columns = [c.strip() for c in order.group(1).strip("()").split(",")] if order else []
    trace = next((c for c in ("TraceId", "trace_id") if re.search(rf"\b{c} String", stmt)), None)
    if re.search(r"ENGINE = \w*ReplacingMergeTree", stmt) and columns and trace not in columns:
        return f"cityHash64({', '.join(columns)})"
    if trace:
        return f"cityHash64({trace})"
    return "rand()"


def migration_statements(mig: Migration, *, cluster: str | None, otel_table: str,
                         tables: set[str] | None = None, credentials: str = "") -> list[str]:
    """The statements a migration runs, for a single node or a cluster."""
    stmts = [render(stmt, cluster=cluster, otel_table=otel_table, credentials=credentials)
             for stmt in split_statements(mig.sql)]
    if not cluster:
        return stmts
    tables = tables if tables is not None else set()
    return [out for stmt in stmts for out in cluster_statements(stmt, cluster, tables)]


def split_statements(sql: str) -> list[str]:
    """Split a file at ``;`` that ends a line; drop comments-only parts."""
    parts = re.split(r";\s*(?:\n|$)", sql)
    out = []
    for part in parts:
        body = "\n".join(
            line for line in part.splitlines() if not line.strip().startswith("--")
        ).strip()
        if body:
            out.append(body)
    return out


def apply_migrations(
    store: Store, packages: Sequence[str] | None = None, *, otel_table: str | None = None
) -> list[str]:
    """Apply pending migrations of ``packages`` (default: all) in order."""
    table = otel_table or getattr(store, "otel_table", "otel_traces")
    tables: set[str] = set()
    ledger = Migration("flywheel", 0, "ledger", LEDGER_DDL)
    for stmt in migration_statements(ledger, cluster=store.cluster, otel_table=table, tables=tables):
        store.command(stmt)
    done = {
        (r["package"], r["version"]): r["checksum"]
        for r in store.query("SELECT package, version, checksum FROM schema_migrations FINAL")
    }
    applied: list[str] = []
    for package in packages or PACKAGES:
        for mig in package_migrations(package):
            stmts = migration_statements(mig, cluster=store.cluster, otel_table=table,
                                         tables=tables, credentials=store.dictionary_credentials())
            if (package, mig.version) in done:
                continue
            for stmt in stmts:
                try:
                    store.command(stmt)
                except FlywheelError as exc:
                    raise FlywheelError(f"migration {mig.id} failed: {exc}") from exc
            # one row through bound parameters: an Arrow insert would load chDB's
            # Python() table function (and pandas) just to record a migration
            store.command(
                "INSERT INTO schema_migrations (package, version, name, checksum, applied_at) "
                "SELECT {package:String}, {version:UInt32}, {name:String}, {checksum:String}, "
                "fromUnixTimestamp64Nano({at:Int64})",
                {"package": package, "version": mig.version, "name": mig.name,
                 "checksum": mig.checksum, "at": time.time_ns()},
            )
            applied.append(mig.id)
    return applied
