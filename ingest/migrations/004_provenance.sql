-- Argument provenance per tool-call argument leaf (recomputed idempotently:
-- the newest computation of a (trace, span, path) wins), and the per-project
-- salt of the value fingerprints.
CREATE TABLE IF NOT EXISTS argument_provenance {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    trace_id String,
    span_id String,
    tool_name LowCardinality(String),
    path String,
    source_kind LowCardinality(String),
    source_span_id String,
    source_ref String,
    method LowCardinality(String),
    confidence Float32,
    trusted Bool,
    ambiguous Bool,
    alternatives Array(String),
    flags Array(LowCardinality(String)),
    extraction LowCardinality(String),
    computed_at DateTime64(3) DEFAULT now64(3)
) ENGINE = {{ReplacingMergeTree(computed_at)}}
ORDER BY (project_id, trace_id, span_id, path);

CREATE TABLE IF NOT EXISTS project_salts {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    salt String,
    created_at DateTime64(3) DEFAULT now64(3)
) ENGINE = {{ReplacingMergeTree}}
ORDER BY project_id;
