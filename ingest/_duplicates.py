"""Marking traces whose spans are stored more than once.

OTLP has no idempotency key: an exporter that retries after a lost answer
sends the same spans again, and a client may reuse span ids with other
content. Every write is kept (the log and the span table never drop data);
readers count each (trace, span) once (``_read.WINNER``). The trace list is
fast because ``trace_summaries`` adds spans up as they arrive, which is exact
only for traces without a repeated span id, so before a batch is inserted
its traces that would repeat one (inside the batch, or against spans already
stored) are recorded in ``trace_duplicates``; the list computes those from
their de-duplicated spans. A false mark (a replayed batch the store then
drops as a duplicate block) costs only a slower exact read.
"""

from __future__ import annotations

import pyarrow as pa

from flywheel import Store

_CHUNK = 1000


def mark_duplicates(store: Store, spans: pa.Table) -> int:
    """Record the traces of ``spans`` that repeat a span id; return how many."""
    if not spans.num_rows:
        return 0
    keys = spans.select(["ProjectId", "TraceId", "SpanId"])
    counts = keys.group_by(["ProjectId", "TraceId", "SpanId"]).aggregate([([], "count_all")])
    marked = {(p, t) for p, t, n in zip(counts["ProjectId"].to_pylist(),
                                        counts["TraceId"].to_pylist(),
                                        counts["count_all"].to_pylist(), strict=True) if n > 1}
    incoming: dict[tuple[str, str], set[str]] = {}
    for p, t, s in zip(counts["ProjectId"].to_pylist(), counts["TraceId"].to_pylist(),
                       counts["SpanId"].to_pylist(), strict=True):
        incoming.setdefault((p, t), set()).add(s)
    by_project: dict[str, list[str]] = {}
    for p, t in incoming:
        if (p, t) not in marked:
            by_project.setdefault(p, []).append(t)
    for project, traces in by_project.items():
        for i in range(0, len(traces), _CHUNK):
            rows = store.query(
                "SELECT DISTINCT trace_id, span_id FROM agent_steps WHERE project_id = {p:String}"
                " AND trace_id IN {t:Array(String)}",
                {"p": project, "t": traces[i:i + _CHUNK]})
            for r in rows:
                if r["span_id"] in incoming[(project, r["trace_id"])]:
                    marked.add((project, r["trace_id"]))
    if marked:
        pairs = sorted(marked)
        store.insert("trace_duplicates", {"project_id": [p for p, _ in pairs],
                                          "trace_id": [t for _, t in pairs]})
    return len(marked)
