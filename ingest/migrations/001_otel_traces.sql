-- The OpenTelemetry Collector ClickHouse exporter's span table (column names,
-- types, indexes and order as in opentelemetry-collector-contrib
-- exporter/clickhouseexporter/internal/sqltemplates/traces_table.sql), plus
-- defaulted columns only: ProjectId and IngestTime. Nothing here is created
-- when the table already exists (an adopted collector table, --otel-table).
CREATE TABLE IF NOT EXISTS {{OTEL_TABLE}} {{ON_CLUSTER}} (
    Timestamp DateTime64(9) CODEC(Delta(8), ZSTD(1)),
    TraceId String CODEC(ZSTD(1)),
    SpanId String CODEC(ZSTD(1)),
    ParentSpanId String CODEC(ZSTD(1)),
    TraceState String CODEC(ZSTD(1)),
    SpanName LowCardinality(String) CODEC(ZSTD(1)),
    SpanKind LowCardinality(String) CODEC(ZSTD(1)),
    ServiceName LowCardinality(String) CODEC(ZSTD(1)),
    ResourceAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    ScopeName String CODEC(ZSTD(1)),
    ScopeVersion String CODEC(ZSTD(1)),
    SpanAttributes Map(LowCardinality(String), String) CODEC(ZSTD(1)),
    Duration UInt64 CODEC(T64, ZSTD(1)),
    StatusCode LowCardinality(String) CODEC(ZSTD(1)),
    StatusMessage String CODEC(ZSTD(1)),
    Events Nested (
        Timestamp DateTime64(9),
        Name LowCardinality(String),
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    Links Nested (
        TraceId String,
        SpanId String,
        TraceState String,
        Attributes Map(LowCardinality(String), String)
    ) CODEC(ZSTD(1)),
    ProjectId LowCardinality(String) DEFAULT 'default',
    IngestTime DateTime64(3) DEFAULT now64(3),
    INDEX idx_trace_id TraceId TYPE bloom_filter(0.001) GRANULARITY 1,
    INDEX idx_res_attr_key mapKeys(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_res_attr_value mapValues(ResourceAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_span_attr_key mapKeys(SpanAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_span_attr_value mapValues(SpanAttributes) TYPE bloom_filter(0.01) GRANULARITY 1,
    INDEX idx_duration Duration TYPE minmax GRANULARITY 1,
    INDEX idx_lower_span_name lower(SpanName) TYPE tokenbf_v1(32768, 3, 0) GRANULARITY 8
) ENGINE = {{MergeTree}}
PARTITION BY toDate(Timestamp)
PRIMARY KEY (ServiceName, SpanName, toDateTime(Timestamp))
ORDER BY (ServiceName, SpanName, toDateTime(Timestamp), Timestamp)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1, non_replicated_deduplication_window = 10000;

-- Adopting a table a collector already writes: add the platform's defaulted
-- columns (no-ops on the table created above).
ALTER TABLE {{OTEL_TABLE}} {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS ProjectId LowCardinality(String) DEFAULT 'default';
ALTER TABLE {{OTEL_TABLE}} {{ON_CLUSTER}} ADD COLUMN IF NOT EXISTS IngestTime DateTime64(3) DEFAULT now64(3);

-- The collector's trace-id lookup (otel_traces_trace_id_ts + its view), so a
-- trace is found by id without scanning the span table.
CREATE TABLE IF NOT EXISTS {{OTEL_TABLE}}_trace_id_ts {{ON_CLUSTER}} (
    TraceId String CODEC(ZSTD(1)),
    Start SimpleAggregateFunction(min, DateTime) CODEC(ZSTD(1)),
    End SimpleAggregateFunction(max, DateTime) CODEC(ZSTD(1))
) ENGINE = {{AggregatingMergeTree}}
PARTITION BY toStartOfWeek(Start)
ORDER BY (TraceId)
SETTINGS index_granularity = 8192, ttl_only_drop_parts = 1;

CREATE MATERIALIZED VIEW IF NOT EXISTS {{OTEL_TABLE}}_trace_id_ts_mv {{ON_CLUSTER}}
TO {{OTEL_TABLE}}_trace_id_ts
AS SELECT
    TraceId,
    min(Timestamp) AS Start,
    max(Timestamp) AS End
FROM {{OTEL_TABLE}}
WHERE TraceId != ''
GROUP BY TraceId;
