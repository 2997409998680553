"""The span writer gives memory back once idle, never while frames keep arriving."""

from __future__ import annotations

import time

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from flywheel import Settings
from flywheel.ingest import SpanWriter
from flywheel.ingest._decode import decode_body
from flywheel.ingest._limits import Limits
from flywheel.ingest import _writer


def _table(seed: int):
    req = ExportTraceServiceRequest()
    spans = req.resource_spans.add().scope_spans.add()
    for i in range(5):
        sp = spans.spans.add()
        sp.trace_id, sp.span_id = seed.to_bytes(16, "big"), (seed * 100 + i + 1).to_bytes(8, "big")
        sp.name, sp.start_time_unix_nano, sp.end_time_unix_nano = "chat", 10**18, 10**18 + 5
    limits = Limits.from_settings(Settings().ingest)
    return decode_body(req.SerializeToString(), "application/x-protobuf", project="default",
                       limits=limits).table


def test_memory_is_given_back_after_startup_and_once_idle(store, tmp_path, monkeypatch):
    idle = 2.0  # long enough that a loaded test machine never stalls 0.1 s this long
    monkeypatch.setattr(_writer, "IDLE_RELEASE_S", idle)
    calls: list[float] = []
    real = store.release_memory

    def counting() -> dict[str, int]:
        calls.append(time.monotonic())
        return real()

    store.release_memory = counting
    writer = SpanWriter(store, tmp_path / "wal", Settings().ingest.model_copy(
        update={"flush_interval_s": 0.05, "flush_quiet_s": 0.01}))
    writer.start()
    try:
        assert writer.flush(10)
        assert len(calls) == 1  # after the replay at startup
        # frames arriving faster than IDLE_RELEASE_S: inserted, but nothing is given back
        started = time.monotonic()
        for seed in range(1, 8):
            writer.submit(_table(seed))
            time.sleep(0.1)
        assert writer.flush(10)
        assert [t for t in calls if t > started] == []
        time.sleep(idle * 2.5)
        assert len(calls) == 2  # once, after the last insert; not again while nothing happens
        assert writer.stats.inserted_spans == 35
        assert store.scalar("SELECT count() FROM otel_traces") == 35
    finally:
        writer.stop()


def test_the_server_allocates_arrow_buffers_from_the_heap_it_trims(store, tmp_path):
    import pyarrow as pa

    from tests.ingest._server import running_server

    with running_server(store, tmp_path / "wal"):
        assert pa.default_memory_pool().backend_name == "system"
