"""Cluster mode: where every table lives, and why key state is right on every shard.

Every migration renders to ``Replicated*`` tables created ``ON CLUSTER``; the
SQL parses (chDB's parser). Placement (``flywheel/_migrations.py``):

================== ======================================================= =====================
control table      lives                                                    why
================== ======================================================= =====================
auth_keys          every node: one replicated table, one Keeper group       access checks read a
audit_log          spanning all shards (``/clickhouse/tables/all/...``),    complete local copy;
review_events      no Distributed table in front                           a row written on any
evalset_releases                                                            node reaches all
approved_tasks     sharded by its sorting key (project, evalset, task)      FINAL collapses per
schema_migrations  sharded by (package, version)                            shard: the rows that
attributions       sharded by trace id; a judge's calibration is the row    replace each other
 (calibrations)    ``calibration:<judge>``, so one judge -> one shard       meet on one shard
================== ======================================================= =====================

Why a revocation is visible from every shard: a key's state is never read
with ``FINAL`` (which collapses rows only within one shard behind a
``Distributed`` table, the bug of the old ``api_keys`` sharded by
``rand()``). ``auth_keys`` is append-only; a revocation is one more row, and
the access read aggregates every row of a key (``max(revoked)``): revoked
once is revoked, whichever rows a replica or shard holds and whether merges
ran or not. The table is replicated to every node, so each server's read of
its local copy holds the revoke row once replication delivers it (Keeper;
typically well under a second), and the key cache reloads every 5 s.
``test_key_state_is_right_whatever_holds_the_revoke_row`` runs the very
access query over two tables standing for two shards (``merge()``, the way
a Distributed table fans out) and shows the old per-shard FINAL read keeping
the revoked key live.
"""

from __future__ import annotations

import re

from flywheel import PACKAGES, Store, package_migrations
from flywheel._auth import KEY_STATE_SQL
from flywheel._migrations import (
    EVERY_NODE_PATH,
    LEDGER_DDL,
    Migration,
    migration_statements,
)

CONTROL_EVERY_NODE = {"auth_keys", "audit_log", "review_events", "evalset_releases"}


def _all_cluster_statements() -> list[str]:
    tables: set[str] = set()
    out = migration_statements(Migration("flywheel", 0, "ledger", LEDGER_DDL), cluster="fw",
                               otel_table="otel_traces", tables=tables)
    for pkg in PACKAGES:
        for mig in package_migrations(pkg):
            out += migration_statements(mig, cluster="fw", otel_table="otel_traces", tables=tables)
    return out


def _name(stmt: str) -> str:
    return re.match(r"CREATE TABLE IF NOT EXISTS (\w+)", stmt).group(1)


def placement() -> dict[str, str]:
    """table -> ``every node`` or the sharding expression of its Distributed table."""
    out = {}
    for s in _all_cluster_statements():
        if not s.startswith("CREATE TABLE"):
            continue
        m = re.search(r"ENGINE = Distributed\(fw, currentDatabase\(\), \w+, (.+)\)$", s)
        if m:
            out[_name(s)] = m.group(1)
        elif f"'{EVERY_NODE_PATH}'" in s:
            out[_name(s)] = "every node"
    return out


def test_cluster_ddl_shape() -> None:
    stmts = _all_cluster_statements()
    creates = [s for s in stmts if s.startswith("CREATE TABLE")]
    assert creates, "no tables"
    every = set()
    for s in creates:
        assert " ON CLUSTER fw " in s
        if "ENGINE = Distributed" in s:
            continue
        assert re.search(r"ENGINE = Replicated\w*MergeTree", s), s[:200]
        if f"'{EVERY_NODE_PATH}'" in s:
            every.add(_name(s))
            assert "'{replica}'" in s and "{shard}" not in s
        else:
            assert _name(s).endswith("_local"), _name(s)
    assert every == CONTROL_EVERY_NODE
    dist = {_name(s): s for s in creates if "Distributed" in s}
    assert not CONTROL_EVERY_NODE & set(dist), "a control table is behind a Distributed table"
    assert "cityHash64(TraceId)" in dist["otel_traces"]
    assert "cityHash64(trace_id)" in dist["agent_steps"]
    for s in stmts:
        if s.startswith("CREATE MATERIALIZED VIEW"):
            assert re.search(r" ON CLUSTER fw\s", s)
            assert re.search(r"\bTO \w+_local\b", s) and re.search(r"\bFROM \w+_local\b", s), s[:300]
        for table in CONTROL_EVERY_NODE:
            assert not re.search(rf"\b{table}_local\b", s), s[:200]


