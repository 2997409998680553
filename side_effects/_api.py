"""Side-effect routes: classify a before/after pair, read a trial's stored result."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field

from flywheel import NotFoundError, UserError, request_project, requires

from ._analyze import analyze
from ._json_doc import JsonDocumentAdapter
from ._policy import Profile, Scope, default_profile
from ._provenance import Observation
from ._reconcile import ToolCall
from ._records import SNAPSHOT_FORMAT, Snapshot
from ._store import read_result, store_report

router = APIRouter(tags=["side-effects"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"description": "invalid states, scope, profile or calls"},
    503: {"description": "the store did not answer"},
}


class DiffRequest(BaseModel):
    """Two states (JSON documents or flywheel.snapshot/1 documents) and what to judge them by."""

    before: Any
    after: Any
    maps: list[str] = Field(default_factory=list, description="Map hints for JSON documents.")
    scope: Scope | None = None
    profile: Profile | None = None
    calls: list[ToolCall] | None = None
    observations: list[Observation] = Field(default_factory=list)
    trial_id: str | None = Field(None, description="Store the result under this trial id.")
    trace_id: str = ""


def _snapshot(doc: Any, maps: list[str]) -> Snapshot:
    try:
        if isinstance(doc, dict) and doc.get("format") == SNAPSHOT_FORMAT:
            return Snapshot.from_json(doc)
        return Snapshot.from_records(JsonDocumentAdapter(maps=maps).records(doc))
    except (KeyError, TypeError, ValueError) as exc:
        raise UserError(f"cannot read state: {exc}") from exc


@router.post(
    "/api/side-effects/diff",
    operation_id="diff_side_effects",
    dependencies=[requires("read")],
    summary="Diff two states, classify every change, reconcile with calls, count critical events.",
    responses=_ERRORS,
)
async def diff_side_effects(request: Request, body: DiffRequest) -> dict[str, Any]:
    """Classify the side effects between two states (optionally storing them for a trial)."""

    def work() -> dict[str, Any]:
        report = analyze(
            _snapshot(body.before, body.maps),
            _snapshot(body.after, body.maps),
            scope=body.scope,
            profile=body.profile or default_profile(),
            calls=body.calls,
            observations=body.observations,
            run_id=body.trial_id,
        )
        if body.trial_id:
            store_report(
                request.app.state.store,
                body.trial_id,
                report,
                trace_id=body.trace_id,
                project_id=request_project(request),
            )
        return report.to_json()

    return await run_in_threadpool(work)


@router.get(
    "/api/trials/{trial_id}/side-effects",
    operation_id="get_trial_side_effects",
    dependencies=[requires("read")],
    summary="A trial's stored side-effect result: counts, critical events, classified deltas.",
    responses={**_ERRORS, 404: {"description": "no side-effect result for this trial"}},
)
async def get_trial_side_effects(request: Request, trial_id: str) -> dict[str, Any]:
    """The stored side-effect result of a trial."""
    store = request.app.state.store
    got = await run_in_threadpool(read_result, store, trial_id, request_project(request))
    if got is None:
        raise NotFoundError(
            f"no side-effect result for trial {trial_id!r}; run "
            "`flywheel side-effects diff ... --trial-id` first"
        )
    return got
