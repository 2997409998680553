"""``/api/promote``: the review queue, candidate detail, and attributed review events.

The reviewer of every write is the identity of the request's key (a
``review`` key is named after its reviewer; ``flywheel._auth``), never a
header: an ``X-Flywheel-Reviewer`` header is ignored. Every write carries ``base_version``, the
review version the reviewer saw; a stale one is 409 and nothing is
overwritten (see ``promote._review``). Edits go through the same pydantic
``Task`` model as drafts. Every response body passes through
``promote._api_guard.guard_response`` (the trace's redactor) before it is sent.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from flywheel.promote._api_guard import candidate_view, guard_response
# The app applies it to trace views for keys without scope raw (flywheel._app).
from flywheel.promote._api_guard import redact_trace_view  # noqa: F401
from flywheel.promote._candidates import get_candidate
from flywheel.promote._review import STATUSES, queue, record_event, review_state, reviewer_progress
from pydantic import BaseModel, Field

from flywheel import UserError, request_principal, request_project, requires

router = APIRouter(prefix="/api/promote", tags=["promote"])


class ApiError(BaseModel):
    """The one error shape of the REST API: ``{"error": {"type", "message"}}``."""

    error: dict[str, str] = Field(examples=[{"type": "ConflictError", "message": "..."}])


_E400: dict[int | str, dict[str, Any]] = {
    400: {"model": ApiError, "description": "Invalid input (the message names it)."}
}
_E404: dict[int | str, dict[str, Any]] = {
    404: {"model": ApiError, "description": "No such candidate in the project."}
}
_E409: dict[int | str, dict[str, Any]] = {
    409: {
        "model": ApiError,
        "description": "Stale base_version, or claimed by another reviewer: nothing was written.",
    }
}
_E503: dict[int | str, dict[str, Any]] = {
    503: {"model": ApiError, "description": "The store did not answer."}
}


class ReviewView(BaseModel):
    """A candidate's folded review state."""

    version: int
    status: str
    claimed_by: str
    edited: bool
    approved_sha256: str
    decided_by: str
    reason: str
    events: list[dict[str, Any]] | None = None


class QueueRow(BaseModel):
    """One candidate in the review queue."""

    candidate_id: str
    trace_id: str
    evalset: str
    source: str
    reasons: list[str]
    slice: str
    stage: str
    cluster_id: str
    cluster_size: int
    sampled_at: int = Field(description="When the trace was sampled (Unix ns).")
    flagged_arguments: int = Field(
        description="Tool-call arguments of the source trace whose provenance carries a flag."
    )
    task_id: str
    split: str
    golden: bool
    review: ReviewView


class QueuePage(BaseModel):
    """A page of the queue."""

    items: list[QueueRow]
    count: int


class CandidateDetail(BaseModel):
    """What a reviewer reads: the redacted trace, its redaction report, provenance, the task."""

    candidate: dict[str, Any]
    redacted_steps: list[dict[str, Any]]
    redaction_report: dict[str, Any]
    provenance: list[dict[str, Any]]
    task: dict[str, Any] | None
    review: ReviewView


class BaseRequest(BaseModel):
    """A write based on the review version the reviewer saw."""

    base_version: int = Field(ge=0, description="The review version the reviewer saw.")


class ReasonRequest(BaseRequest):
    """A write with an optional reason."""

    reason: str = ""


class EditRequest(BaseRequest):
    """A reviewer's full task (validated by the eval-set ``Task`` model)."""

    task: dict[str, Any]


class DecisionRequest(BaseRequest):
    """Approve, reject (reason required) or ask for more information (reason required)."""

    decision: Literal["approve", "reject", "needs-info"]
    reason: str = ""


def _reviewer(request: Request) -> str:
    """The authenticated identity that every review event records."""
    return request_principal(request).identity


def _review_view(request: Request, state: Any, candidate_id: str) -> ReviewView:
    body = state.to_dict(with_events=False)
    return ReviewView(
        **guard_response(
            body,
            store=request.app.state.store,
            candidate_id=candidate_id,
            project=request_project(request),
        )
    )


