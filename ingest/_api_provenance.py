"""``GET /api/traces/{trace_id}/provenance``: argument provenance of one trace."""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel

from flywheel import request_project, requires

from ._provenance_store import compute_provenance, read_provenance

router = APIRouter(tags=["provenance"])


class ProvenanceRecord(BaseModel):
    """Where one argument value of one tool call came from."""

    span_id: str
    tool_name: str
    path: str
    source_kind: str
    source_span_id: str
    source_ref: str
    method: str
    confidence: float
    trusted: bool
    ambiguous: bool
    alternatives: list[str]
    flags: list[str]
    extraction: str


class TraceProvenance(BaseModel):
    """The provenance graph of a trace, one record per argument leaf."""

    trace_id: str
    arguments: list[ProvenanceRecord]
    flagged: int
    #: untrusted values the user's request authorised (method ``delegated``, no flag)
    delegated: int = 0


@router.get(
    "/api/traces/{trace_id}/provenance",
    operation_id="get_trace_provenance",
    dependencies=[requires("read")],
    summary="Per tool argument: source kind, source span, method, confidence, trust, flags "
    "(delegated values: method 'delegated', no flag).",
    response_model=TraceProvenance,
    responses={404: {"description": "unknown trace"}},
)
async def get_trace_provenance(
    request: Request, trace_id: str, recompute: bool = Query(False, description="Infer again.")
) -> TraceProvenance:
    """Provenance of every tool argument of a trace (inferred on first read)."""
    store = request.app.state.store
    project = request_project(request)
    if recompute:
        await run_in_threadpool(compute_provenance, store, trace_id, project=project)
    rows = await run_in_threadpool(read_provenance, store, trace_id, project=project)
    records = [ProvenanceRecord(**r) for r in rows]
    return TraceProvenance(trace_id=trace_id, arguments=records,
                           flagged=sum(1 for r in records if r.flags),
                           delegated=sum(1 for r in records if r.method == "delegated"))
