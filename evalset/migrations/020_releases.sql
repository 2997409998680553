-- Released eval-set versions (evalset/_bundle.py, release_from_store): who
-- released which version, when, from which parent. The bundle on disk stays
-- the source of truth (releases.jsonl beside it); this row makes a release
-- visible to every server. Placement: the EVERY_NODE marker makes it one
-- replicated table on every node of a cluster.
CREATE TABLE IF NOT EXISTS evalset_releases {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    evalset LowCardinality(String),
    version String,
    parent String,
    sequence UInt32,
    tasks UInt32,
    released_by String,
    released_at DateTime64(9)
) ENGINE = {{ReplacingMergeTree(released_at)}}
ORDER BY (project_id, evalset, version) {{EVERY_NODE}}