@router.get(
    "/queue",
    operation_id="list_review_queue",
    dependencies=[requires("read", "review")],
    summary="Drafted candidates with their review state; failures first, filterable.",
    response_model=QueuePage,
    responses={**_E400, **_E503},
)
def list_queue(
    request: Request,
    evalset: str | None = Query(None, description="Only candidates feeding this eval set."),
    status: str | None = Query(None, description=f"One of {', '.join(STATUSES)}."),
    slice: str | None = Query(None, description="Only this slice."),
    source: str | None = Query(None, description="failure, success or explicit."),
    reviewer: str | None = Query(None, description="Claimed or decided by this reviewer."),
    reason: str | None = Query(None, description="A sampling reason contains this text."),
    limit: int = Query(100, ge=1, le=1000),
    offset: int = Query(0, ge=0),
) -> QueuePage:
    """The review queue."""
    items = queue(
        request.app.state.store,
        project=request_project(request),
        evalset=evalset,
        status=status,
        slice=slice,
        source=source,
        reviewer=reviewer,
        reason=reason,
        limit=limit,
        offset=offset,
    )
    rows = [QueueRow(**guard_response(i.to_dict())) for i in items]
    return QueuePage(items=rows, count=len(rows))


@router.get(
    "/candidates/{candidate_id}",
    operation_id="get_candidate",
    dependencies=[requires("read", "review")],
    summary="A candidate: redacted trace, redaction report, provenance, task and review events.",
    response_model=CandidateDetail,
    responses={**_E404, **_E503},
)
def get_candidate_route(request: Request, candidate_id: str) -> CandidateDetail:
    """Everything a reviewer needs, with no raw value (redacted steps only)."""
    store = request.app.state.store
    project = request_project(request)
    cand = get_candidate(store, candidate_id, project=project)
    state = review_state(store, cand, project=project)
    body = candidate_view(store, cand, state, project=project)
    report = cand.report()
    report["findings"] = body.pop("report_findings")
    return CandidateDetail(**body, redaction_report=report)


def _write(
    request: Request, candidate_id: str, kind: str, reviewer: str, base: int, **kw: Any
) -> ReviewView:
    state = record_event(
        request.app.state.store,
        candidate_id,
        kind,
        reviewer,
        base,
        project=request_project(request),
        **kw,
    )
    return _review_view(request, state, candidate_id)


_WRITE_ERRORS: dict[int | str, dict[str, Any]] = {**_E400, **_E404, **_E409, **_E503}


@router.post(
    "/candidates/{candidate_id}/claim",
    operation_id="claim_candidate",
    dependencies=[requires("review")],
    summary="Claim a candidate for review (409: held by someone else, or a stale version).",
    response_model=ReviewView,
    responses=_WRITE_ERRORS,
)
async def claim(
    request: Request,
    candidate_id: str,
    body: BaseRequest,
) -> ReviewView:
    """Append a claim event."""
    who = _reviewer(request)
    return await run_in_threadpool(_write, request, candidate_id, "claim", who, body.base_version)


@router.post(
    "/candidates/{candidate_id}/unclaim",
    operation_id="unclaim_candidate",
    dependencies=[requires("review")],
    summary="Give a claimed candidate back to the queue.",
    response_model=ReviewView,
    responses=_WRITE_ERRORS,
)
async def unclaim(
    request: Request,
    candidate_id: str,
    body: ReasonRequest,
) -> ReviewView:
    """Append an unclaim event."""
    who = _reviewer(request)
    return await run_in_threadpool(
        _write, request, candidate_id, "unclaim", who, body.base_version, reason=body.reason
    )


@router.post(
    "/candidates/{candidate_id}/reopen",
    operation_id="reopen_candidate",
    dependencies=[requires("review")],
    summary="Reopen a decided candidate (an approval is withdrawn from the next release).",
    response_model=ReviewView,
    responses=_WRITE_ERRORS,
)
async def reopen(
    request: Request,
    candidate_id: str,
    body: ReasonRequest,
) -> ReviewView:
    """Append a reopen event."""
    who = _reviewer(request)
    return await run_in_threadpool(
        _write, request, candidate_id, "reopen", who, body.base_version, reason=body.reason
    )


@router.put(
    "/candidates/{candidate_id}/task",
    operation_id="edit_candidate_task",
    dependencies=[requires("review")],
    summary="Replace the drafted task (validated by the Task model; graders must build).",
    response_model=ReviewView,
    responses=_WRITE_ERRORS,
)
async def edit(
    request: Request,
    candidate_id: str,
    body: EditRequest,
) -> ReviewView:
    """Append an edit event holding the whole new task."""
    who = _reviewer(request)
    return await run_in_threadpool(
        _write, request, candidate_id, "edit", who, body.base_version, task=body.task
    )


