"""Attributions in the store: save, read back, and pick the traces a batch covers."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from flywheel import NotFoundError, Store

from ._attributor import Attribution

_COLUMNS = (
    "trace_id",
    "attributor",
    "version",
    "failed",
    "category",
    "outcome",
    "surfaced_span_id",
    "surfaced_index",
    "causal_span_id",
    "causal_index",
    "agent",
    "confidence",
    "cluster",
    "service_name",
)


def save_attributions(
    store: Store, items: Sequence[Attribution], *, project: str = "default"
) -> int:
    """Insert attributions (a recomputation replaces the previous row of the same attributor)."""
    if not items:
        return 0
    now = time.time_ns()
    cols: dict[str, list[Any]] = {c: [getattr(a, c) for a in items] for c in _COLUMNS}
    cols["project_id"] = [project] * len(items)
    cols["evidence"] = [json.dumps(a.evidence, ensure_ascii=False, default=str) for a in items]
    cols["signals"] = [sorted({e["kind"] for e in a.evidence}) for a in items]
    cols["category_scores"] = [json.dumps(a.category_scores) for a in items]
    cols["computed_at"] = [now] * len(items)
    return store.insert("attributions", cols)


def _row_to_attribution(r: dict[str, Any]) -> Attribution:
    return Attribution(
        trace_id=r["trace_id"],
        failed=bool(r["failed"]),
        category=r["category"],
        outcome=r["outcome"],
        surfaced_span_id=r["surfaced_span_id"],
        surfaced_index=int(r["surfaced_index"]),
        causal_span_id=r["causal_span_id"],
        causal_index=int(r["causal_index"]),
        agent=r["agent"],
        confidence=round(float(r["confidence"]), 3),
        evidence=json.loads(r["evidence"] or "[]"),
        category_scores=json.loads(r.get("category_scores") or "[]"),
        cluster=r.get("cluster") or "",
        attributor=r["attributor"],
        version=r["version"],
        service_name=r["service_name"],
    )


def read_attributions(
    store: Store, trace_id: str, *, project: str = "default"
) -> list[Attribution]:
    """Every stored attribution of a trace (one per attributor), deterministic first."""
    rows = store.query(
        "SELECT * FROM attributions FINAL WHERE project_id = {p:String} AND trace_id = {t:String} "
        "ORDER BY attributor = 'deterministic' DESC, attributor",
        {"p": project, "t": trace_id},
    )
    return [_row_to_attribution(r) for r in rows]


def read_attribution(
    store: Store, trace_id: str, *, project: str = "default", attributor: str = "deterministic"
) -> Attribution:
    """One stored attribution, or NotFoundError naming the command that makes it."""
    for a in read_attributions(store, trace_id, project=project):
        if a.attributor == attributor:
            return a
    raise NotFoundError(
        f"no {attributor} attribution for trace {trace_id}; run `flywheel attribute {trace_id}`"
    )


def select_traces(
    store: Store,
    *,
    project: str = "default",
    service: str | None = None,
    since_ns: int | None = None,
    limit: int | None = None,
) -> list[str]:
    """Trace ids to attribute in batch: by service and start time, oldest first."""
    sql = [
        "SELECT trace_id, min(start_time) AS st FROM trace_summaries "
        "WHERE project_id = {p:String} GROUP BY trace_id"
    ]
    having = []
    params: dict[str, Any] = {"p": project}
    if service:
        having.append("max(service_name) = {svc:String}")
        params["svc"] = service
    if since_ns is not None:
        having.append("min(start_time) >= fromUnixTimestamp64Nano({since:Int64})")
        params["since"] = since_ns
    if having:
        sql.append("HAVING " + " AND ".join(having))
    sql.append("ORDER BY st, trace_id")
    if limit:
        sql.append("LIMIT {lim:UInt64}")
        params["lim"] = limit
    return [r["trace_id"] for r in store.query(" ".join(sql), params)]
