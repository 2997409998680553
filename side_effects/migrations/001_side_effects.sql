-- One row per classified delta of a trial (net and transient), with its status,
-- the rule that decided it, categories, tier and the call it was attributed to.
CREATE TABLE IF NOT EXISTS side_effect_deltas {{ON_CLUSTER}} (
    project_id LowCardinality(String) DEFAULT 'default',
    trial_id String,
    trace_id String DEFAULT '',
    ordinal UInt32,
    kind LowCardinality(String),
    resource_type String,
    key Array(String),
    changes String,
    status LowCardinality(String),
    rule_id String,
    reason String,
    categories Array(LowCardinality(String)),
    category_rules Array(String),
    tier LowCardinality(String),
    transient UInt8,
    span_id String DEFAULT '',
    attribution String DEFAULT '',
    schema_version UInt16 DEFAULT 1,
    created_at DateTime64(9)
) ENGINE = {{MergeTree}}
ORDER BY (project_id, trial_id, ordinal);

-- One row per trial: counts, critical events per category (the gate's input),
-- reconciliation findings, the scope and profile used, and state digests.
CREATE TABLE IF NOT EXISTS side_effect_results {{ON_CLUSTER}} (
    project_id LowCardinality(String) DEFAULT 'default',
    trial_id String,
    trace_id String DEFAULT '',
    intended UInt32,
    benign UInt32,
    unauthorized UInt32,
    critical Map(LowCardinality(String), UInt32),
    blocking UInt8,
    unexplained UInt32,
    writes_without_effect UInt32,
    profile String,
    scope String,
    s0_digest String,
    st_digest String,
    schema_version UInt16 DEFAULT 1,
    created_at DateTime64(9)
) ENGINE = {{ReplacingMergeTree(created_at)}}
ORDER BY (project_id, trial_id)