def test_where_each_control_table_lives() -> None:
    where = placement()
    for table in CONTROL_EVERY_NODE:
        assert where[table] == "every node", table
    assert where["approved_tasks"] == "cityHash64(project_id, evalset, task_id)"
    assert where["schema_migrations"] == "cityHash64(package, version)"
    assert where["attributions"] == "cityHash64(trace_id)"  # calibration:<judge> -> one shard
    # no table whose rows replace each other is spread at random: FINAL would miss duplicates
    for s in _all_cluster_statements():
        if s.startswith("CREATE TABLE") and re.search(r"ReplicatedReplacingMergeTree", s):
            name = _name(s).removesuffix("_local")
            assert name in where and where[name] != "rand()", name
    assert where["api_keys"] == "cityHash64(key_id)"  # superseded by auth_keys, no longer read


def test_key_state_is_right_whatever_holds_the_revoke_row(store: Store) -> None:
    """Two tables stand for two shards; the revoke row is on the 'other' shard."""
    cols = ("key_id String, key_hash String, project_id LowCardinality(String), identity String,"
            " scopes Array(LowCardinality(String)), revoked UInt8, actor String, at DateTime64(9)")
    for shard in ("keys_shard_1", "keys_shard_2"):
        store.command(f"CREATE TABLE {shard} ({cols}) ENGINE = MergeTree ORDER BY (key_id, at)")
    row = {"key_id": ["k1"], "key_hash": ["h"], "project_id": ["p"], "identity": ["alice"],
           "scopes": [["read"]], "actor": ["op"]}
    store.insert("keys_shard_1", {**row, "revoked": [0], "at": [1_000]})
    store.insert("keys_shard_2", {**row, "revoked": [1], "at": [2_000]})
    fan_out = "merge(currentDatabase(), '^keys_shard_[12]$')"
    live = store.query(KEY_STATE_SQL.format(table=fan_out, where="", having="HAVING is_revoked = 0"))
    assert live == []  # the access check: revoked
    state = store.query(KEY_STATE_SQL.format(table=fan_out, where="", having=""))
    assert [(r["key_id"], r["is_revoked"], r["k_identity"]) for r in state] == [("k1", 1, "alice")]
    # the old read (api_keys FINAL WHERE revoked = 0) as a Distributed table runs it: FINAL
    # on each shard, the shards' answers together -> the revoked key stays live
    for shard, revoked, at in (("old_shard_1", 0, 1_000), ("old_shard_2", 1, 2_000)):
        store.command(f"CREATE TABLE {shard} (key_id String, revoked UInt8, at DateTime64(9))"
                      " ENGINE = ReplacingMergeTree(at) ORDER BY key_id")
        store.insert(shard, {"key_id": ["k1"], "revoked": [revoked], "at": [at]})
    old = store.query("SELECT key_id FROM old_shard_1 FINAL WHERE revoked = 0 UNION ALL"
                      " SELECT key_id FROM old_shard_2 FINAL WHERE revoked = 0")
    assert [r["key_id"] for r in old] == ["k1"]
    # order of arrival does not matter either: the revoke row first, the creation row later
    store.command("TRUNCATE TABLE keys_shard_1")
    store.command("TRUNCATE TABLE keys_shard_2")
    store.insert("keys_shard_1", {**row, "revoked": [1], "at": [2_000]})
    store.insert("keys_shard_2", {**row, "revoked": [0], "at": [3_000]})
    assert store.query(KEY_STATE_SQL.format(table=fan_out, where="", having="HAVING is_revoked = 0")) == []


def test_cluster_ddl_parses(store: Store) -> None:
    for s in _all_cluster_statements():
        formatted = store.scalar("SELECT formatQuerySingleLine({q:String})", {"q": s})
        assert formatted


def test_single_node_ddl_has_no_cluster_artifacts() -> None:
    for pkg in PACKAGES:
        for mig in package_migrations(pkg):
            for s in migration_statements(mig, cluster=None, otel_table="otel_traces"):
                assert "{{" not in s and "ON CLUSTER" not in s and "Replicated" not in s
