-- Promotion candidates and their review (promote/_candidates.py, _review.py).
--
-- promote_candidates: one row per candidate and pipeline stage; the newest
-- row of a candidate wins (ReplacingMergeTree on updated_at). Holds only
-- redacted text: the redacted steps, the redaction report (types, paths,
-- counts; never values) and the drafted task as JSON.
CREATE TABLE IF NOT EXISTS promote_candidates {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    candidate_id String,
    trace_id String,
    evalset LowCardinality(String),
    source LowCardinality(String),
    reasons Array(String),
    slice String,
    policy_id String,
    policy_version UInt32,
    stage LowCardinality(String),
    cluster_id String,
    cluster_size UInt64,
    duplicate_of String,
    redacted_steps String,
    redaction_report String,
    draft String,
    sampled_at DateTime64(9),
    updated_at DateTime64(9),
    schema_version UInt16 DEFAULT 1
) ENGINE = {{ReplacingMergeTree(updated_at)}}
ORDER BY (project_id, candidate_id);

-- Review events: append-only and attributed. Each event carries the review
-- version it saw (base_version) and takes seq = base_version + 1; a second
-- event with the same seq lost the race and is ignored when the state is
-- folded (its writer got a 409). Never updated, never deleted.
CREATE TABLE IF NOT EXISTS promote_review_events {{ON_CLUSTER}} (
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
ORDER BY (project_id, candidate_id, seq, created_at, event_id);

-- Approved tasks, the hand-over to `flywheel evalset release`: one row per
-- (eval set, task); the newest row wins; a withdrawn row (the candidate was
-- edited, rejected or reopened after its approval) keeps it out of releases.
CREATE TABLE IF NOT EXISTS approved_tasks {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    evalset LowCardinality(String),
    task_id String,
    candidate_id String,
    trace_id String,
    body String,
    task_sha256 String,
    approved_by String,
    review_version UInt32,
    withdrawn Bool,
    updated_at DateTime64(9),
    schema_version UInt16 DEFAULT 1
) ENGINE = {{ReplacingMergeTree(updated_at)}}
ORDER BY (project_id, evalset, task_id)
