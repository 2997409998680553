-- Agent steps keep their text in the span table (issue 24): a step's tool
-- arguments and result and a model step's input and output are computed from its
-- span's attributes when read, instead of being copied into agent_steps at ingest.
-- Those four columns were most of the bytes agent_steps wrote, compressed and
-- merged again (bench/ingest_store_cost.py). Readers see no change: the columns
-- `arguments`, `result`, `input` and `output` of agent_steps are now ALIAS
-- columns; a step written from here on (text_in_spans = 1) reads its text from
-- the view agent_step_texts through the direct dictionary agent_step_texts_dict,
-- keyed by the span (trace id, span id, a hash of its attributes, its step
-- kind), which picks the very span row the step was made from even when a span
-- id was stored twice; a step written before this migration keeps the text the
-- earlier view stored (stored_arguments, ...). The text expressions are those of
-- 012_message_attributes.sql, unchanged; a later change to them is a new view
-- and a new text_in_spans value.
DROP VIEW IF EXISTS agent_steps_mv {{ON_CLUSTER}};

ALTER TABLE agent_steps {{ON_CLUSTER}}
    ADD COLUMN IF NOT EXISTS text_in_spans UInt8 DEFAULT 0,
    ADD COLUMN IF NOT EXISTS attributes_hash UInt64 DEFAULT 0;

ALTER TABLE agent_steps {{ON_CLUSTER}}
    RENAME COLUMN IF EXISTS arguments TO stored_arguments,
    RENAME COLUMN IF EXISTS result TO stored_result,
    RENAME COLUMN IF EXISTS input TO stored_input,
    RENAME COLUMN IF EXISTS output TO stored_output;

-- One row per span row: its step kind (as agent_steps_mv computes it) and text.
CREATE VIEW IF NOT EXISTS agent_step_texts {{ON_CLUSTER}} AS
WITH
    SpanAttributes AS a,
    a['gen_ai.operation.name'] AS op,
    lower(a['openinference.span.kind']) AS oi,
    lower(a['traceloop.span.kind']) AS tl,
    lower(a['langfuse.observation.type']) AS lf,
    lower(a['flywheel.step.kind']) AS explicit,
    multiIf(
        explicit != '', explicit,
        op = 'execute_tool' OR oi = 'tool' OR tl = 'tool' OR lf = 'tool', 'tool',
        op IN ('chat', 'text_completion', 'generate_content', 'embeddings')
            OR oi IN ('llm', 'embedding') OR lf IN ('generation', 'embedding')
            OR a['llm.request.type'] != '', 'llm',
        op IN ('invoke_agent', 'create_agent') OR oi = 'agent'
            OR tl IN ('agent', 'workflow') OR lf IN ('agent', 'chain') AND ParentSpanId = '', 'agent',
        op IN ('retrieval', 'search') OR oi IN ('retriever', 'reranker') OR lf = 'retriever', 'retrieval',
        op IN ('memory_read', 'search_memory') OR a['flywheel.memory.operation'] = 'read', 'memory_read',
        op IN ('memory_write', 'update_memory') OR a['flywheel.memory.operation'] = 'write', 'memory_write',
        oi = 'guardrail' OR lf = 'guardrail' OR op = 'apply_guardrail', 'guardrail',
        a['gen_ai.tool.name'] != '', 'tool',
        'other') AS step_kind,
    if(step_kind = 'tool', arrayFirst(x -> x != '', [
        a['gen_ai.tool.call.arguments'], a['input.value'], a['traceloop.entity.input'],
        a['langfuse.observation.input']]), '') AS args_raw,
    -- arguments are JSON text (a bare value becomes a JSON string); libraries'
    -- wrappers are removed where steps are read (ingest/_turns.py)
    multiIf(args_raw = '', '', NOT isValidJSON(args_raw), toJSONString(args_raw), args_raw) AS args,
    if(step_kind = 'tool', arrayFirst(x -> x != '', [
        a['gen_ai.tool.call.result'], a['output.value'], a['traceloop.entity.output'],
        a['langfuse.observation.output']]), '') AS res_raw,
    multiIf(res_raw = '' OR isValidJSON(res_raw), res_raw, toJSONString(res_raw)) AS res,
    -- a model step's conversation: flattened message keys (OpenInference
    -- llm.*_messages.N.*, OpenLLMetry gen_ai.prompt.N.*) are packed into one
    -- JSON object, and GenAI system instructions travel with the messages:
    -- ingest/_turns.py reads every shape into turns
    mapFilter((k, v) -> startsWith(k, 'llm.input_messages.'), a) AS oi_in,
    mapFilter((k, v) -> startsWith(k, 'llm.output_messages.'), a) AS oi_out,
    mapFilter((k, v) -> match(k, '^gen_ai\\.prompt\\.\\d'), a) AS tl_in,
    mapFilter((k, v) -> match(k, '^gen_ai\\.completion\\.\\d'), a) AS tl_out,
    if(step_kind != 'tool', arrayFirst(x -> x != '', [
        if(a['gen_ai.system_instructions'] != '', toJSONString(map(
            'gen_ai.system_instructions', a['gen_ai.system_instructions'],
            'gen_ai.input.messages', a['gen_ai.input.messages'])), ''),
        a['gen_ai.input.messages'],
        if(step_kind = 'llm' AND length(oi_in) > 0, toJSONString(oi_in), ''),
        if(step_kind = 'llm' AND length(tl_in) > 0, toJSONString(tl_in), ''),
        a['llm.input_messages'], a['openai.responses.input'],
        a['input.value'], a['traceloop.entity.input'],
        a['langfuse.observation.input'], a['gen_ai.prompt'], a['flywheel.input']]), '') AS inp,
    if(step_kind != 'tool', arrayFirst(x -> x != '', [
        a['gen_ai.output.messages'],
        if(step_kind = 'llm' AND length(oi_out) > 0, toJSONString(oi_out), ''),
        if(step_kind = 'llm' AND length(tl_out) > 0, toJSONString(tl_out), ''),
        a['llm.output_messages'],
        a['output.value'], a['traceloop.entity.output'],
        a['langfuse.observation.output'], a['gen_ai.completion'], a['flywheel.output']]), '') AS outp
