-- The audit log (flywheel/_audit.py): security-relevant actions with actor and
-- time. Append-only. EVERY_NODE: one replicated table on every node.
CREATE TABLE IF NOT EXISTS audit_log {{ON_CLUSTER}} (
    event_id String,
    at DateTime64(9),
    actor String,
    action LowCardinality(String),
    project_id LowCardinality(String),
    target String,
    detail String
) ENGINE = {{MergeTree}}
ORDER BY (at, event_id) {{EVERY_NODE}}
