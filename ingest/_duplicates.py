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
import pyarrow.compute as pc

from flywheel import Store

_CHUNK = 1000


def mark_duplicates(store: Store, spans: pa.Table) -> int:
    """Record the traces of ``spans`` that repeat a span id; return how many.

    A span id repeats inside the batch, or against a span stored before,
    which only a trace already in the store can hold: the incoming trace ids
    are looked up first in the span table's trace-id table (``<span
    table>_trace_id_ts``: a row per trace and insert, a twentieth of the
    step table on agent traces, and one column), and only the traces found
    there have their span ids read from ``agent_steps``. The trace-id table
    is written by a view on the span table, like the steps, in the same
    insert; it leaves out spans without a trace id, which are always looked
    up in the steps.
    """
    if not spans.num_rows:
        return 0
    counts = spans.select(["ProjectId", "TraceId", "SpanId"]).group_by(
        ["ProjectId", "TraceId", "SpanId"]).aggregate([([], "count_all")])
    repeated = counts.filter(pc.greater(counts["count_all"], 1))
    marked = set(zip(repeated["ProjectId"].to_pylist(), repeated["TraceId"].to_pylist(),
                     strict=True))
    ids = pc.unique(counts["TraceId"]).to_pylist()
    stored = {""} if "" in ids else set()
    ids = [t for t in ids if t]
    for i in range(0, len(ids), _CHUNK):
        stored.update(r["t"] for r in store.query(
            "SELECT DISTINCT TraceId AS t FROM {table:Identifier}"
            " WHERE TraceId IN {ids:Array(String)}",
            {"table": f"{store.otel_table}_trace_id_ts", "ids": ids[i:i + _CHUNK]}))
    if stored:
        known = counts.filter(pc.is_in(counts["TraceId"], pa.array(sorted(stored))))
        incoming: dict[tuple[str, str], set[str]] = {}
        for p, t, s in zip(known["ProjectId"].to_pylist(), known["TraceId"].to_pylist(),
                           known["SpanId"].to_pylist(), strict=True):
            incoming.setdefault((p, t), set()).add(s)
        by_project: dict[str, list[str]] = {}
        for p, t in incoming:
            if (p, t) not in marked:
                by_project.setdefault(p, []).append(t)
        for project, traces in by_project.items():
            for i in range(0, len(traces), _CHUNK):
                rows = store.query(
                    "SELECT DISTINCT trace_id, span_id FROM agent_steps"
                    " WHERE project_id = {p:String} AND trace_id IN {t:Array(String)}",
                    {"p": project, "t": traces[i:i + _CHUNK]})
                for r in rows:
                    if r["span_id"] in incoming[(project, r["trace_id"])]:
                        marked.add((project, r["trace_id"]))
    if marked:
        pairs = sorted(marked)
        store.insert("trace_duplicates", {"project_id": [p for p, _ in pairs],
                                          "trace_id": [t for _, t in pairs]})
    return len(marked)
