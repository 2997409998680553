"""Spans as plain rows: the one shape every safety metric reads.

Metrics take ``SpanRow`` lists so they work the same on spans held in memory
(tests, a run just finished) and on spans read back from the store.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from flywheel import Store


@dataclass(frozen=True)
class SpanRow:
    """One span: trace, id, name, start time and string-valued attributes."""

    trace_id: str
    span_id: str
    name: str
    start_ns: int
    attrs: dict[str, str] = field(default_factory=dict)

    def get(self, key: str, default: str = "") -> str:
        """An attribute as a string ('' when absent)."""
        return self.attrs.get(key, default)

    def json(self, key: str) -> Any:
        """An attribute parsed as JSON (None when absent or not JSON)."""
        raw = self.attrs.get(key)
        if raw is None:
            return None
        try:
            return json.loads(raw)
        except (TypeError, json.JSONDecodeError):
            return raw

    @property
    def operation(self) -> str:
        """``gen_ai.operation.name`` (the GenAI span kind)."""
        return self.attrs.get("gen_ai.operation.name", "")


def _text(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return v if isinstance(v, str) else str(v)


def spans_from_readable(spans: Iterable[Any]) -> list[SpanRow]:
    """Rows from OpenTelemetry SDK ``ReadableSpan`` objects (e.g. an in-memory exporter)."""
    rows = [
        SpanRow(
            trace_id=format(s.context.trace_id, "032x"),
            span_id=format(s.context.span_id, "016x"),
            name=s.name,
            start_ns=int(s.start_time or 0),
            attrs={k: _text(v) for k, v in (s.attributes or {}).items()},
        )
        for s in spans
    ]
    return sorted(rows, key=lambda r: (r.trace_id, r.start_ns))


_SQL = (
    "SELECT TraceId AS trace_id, SpanId AS span_id, SpanName AS name, "
    "toUnixTimestamp64Nano(Timestamp) AS start_ns, SpanAttributes AS attrs "
    "FROM {table:Identifier} WHERE TraceId IN {t:Array(String)} "
    "AND ProjectId = {p:String} "
    "ORDER BY TraceId, Timestamp"
)


def spans_from_store(
    store: Store, trace_ids: Iterable[str], *, project: str = "default"
) -> list[SpanRow]:
    """Rows of the given traces from the store's span table."""
    ids = sorted(set(trace_ids))
    if not ids:
        return []
    rows = store.query(_SQL, {"table": store.otel_table, "t": ids, "p": project})
    return [
        SpanRow(r["trace_id"], r["span_id"], r["name"], int(r["start_ns"]), dict(r["attrs"]))
        for r in rows
    ]


def by_trace(rows: Iterable[SpanRow]) -> dict[str, list[SpanRow]]:
    """Rows grouped by trace, each group in start order."""
    out: dict[str, list[SpanRow]] = {}
    for r in rows:
        out.setdefault(r.trace_id, []).append(r)
    for v in out.values():
        v.sort(key=lambda r: r.start_ns)
    return out
