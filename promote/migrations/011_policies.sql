-- Promotion policies as they were used: one row per policy id
-- (name@version#digest), holding the canonical policy JSON, so a release can
-- copy into its manifest exactly the policies that sampled its tasks.
CREATE TABLE IF NOT EXISTS promote_policies {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    policy_id String,
    name String,
    version UInt32,
    digest String,
    body String,
    first_used DateTime64(9)
) ENGINE = {{ReplacingMergeTree}}
ORDER BY (project_id, policy_id)