SELECT
    ProjectId AS project_id,
    TraceId AS trace_id,
    SpanId AS span_id,
    cityHash64(SpanAttributes) AS attributes_hash,
    toString(step_kind) AS kind,
    args AS arguments,
    res AS result,
    inp AS input,
    outp AS output
FROM {{OTEL_TABLE}};

-- Looked up by key, never loaded whole: each read asks the view for the spans it needs.
CREATE DICTIONARY IF NOT EXISTS agent_step_texts_dict {{ON_CLUSTER}} (
    trace_id String,
    span_id String,
    attributes_hash UInt64,
    kind String,
    arguments String DEFAULT '',
    result String DEFAULT '',
    input String DEFAULT '',
    output String DEFAULT ''
)
PRIMARY KEY trace_id, span_id, attributes_hash, kind
SOURCE(CLICKHOUSE(TABLE 'agent_step_texts' {{SELF_CREDENTIALS}}))
LAYOUT(COMPLEX_KEY_DIRECT());

-- The four text columns share one lookup (a query reads the view once per block of
-- steps); a step stored before this migration looks up no span (its key holds no
-- trace id) and keeps its stored text, a step written since stores none.
ALTER TABLE agent_steps {{ON_CLUSTER}}
    ADD COLUMN IF NOT EXISTS step_texts Tuple(String, String, String, String) ALIAS
        dictGet('agent_step_texts_dict', ('arguments', 'result', 'input', 'output'),
                (if(text_in_spans = 0, '', trace_id), span_id, attributes_hash, toString(kind))),
    ADD COLUMN IF NOT EXISTS arguments String ALIAS concat(stored_arguments, step_texts.1),
    ADD COLUMN IF NOT EXISTS result String ALIAS concat(stored_result, step_texts.2),
    ADD COLUMN IF NOT EXISTS input String ALIAS concat(stored_input, step_texts.3),
    ADD COLUMN IF NOT EXISTS output String ALIAS concat(stored_output, step_texts.4);

