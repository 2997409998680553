"""Numbered SQL migrations, owned by each package, applied once and recorded.

Each package keeps ``<package>/migrations/NNN_name.sql``. A file may hold
several statements separated by ``;`` on its own line end. Engines and
``ON CLUSTER`` are written as placeholders so one DDL serves a single node
and a cluster:

- ``{{ON_CLUSTER}}`` -> ``ON CLUSTER name`` in cluster mode, else nothing;
- ``{{MergeTree}}``, ``{{ReplacingMergeTree(ver)}}`` (any ``*MergeTree``) ->
  the engine, or its ``Replicated*`` form with a Keeper path in cluster mode;
- ``{{OTEL_TABLE}}`` -> the configured span table name.
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

#: Packages in dependency order; each may own a ``migrations/`` folder.
PACKAGES: tuple[str, ...] = ("flywheel", "ingest", "evalset", "promote", "side_effects", "ablation")

_ENGINE = re.compile(r"\{\{(\w*MergeTree)(?:\((.*?)\))?\}\}")
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


def package_migrations(package: str) -> list[Migration]:
    """The migrations of one package, in version order (without importing it)."""
    spec = importlib.util.find_spec(package)
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


def render(sql: str, *, cluster: str | None, otel_table: str = "otel_traces") -> str:
    """Expand the placeholders of a migration for a single node or a cluster."""

    def engine(m: re.Match[str]) -> str:
        name, args = m.group(1), m.group(2)
        if not cluster:
            return f"{name}({args})" if args is not None else name
        path = "'/clickhouse/tables/{shard}/{database}/{table}', '{replica}'"
        inner = f"{path}, {args}" if args else path
        return f"Replicated{name}({inner})"

    sql = _ENGINE.sub(engine, sql)
    sql = sql.replace("{{ON_CLUSTER}}", f"ON CLUSTER {cluster}" if cluster else "")
    return sql.replace("{{OTEL_TABLE}}", otel_table)


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
    for stmt in split_statements(render(LEDGER_DDL, cluster=store.cluster)):
        store.command(stmt)
    done = {
        (r["package"], r["version"]): r["checksum"]
        for r in store.query("SELECT package, version, checksum FROM schema_migrations FINAL")
    }
    applied: list[str] = []
    for package in packages or PACKAGES:
        for mig in package_migrations(package):
            if (package, mig.version) in done:
                continue
            for stmt in split_statements(render(mig.sql, cluster=store.cluster, otel_table=table)):
                try:
                    store.command(stmt)
                except FlywheelError as exc:
                    raise FlywheelError(f"migration {mig.id} failed: {exc}") from exc
            store.insert(
                "schema_migrations",
                {
                    "package": [package],
                    "version": [mig.version],
                    "name": [mig.name],
                    "checksum": [mig.checksum],
                    "applied_at": [time.time_ns()],
                },
            )
            applied.append(mig.id)
    return applied
