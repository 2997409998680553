-- Token usage counted once (ingest/_usage.py states the rule per convention):
-- model-call steps (kind 'llm') are summed; usage on any other step is an
-- aggregate of the calls beneath it (a root's episode total, pydantic-ai's
-- aggregated_usage, smolagents' run), kept as a per-trace maximum and used
-- only when no model call reports that quantity. The view is recreated:
-- rows it wrote before this migration keep their old sums (no backfill).
ALTER TABLE trace_summaries {{ON_CLUSTER}}
    ADD COLUMN IF NOT EXISTS agg_input_tokens SimpleAggregateFunction(max, UInt64),
    ADD COLUMN IF NOT EXISTS agg_output_tokens SimpleAggregateFunction(max, UInt64),
    ADD COLUMN IF NOT EXISTS agg_total_tokens SimpleAggregateFunction(max, UInt64),
    ADD COLUMN IF NOT EXISTS agg_cost SimpleAggregateFunction(max, Float64);

DROP VIEW IF EXISTS trace_summaries_mv {{ON_CLUSTER}};

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
    sumIf(s.input_tokens, s.kind = 'llm') AS input_tokens,
    sumIf(s.output_tokens, s.kind = 'llm') AS output_tokens,
    sumIf(s.total_tokens, s.kind = 'llm') AS total_tokens,
    sumIf(s.cost, s.kind = 'llm') AS cost,
    groupUniqArrayIf(toString(tool_name), tool_name != '') AS tool_names,
    maxIf(s.input_tokens, s.kind != 'llm') AS agg_input_tokens,
    maxIf(s.output_tokens, s.kind != 'llm') AS agg_output_tokens,
    maxIf(s.total_tokens, s.kind != 'llm') AS agg_total_tokens,
    maxIf(s.cost, s.kind != 'llm') AS agg_cost
FROM agent_steps AS s
GROUP BY project_id, trace_id;
