-- Project API keys with scopes and identities (flywheel/_auth.py), replacing
-- api_keys (kept, no longer read). One row per change of a key: created
-- (revoked = 0) or revoked (revoked = 1, actor = who revoked it); the key's
-- state is the aggregate of its rows (max(revoked)), never FINAL.
-- Placement: the EVERY_NODE marker makes it one replicated table on every node of a
-- cluster (no Distributed table, not sharded), so a revocation written on any
-- node reaches every node's local copy and each server's access check reads
-- its local copy (see tests/flywheel/test_cluster_ddl.py).
CREATE TABLE IF NOT EXISTS auth_keys {{ON_CLUSTER}} (
    key_id String,
    key_hash String,
    project_id LowCardinality(String),
    identity String,
    scopes Array(LowCardinality(String)),
    revoked UInt8 DEFAULT 0,
    actor String,
    at DateTime64(9)
) ENGINE = {{MergeTree}}
ORDER BY (key_id, at) {{EVERY_NODE}};
-- The keys created before scopes existed keep what they could do (write spans,
-- read, review); none becomes an admin key.
INSERT INTO auth_keys (key_id, key_hash, project_id, identity, scopes, revoked, actor, at)
SELECT key_id, argMin(key_hash, created_at), argMin(project_id, created_at),
       if(argMin(name, created_at) = '', concat('key:', key_id), argMin(name, created_at)),
       ['ingest', 'read', 'review'], max(revoked), 'migration:flywheel:002',
       toDateTime64(min(created_at), 9)
FROM api_keys GROUP BY key_id
