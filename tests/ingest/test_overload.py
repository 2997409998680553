"""Overload: past the log-lag bound the receiver answers 503 + Retry-After,
the stock OTLP exporter retries, and the store ends with every span once.

The store is made slow on purpose (each insert sleeps), so the sustainable
rate drops well below what the clients offer.
"""

from __future__ import annotations

import threading
import time

from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.ingest._server import running_server


def _spans(n: int, tag: str):
    mem = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(mem))
    tracer = provider.get_tracer("overload")
    for i in range(n):
        with tracer.start_as_current_span(f"execute_tool t{i}", attributes={
            "gen_ai.tool.name": "lookup", "payload": tag + "x" * 800}):
            pass
    return list(mem.get_finished_spans())


def test_overload_retries_and_exactly_once(store, tmp_path):
    real_insert = store._insert_arrow

    def slow_insert(table, data, token):
        time.sleep(0.25)
        real_insert(table, data, token)

    store._insert_arrow = slow_insert
    batches = [_spans(100, f"c{k}") for k in range(12)]
    with running_server(store, tmp_path / "wal", max_wal_lag_bytes=150_000,
                        batch_spans=200, flush_interval_s=0.05) as (url, app):
        results: list[SpanExportResult] = []

        def client(k: int) -> None:
            exporter = OTLPSpanExporter(endpoint=f"{url}/v1/traces", timeout=120)
            for b in batches[k::6]:
                results.append(exporter.export(b))
            exporter.shutdown()

        threads = [threading.Thread(target=client, args=(k,)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert app.state.writer.flush(60)
        stats = app.state.writer.stats
        assert stats.throttled_requests > 0, "the bound never tripped: not an overload test"
    assert results == [SpanExportResult.SUCCESS] * len(batches)
    sent = {format(s.context.span_id, "016x") for b in batches for s in b}
    rows = store.query("SELECT SpanId, count() AS c FROM otel_traces GROUP BY SpanId")
    assert {r["SpanId"] for r in rows} == sent
    assert all(r["c"] == 1 for r in rows)


def test_retry_after_follows_the_store_pace():
    """The hint is the time the store needs for the excess at its recent pace,
    between 1 s and the cap; a store that took nothing lately gets the cap."""
    from ingest._writer import RETRY_AFTER_MAX_S, DrainRate

    rate = DrainRate()
    assert rate.retry_after(10_000, now=100.0) == RETRY_AFTER_MAX_S  # nothing drained yet
    for k in range(10):  # 1 MB/s for the last 5 s
        rate.add(500_000, now=100.0 + 0.5 * k)
    now = 104.6
    assert rate.per_second(now) == 1_000_000
    assert rate.retry_after(3_000_000, now=now) == 3.0
    assert rate.retry_after(10, now=now) == 1.0  # never under a second
    assert rate.retry_after(10**12, now=now) == RETRY_AFTER_MAX_S  # never over the cap
    assert rate.retry_after(10, now=now + 60) == RETRY_AFTER_MAX_S  # the store stalled since