@router.post(
    "/candidates/{candidate_id}/decision",
    operation_id="decide_candidate",
    dependencies=[requires("review")],
    summary="Approve, reject (with reason) or mark needs-info (with reason).",
    response_model=ReviewView,
    responses=_WRITE_ERRORS,
)
async def decide(
    request: Request,
    candidate_id: str,
    body: DecisionRequest,
) -> ReviewView:
    """Append a decision event; approve records the exact task content by SHA-256."""
    who = _reviewer(request)
    return await run_in_threadpool(
        _write, request, candidate_id, body.decision, who, body.base_version, reason=body.reason
    )


class RedactRequest(BaseRequest):
    """Extra redaction rules for one candidate (kept: later re-runs apply them again)."""

    key_rules: dict[str, str] = Field(
        default_factory=dict, description="JSON key -> label (NAME, EMAIL, AUTO...)."
    )
    deny_strings: dict[str, list[str]] = Field(
        default_factory=dict, description="Label -> exact strings always redacted."
    )


def _redact(
    request: Request, candidate_id: str, reviewer: str, body: RedactRequest
) -> ReviewView:
    from flywheel.promote._rerun import redact_candidate

    state = redact_candidate(
        request.app.state.store,
        candidate_id,
        reviewer,
        body.base_version,
        key_rules=body.key_rules,
        deny_strings=body.deny_strings,
        project=request_project(request),
    )
    return _review_view(request, state, candidate_id)


@router.post(
    "/candidates/{candidate_id}/redact",
    operation_id="redact_candidate",
    dependencies=[requires("review")],
    summary="Re-run redaction from the raw trace with extra key rules / deny strings.",
    response_model=ReviewView,
    responses=_WRITE_ERRORS,
)
async def redact(
    request: Request,
    candidate_id: str,
    body: RedactRequest,
) -> ReviewView:
    """Re-redact, re-draft the task's prompt and rubric, and append a redact event."""
    who = _reviewer(request)
    return await run_in_threadpool(_redact, request, candidate_id, who, body)


class LeakExceptionRequest(BaseModel):
    """A release-scanner finding a reviewer checked and lets into releases."""

    evalset: str = Field(min_length=1, description="Eval set whose release reported it.")
    task_id: str = Field(description="Task id from the report ('' for a manifest finding).")
    path: str = Field(min_length=1, description="JSON path from the report.")
    entity: str = Field(min_length=1, description="Entity type from the report (NAME, EMAIL...).")
    reason: str = Field(min_length=1, description="What the reviewer checked at that path.")


class LeakExceptionView(BaseModel):
    """The recorded exception (an append-only review event)."""

    evalset: str
    task_id: str
    path: str
    entity: str
    reviewer: str
    event_id: str
    seq: int


@router.post(
    "/leak-exceptions",
    operation_id="record_leak_exception",
    dependencies=[requires("review")],
    summary="Let one release-scanner finding (task, path, type) into releases; a review event.",
    response_model=LeakExceptionView,
    responses=_WRITE_ERRORS,
)
async def leak_exception(
    request: Request,
    body: LeakExceptionRequest,
) -> LeakExceptionView:
    """Append a ``leak-exception`` review event attributed to the acting reviewer."""
    from flywheel.promote._leak_exceptions import record_leak_exception

    who = _reviewer(request)
    out = await run_in_threadpool(
        lambda: record_leak_exception(
            request.app.state.store,
            evalset=body.evalset,
            task_id=body.task_id,
            path=body.path,
            entity=body.entity,
            reviewer=who,
            reason=body.reason,
            project=request_project(request),
        )
    )
    return LeakExceptionView(**guard_response(out))


class ReviewerProgress(BaseModel):
    """One reviewer's work."""

    reviewer: str
    events: dict[str, int]
    decisions: int
    approved: int
    rejected: int
    needs_info: int
    claimed_now: int
    last_event_at: int


@router.get(
    "/reviewers",
    operation_id="list_reviewer_progress",
    dependencies=[requires("read", "review")],
    summary="Per reviewer: events by kind, decisions, candidates held now.",
    response_model=list[ReviewerProgress],
    responses=_E503,
)
def reviewers(request: Request) -> list[ReviewerProgress]:
    """Per-reviewer progress."""
    rows = reviewer_progress(request.app.state.store, project=request_project(request))
    return [ReviewerProgress(**r) for r in rows]
