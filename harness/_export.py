"""Where trial spans go: any OpenTelemetry ``SpanExporter``.

- ``otlp_exporter(url)``: the real OTLP/HTTP protobuf exporter, pointed at a
  running platform (``POST /v1/traces``, port 4318) or any collector.
- ``StoreSpanExporter(store)``: straight into the store, in process. It
  encodes spans with the OTLP encoder and decodes them with ingest's own
  ``decode_request``, so the rows are exactly what the receiver would write.
- In tests, ``InMemorySpanExporter`` from the OTel SDK.

A ``TracerProvider`` is made per run (``tracer_provider``), so runs never
share a processor or a resource.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)

from flywheel import Store, __version__

SERVICE_NAME = "flywheel-harness"


def otlp_exporter(url: str, *, timeout_s: float = 10.0) -> SpanExporter:
    """The real OTLP/HTTP exporter for ``url`` (``http://HOST:4318`` or the full ``/v1/traces``)."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

    endpoint = url.rstrip("/")
    if not endpoint.endswith("/v1/traces"):
        endpoint += "/v1/traces"
    return OTLPSpanExporter(endpoint=endpoint, timeout=timeout_s)


class StoreSpanExporter(SpanExporter):
    """Writes finished spans into the store's span table, in process.

    Never raises on the export path (an exporter "should not block or
    throw"): a failed insert returns FAILURE and is counted.
    """

    def __init__(self, store: Store, *, project: str = "default") -> None:
        self.store = store
        self.project = project
        self.exported = 0
        self.failures = 0
        self.last_error = ""
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Encode, decode with ingest's decoder, insert."""
        if not spans:
            return SpanExportResult.SUCCESS
        try:
            from flywheel.ingest import decode_request
            from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

            batch = decode_request(encode_spans(spans), project=self.project)
            with self._lock:
                self.store.insert(self.store.otel_table, batch.table)
                self.exported += batch.accepted
        except Exception as exc:  # noqa: BLE001 - exporters report, never raise
            self.failures += 1
            self.last_error = f"{type(exc).__name__}: {exc}"
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing to release (the store belongs to the caller)."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Exports are synchronous."""
        return True


def tracer_provider(
    exporter: SpanExporter, *, batch: bool = True, run_id: str = "", max_export_batch: int = 1_000
) -> TracerProvider:
    """A fresh provider for one run, exporting through ``exporter``.

    ``batch`` uses a ``BatchSpanProcessor`` exporting up to
    ``max_export_batch`` spans at a time (the store likes few big inserts; an
    OTLP receiver caps the request size, 16 MiB on the platform, so keep
    batches of large tool results smaller there); ``batch=False`` exports
    each span as it ends.
    """
    resource = Resource.create(
        {"service.name": SERVICE_NAME, "service.version": __version__, "flywheel.run.id": run_id}
    )
    provider = TracerProvider(resource=resource)
    if batch:
        provider.add_span_processor(
            BatchSpanProcessor(
                exporter,
                max_queue_size=200_000,
                max_export_batch_size=max_export_batch,
                schedule_delay_millis=1_000,
            )
        )
    else:
        provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider
