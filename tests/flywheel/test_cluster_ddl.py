"""Cluster mode: every migration renders to local Replicated tables behind
Distributed tables, ON CLUSTER, and the SQL parses (checked by chDB's parser)."""

from __future__ import annotations

import re

from flywheel import PACKAGES, package_migrations
from flywheel._migrations import LEDGER_DDL, Migration, migration_statements


def _all_cluster_statements() -> list[str]:
    tables: set[str] = set()
    out = migration_statements(Migration("flywheel", 0, "ledger", LEDGER_DDL), cluster="fw",
                               otel_table="otel_traces", tables=tables)
    for pkg in PACKAGES:
        for mig in package_migrations(pkg):
            out += migration_statements(mig, cluster="fw", otel_table="otel_traces", tables=tables)
    return out


def test_cluster_ddl_shape():
    stmts = _all_cluster_statements()
    creates = [s for s in stmts if s.startswith("CREATE TABLE")]
    assert creates, "no tables"
    for s in creates:
        assert " ON CLUSTER fw " in s
        if "ENGINE = Distributed" in s:
            continue
        name = re.match(r"CREATE TABLE IF NOT EXISTS (\w+)", s).group(1)
        assert name.endswith("_local"), name
        assert re.search(r"ENGINE = Replicated\w*MergeTree", s), s[:200]
    dist = {re.match(r"CREATE TABLE IF NOT EXISTS (\w+)", s).group(1): s for s in creates
            if "Distributed" in s}
    assert "cityHash64(TraceId)" in dist["otel_traces"]
    assert "cityHash64(trace_id)" in dist["agent_steps"]
    for s in stmts:
        if s.startswith("CREATE MATERIALIZED VIEW"):
            assert re.search(r" ON CLUSTER fw\s", s)
            assert re.search(r"\bTO \w+_local\b", s) and re.search(r"\bFROM \w+_local\b", s), s[:300]


def test_cluster_ddl_parses(store):
    for s in _all_cluster_statements():
        formatted = store.scalar("SELECT formatQuerySingleLine({q:String})", {"q": s})
        assert formatted


def test_single_node_ddl_has_no_cluster_artifacts():
    for pkg in PACKAGES:
        for mig in package_migrations(pkg):
            for s in migration_statements(mig, cluster=None, otel_table="otel_traces"):
                assert "{{" not in s and "ON CLUSTER" not in s and "Replicated" not in s
