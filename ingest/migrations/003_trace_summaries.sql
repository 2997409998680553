-- One row per trace, kept up to date by a view on agent_steps as spans of a
-- trace arrive in any number of batches (read with GROUP BY / FINAL).
CREATE TABLE IF NOT EXISTS trace_summaries {{ON_CLUSTER}} (
    project_id LowCardinality(String),
    trace_id String,
    service_name SimpleAggregateFunction(max, String),
    root_name SimpleAggregateFunction(max, String),
    session_id SimpleAggregateFunction(max, String),
    outcome SimpleAggregateFunction(max, String),
    start_time SimpleAggregateFunction(min, DateTime64(9)),
    end_time SimpleAggregateFunction(max, DateTime64(9)),
    span_count SimpleAggregateFunction(sum, UInt64),
    error_count SimpleAggregateFunction(sum, UInt64),
    tool_calls SimpleAggregateFunction(sum, UInt64),
    input_tokens SimpleAggregateFunction(sum, UInt64),
    output_tokens SimpleAggregateFunction(sum, UInt64),
    total_tokens SimpleAggregateFunction(sum, UInt64),
    cost SimpleAggregateFunction(sum, Float64),
    tool_names SimpleAggregateFunction(groupUniqArrayArray, Array(String))
) ENGINE = {{AggregatingMergeTree}}
ORDER BY (project_id, trace_id)
SETTINGS non_replicated_deduplication_window = 10000;

CREATE MATERIALIZED VIEW IF NOT EXISTS trace_summaries_mv {{ON_CLUSTER}} TO trace_summaries AS
SELECT
    project_id,
    trace_id,
    max(if(s.parent_span_id = '', s.service_name, '')) AS service_name,
    max(if(parent_span_id = '', span_name, '')) AS root_name,
    max(s.session_id) AS session_id,
    '' AS outcome,
    min(s.start_time) AS start_time,
    max(s.start_time + toIntervalNanosecond(s.duration_ns)) AS end_time,
    count() AS span_count,
    countIf(status = 'error') AS error_count,
    countIf(kind = 'tool') AS tool_calls,
    sum(s.input_tokens) AS input_tokens,
    sum(s.output_tokens) AS output_tokens,
    sum(s.total_tokens) AS total_tokens,
    sum(s.cost) AS cost,
    groupUniqArrayIf(toString(tool_name), tool_name != '') AS tool_names
FROM agent_steps AS s
GROUP BY project_id, trace_id;
