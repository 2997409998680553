-- Tool semantics per project (flywheel.tools): the manifest a user declares
-- (one row per tool and version; the newest wins, deleted = 1 removes it) and
-- what recorded environments observed about tools' calls (side effects write
-- these: a call that changed state makes its tool a write).
CREATE TABLE IF NOT EXISTS tool_manifest {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    tool_name String,
    entry String,
    deleted UInt8 DEFAULT 0,
    updated_at UInt64
) ENGINE = {{ReplacingMergeTree(updated_at)}}
ORDER BY (project_id, tool_name);

CREATE TABLE IF NOT EXISTS tool_observations {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    tool_name String,
    trace_id String,
    changed_state UInt8,
    calls UInt32,
    evidence String,
    observed_at UInt64
) ENGINE = {{ReplacingMergeTree(observed_at)}}
ORDER BY (project_id, tool_name, trace_id);
