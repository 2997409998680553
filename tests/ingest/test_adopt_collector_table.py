"""--otel-table: adopt a span table an OpenTelemetry Collector already writes."""

from __future__ import annotations

import os

from flywheel import open_store

# The collector exporter's DDL (traces_table.sql), without the platform's columns.
COLLECTOR_DDL = """
CREATE TABLE collector_spans (
    Timestamp DateTime64(9), TraceId String, SpanId String, ParentSpanId String,
    TraceState String, SpanName LowCardinality(String), SpanKind LowCardinality(String),
    ServiceName LowCardinality(String), ResourceAttributes Map(LowCardinality(String), String),
    ScopeName String, ScopeVersion String, SpanAttributes Map(LowCardinality(String), String),
    Duration UInt64, StatusCode LowCardinality(String), StatusMessage String,
    Events Nested (Timestamp DateTime64(9), Name LowCardinality(String),
                   Attributes Map(LowCardinality(String), String)),
    Links Nested (TraceId String, SpanId String, TraceState String,
                  Attributes Map(LowCardinality(String), String))
) ENGINE = MergeTree PARTITION BY toDate(Timestamp)
ORDER BY (ServiceName, SpanName, toDateTime(Timestamp), Timestamp)
"""


def test_existing_collector_table_is_adopted(chdb_dir):
    db = f"adopt{os.getpid()}"
    raw = open_store(f"chdb://{chdb_dir}?database={db}")
    raw.command(COLLECTOR_DDL)
    # a row the collector wrote before the platform existed
    raw.insert("collector_spans", {"TraceId": ["aa" * 16], "SpanId": ["bb" * 8],
                                   "Timestamp": [1], "SpanName": ["old"]})
    store = open_store(f"chdb://{chdb_dir}?database={db}", otel_table="collector_spans")
    assert "ingest:001_otel_traces" in store.migrate()
    assert {"ProjectId", "IngestTime"} <= set(store.table_schema("collector_spans"))
    assert store.scalar("SELECT count() FROM system.tables WHERE database = {d:String} "
                        "AND name = 'otel_traces'", {"d": db}) == 0
    # the collector keeps writing its own columns only; the views normalise it
    store.insert("collector_spans", {
        "TraceId": ["cc" * 16], "SpanId": ["dd" * 8], "Timestamp": [2], "SpanName": ["execute_tool x"],
        "SpanAttributes": [{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "x",
                            "gen_ai.tool.call.arguments": '{"a": 1}'}]})
    assert store.scalar("SELECT ProjectId FROM collector_spans WHERE SpanId = {s:String}",
                        {"s": "dd" * 8}) == "default"
    steps = store.query("SELECT kind, tool_name, arguments FROM agent_steps")
    assert steps == [{"kind": "tool", "tool_name": "x", "arguments": '{"a": 1}'}]
