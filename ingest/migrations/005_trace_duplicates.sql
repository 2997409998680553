-- Traces with a span id stored more than once (an exporter's retry, a resend,
-- duplicate span ids with other content). The span writer and the file
-- importer mark a trace before inserting such spans (ingest/_duplicates.py);
-- the trace list computes marked traces from their de-duplicated spans
-- instead of the trace_summaries sums (ingest/_read.py). Spans a collector
-- writes straight into the span table are not checked.
CREATE TABLE IF NOT EXISTS trace_duplicates {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    trace_id String,
    marked_at DateTime64(3) DEFAULT now64(3)
) ENGINE = {{ReplacingMergeTree(marked_at)}}
ORDER BY (project_id, trace_id);

-- Traces that hold duplicates already when this migration runs.
INSERT INTO trace_duplicates (project_id, trace_id)
SELECT DISTINCT project_id, trace_id FROM (
    SELECT project_id, trace_id FROM agent_steps
    GROUP BY project_id, trace_id, span_id HAVING count() > 1
);
