-- Failure attributions: one row per (trace, attributor); recomputing replaces
-- it (the newest computed_at wins under FINAL). Labels of labelled corpora
-- stay on the spans and are never copied here.
CREATE TABLE IF NOT EXISTS attributions {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    trace_id String,
    attributor LowCardinality(String),
    version String,
    failed Bool,
    category LowCardinality(String),
    outcome LowCardinality(String),
    surfaced_span_id String,
    surfaced_index Int32,
    causal_span_id String,
    causal_index Int32,
    agent String,
    confidence Float32,
    evidence String,
    signals Array(LowCardinality(String)),
    service_name LowCardinality(String),
    computed_at DateTime64(3) DEFAULT now64(3)
) ENGINE = {{ReplacingMergeTree(computed_at)}}
ORDER BY (project_id, trace_id, attributor);
