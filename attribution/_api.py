"""``GET /api/traces/{trace_id}/attribution``: where a trace went wrong.

Mounted by the ablation package's API module (``router``); reads the stored
attributions and computes the deterministic one on first read.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field

from flywheel import request_project, requires

from ._attributor import attribute_trace
from ._store import read_attributions, save_attributions

router = APIRouter(tags=["attribution"])


class AttributionOut(BaseModel):
    """One attributor's verdict on a trace: category, surfaced and causal spans, agent, evidence."""

    trace_id: str
    attributor: str
    version: str
    failed: bool
    category: str
    outcome: str
    surfaced_span_id: str
    surfaced_index: int
    causal_span_id: str
    causal_index: int
    agent: str
    confidence: float
    evidence: list[dict[str, Any]]
    service_name: str
    category_scores: list[list[Any]] = Field(
        default_factory=list,
        description="Every category with evidence at the blamed step, [category, score], "
        "strongest first (the runner-ups of an `unknown` category).",
    )
    cluster: str = Field("", description="MAST cluster of the category when several agents speak.")


class TraceAttributions(BaseModel):
    """Every stored attribution of a trace, deterministic first."""

    trace_id: str
    attributions: list[AttributionOut]


def _attributions(store: Any, trace_id: str, project: str, recompute: bool) -> list[Any]:
    found = [] if recompute else read_attributions(store, trace_id, project=project)
    if not any(a.attributor == "deterministic" for a in found):
        a = attribute_trace(store, trace_id, project=project)
        save_attributions(store, [a], project=project)
        found = [a, *[f for f in found if f.attributor != "deterministic"]]
    return found


@router.get(
    "/api/traces/{trace_id}/attribution",
    operation_id="get_trace_attribution",
    dependencies=[requires("read")],
    summary="Failure attribution: category, surfaced and causal span, responsible agent, evidence.",
    response_model=TraceAttributions,
    responses={404: {"description": "unknown trace"}},
)
async def get_trace_attribution(
    request: Request,
    trace_id: str,
    recompute: bool = Query(False, description="Attribute again (deterministic attributor)."),
) -> TraceAttributions:
    """The trace's attributions (the deterministic one computed on first read)."""
    store = request.app.state.store
    project = request_project(request)
    items = await run_in_threadpool(_attributions, store, trace_id, project, recompute)
    return TraceAttributions(
        trace_id=trace_id, attributions=[AttributionOut(**a.to_json()) for a in items]
    )
