"""``/metrics`` in Prometheus text format through ``prometheus_client``.

A collector reads the writer's counters and health at scrape time, in its own
registry per app (tests and benches run several apps in one process). The
same figures as ``/readyz``: writer alive, log lag in bytes and seconds, the
log disk's free bytes, write faults, quarantined frames, the last error.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, InfoMetricFamily
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from ._writer import SpanWriter

_P = "flywheel_ingest_"
_COUNTERS = {
    "accepted_spans": "Spans acknowledged (durable in the write-ahead log).",
    "rejected_spans": "Spans refused and reported in partial_success.",
    "throttled_requests": "Requests answered 503 + Retry-After.",
    "inserted_spans": "Spans inserted into the store.",
    "insert_batches": "Batches inserted into the store.",
    "insert_failures": "Failed insert attempts (retried or quarantined).",
    "replayed_spans": "Spans inserted from the log at start or after a writer restart.",
    "quarantined_batches": "Log frames the store refused, kept under <wal>/quarantine.",
    "quarantined_spans": "Spans in quarantined frames.",
    "writer_restarts": "Times the span writer thread was restarted after dying.",
}


class _WriterCollector(Collector):
    def __init__(self, writer: SpanWriter) -> None:
        self.writer = writer

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily | InfoMetricFamily]:
        w = self.writer
        s = w.stats
        for name, doc in _COUNTERS.items():
            yield CounterMetricFamily(_P + name, doc, value=getattr(s, name))
        cut = CounterMetricFamily(_P + "truncated", "Values cut by the input limits, by kind "
                                  "(span_name, attribute_key, attribute_value, attribute_count, "
                                  "event_count, link_count, nesting_depth).", labels=["what"])
        for kind, n in sorted(s.truncated.items()):
            cut.add_metric([kind], n)
        yield cut
        h = w.health()
        yield CounterMetricFamily(_P + "wal_write_errors", "Write-ahead log write/fsync failures.",
                                  value=h["wal"]["write_errors"])
        gauges = {
            "writer_alive": ("1 while the span writer thread runs.", float(h["writer"]["alive"])),
            "wal_lag_bytes": ("Log bytes acknowledged but not yet in the store.",
                              h["wal"]["lag_bytes"]),
            "wal_lag_seconds": ("Age of the oldest acknowledged frame not yet in the store.",
                                h["wal"]["lag_seconds"]),
            "wal_disk_free_bytes": ("Free bytes on the log's disk.", h["wal"]["disk_free_bytes"]),
            "wal_writable": ("1 when the log can take a request (no fault, space above the floor).",
                             float(h["wal"]["writable"])),
            "wal_skipped_regions": ("Log regions replay could not read (torn or corrupt).",
                                    len(h["wal"]["skipped"])),
            "last_error_timestamp_seconds": ("When the last error happened (0: none).",
                                             h["last_error_at"]),
        }
        for name, (doc, value) in gauges.items():
            yield GaugeMetricFamily(_P + name, doc, value=value)
        yield InfoMetricFamily(_P + "writer", "The writer's state and last error.",
                               value={"state": w.state, "last_error": h["last_error"][:300],
                                      "wal_fault": h["wal"]["fault"][:300]})


def render(writer: SpanWriter) -> tuple[bytes, str]:
    """(body, content type) of one scrape."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_WriterCollector(writer))
    return generate_latest(registry), CONTENT_TYPE_LATEST