CREATE MATERIALIZED VIEW IF NOT EXISTS agent_steps_mv {{ON_CLUSTER}} TO agent_steps AS
WITH
    SpanAttributes AS a,
    a['gen_ai.operation.name'] AS op,
    lower(a['openinference.span.kind']) AS oi,
    lower(a['traceloop.span.kind']) AS tl,
    lower(a['langfuse.observation.type']) AS lf,
    lower(a['flywheel.step.kind']) AS explicit,
    multiIf(
        explicit != '', explicit,
        op = 'execute_tool' OR oi = 'tool' OR tl = 'tool' OR lf = 'tool', 'tool',
        op IN ('chat', 'text_completion', 'generate_content', 'embeddings')
            OR oi IN ('llm', 'embedding') OR lf IN ('generation', 'embedding')
            OR a['llm.request.type'] != '', 'llm',
        op IN ('invoke_agent', 'create_agent') OR oi = 'agent'
            OR tl IN ('agent', 'workflow') OR lf IN ('agent', 'chain') AND ParentSpanId = '', 'agent',
        op IN ('retrieval', 'search') OR oi IN ('retriever', 'reranker') OR lf = 'retriever', 'retrieval',
        op IN ('memory_read', 'search_memory') OR a['flywheel.memory.operation'] = 'read', 'memory_read',
        op IN ('memory_write', 'update_memory') OR a['flywheel.memory.operation'] = 'write', 'memory_write',
        oi = 'guardrail' OR lf = 'guardrail' OR op = 'apply_guardrail', 'guardrail',
        a['gen_ai.tool.name'] != '', 'tool',
        'other') AS step_kind,
    arrayFirst(x -> x != '', [
        a['gen_ai.tool.name'], a['tool.name'],
        if(tl = 'tool', a['traceloop.entity.name'], ''),
        if(step_kind = 'tool', replaceRegexpOne(SpanName, '^execute_tool\\s+', ''), '')
    ]) AS tool,
    toUInt64OrZero(arrayFirst(x -> x != '', [
        a['gen_ai.usage.input_tokens'], a['gen_ai.usage.prompt_tokens'],
        a['llm.token_count.prompt'],
        JSONExtractString(a['langfuse.observation.usage_details'], 'input'),
        a['gen_ai.aggregated_usage.input_tokens']])) AS in_tok,
    toUInt64OrZero(arrayFirst(x -> x != '', [
        a['gen_ai.usage.output_tokens'], a['gen_ai.usage.completion_tokens'],
        a['llm.token_count.completion'],
        JSONExtractString(a['langfuse.observation.usage_details'], 'output'),
        a['gen_ai.aggregated_usage.output_tokens']])) AS out_tok
SELECT
    ProjectId AS project_id,
    TraceId AS trace_id,
    SpanId AS span_id,
    ParentSpanId AS parent_span_id,
    ServiceName AS service_name,
    SpanName AS span_name,
    step_kind AS kind,
    tool AS tool_name,
    arrayFirst(x -> x != '', [a['gen_ai.tool.call.id'], a['tool_call.id'], a['tool.id']]) AS tool_call_id,
    arrayFirst(x -> x != '', [a['gen_ai.response.model'], a['gen_ai.request.model'],
        a['llm.model_name'], a['langfuse.observation.model.name']]) AS model,
    arrayFirst(x -> x != '', [a['gen_ai.agent.name'], a['agent.name'],
        if(tl = 'agent', a['traceloop.entity.name'], '')]) AS agent_name,
    arrayFirst(x -> x != '', [a['session.id'], a['gen_ai.conversation.id'],
        a['langfuse.session.id'], a['traceloop.association.properties.session_id'],
        ResourceAttributes['session.id']]) AS session_id,
    Timestamp AS start_time,
    Duration AS duration_ns,
    in_tok AS input_tokens,
    out_tok AS output_tokens,
    greatest(toUInt64OrZero(arrayFirst(x -> x != '', [a['gen_ai.usage.total_tokens'],
        a['llm.token_count.total'], a['llm.usage.total_tokens']])), in_tok + out_tok) AS total_tokens,
    toFloat64OrZero(arrayFirst(x -> x != '', [a['gen_ai.usage.cost'], a['llm.cost.total'],
        JSONExtractRaw(a['langfuse.observation.cost_details'], 'total')])) AS cost,
    multiIf(StatusCode IN ('Error', 'STATUS_CODE_ERROR'), 'error',
            StatusCode IN ('Ok', 'STATUS_CODE_OK'), 'ok', 'unset') AS status,
    if(StatusCode IN ('Error', 'STATUS_CODE_ERROR'),
       arrayFirst(x -> x != '', [StatusMessage, a['error.type'],
           arrayFirst(x -> x != '', arrayMap(m -> m['exception.message'], Events.Attributes))]),
       '') AS error,
    IngestTime AS ingest_time,
    1 AS text_in_spans,
    cityHash64(SpanAttributes) AS attributes_hash
FROM {{OTEL_TABLE}};
