-- Review events on every node (promote/_review.py), replacing
-- promote_review_events (kept, no longer read; its rows are copied here).
-- The same append-only, attributed log: reviewer is the identity of the key
-- that wrote the event. Placement: the EVERY_NODE marker makes it one
-- replicated table on every node of a cluster instead of rows spread by
-- rand() behind a Distributed table, so the fold and the seq read-back of a
-- write read one complete local copy (tests/flywheel/test_cluster_ddl.py).
CREATE TABLE IF NOT EXISTS review_events {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    candidate_id String,
    seq UInt32,
    event_id String,
    kind LowCardinality(String),
    reviewer String,
    base_version UInt32,
    reason String,
    body String,
    task_sha256 String,
    created_at DateTime64(9),
    inserted_at DateTime64(9) DEFAULT now64(9),
    schema_version UInt16 DEFAULT 1
) ENGINE = {{MergeTree}}
ORDER BY (project_id, candidate_id, seq, created_at, event_id) {{EVERY_NODE}};
INSERT INTO review_events
SELECT project_id, candidate_id, seq, event_id, kind, reviewer, base_version, reason, body,
       task_sha256, created_at, inserted_at, schema_version
FROM promote_review_events
