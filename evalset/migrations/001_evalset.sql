-- Eval-set tasks, trials and per-criterion grades. Each stored record keeps
-- its schema_version and its full JSON body, so an old record stays
-- readable after a model change; newest write of a key wins.
CREATE TABLE IF NOT EXISTS evalset_tasks {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    evalset_version String,
    task_id String,
    task_version String,
    slice LowCardinality(String),
    golden Bool,
    schema_version UInt16,
    body String,
    written_at DateTime64(3) DEFAULT now64(3)
) ENGINE = {{ReplacingMergeTree(written_at)}}
ORDER BY (project_id, evalset_version, task_id);

CREATE TABLE IF NOT EXISTS evalset_trials {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    trial_id String,
    task_id String,
    task_version String,
    config_id LowCardinality(String),
    environment_id String,
    artifact_digest String,
    trace_id String,
    verdict LowCardinality(String),
    partial_credit Nullable(Float64),
    cost_usd Nullable(Float64),
    tokens Nullable(UInt64),
    latency_s Nullable(Float64),
    schema_version UInt16,
    body String,
    written_at DateTime64(3) DEFAULT now64(3)
) ENGINE = {{ReplacingMergeTree(written_at)}}
ORDER BY (project_id, trial_id);

CREATE TABLE IF NOT EXISTS evalset_grades {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    trial_id String,
    criterion_id String,
    kind LowCardinality(String),
    role LowCardinality(String),
    verdict LowCardinality(String),
    score Nullable(Float64),
    reason String,
    grader_name LowCardinality(String),
    grader_args String,
    written_at DateTime64(3) DEFAULT now64(3)
) ENGINE = {{ReplacingMergeTree(written_at)}}
ORDER BY (project_id, trial_id, criterion_id)
