"""REST routes of the trace read side: ``GET /api/traces`` and ``GET /api/traces/{trace_id}``.

Thin over ``ingest._read``. Bad values raise ``UserError`` (400 through the
app's one error handler); the routes are plain ``def`` so FastAPI runs the
store reads in its thread pool. A trace is serialised once, straight from its
model to JSON bytes (a 10,000-span trace is megabytes; validating it a second
time as a response model would double the cost).

Who sees what: a trace's text (steps, attributes, events, names, status
messages) is personal data as recorded. A key with scope ``raw`` (and
``read``) gets it as recorded; a ``read`` key without ``raw`` gets it through
the app's trace-view redactor (``app.state.redact_trace_view``: promotion's
redactor, default policy, pseudonyms consistent within the response), the
same text a reviewer sees; with no redactor mounted it is refused (403), never
sent raw. The list's summaries (span and tool names) go the same way, and its
``text=`` search, which reads the text as recorded, needs ``raw``.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request, Response

from flywheel import ForbiddenError, Store, request_principal, request_project, requires

from ._models import ApiError, SpanNode, TraceDetail, TraceList
from ._read import MAX_LIMIT, encode_cursor, list_traces, parse_time
from ._trace import MAX_PAGE_SPANS, PAGE_SPANS, get_span, get_trace

router = APIRouter(prefix="/api/traces", tags=["traces"])

_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ApiError, "description": "A filter value is invalid (the message names it)."},
    503: {"model": ApiError, "description": "The store did not answer."},
}


def _ctx(request: Request) -> tuple[Store, str]:
    return request.app.state.store, request_project(request)


def _viewed(request: Request, model: Any) -> Response:
    """``model`` as JSON, redacted unless the request's principal holds scope ``raw``."""
    if request_principal(request).allows("raw"):
        return Response(model.model_dump_json(), media_type="application/json")
    redact = getattr(request.app.state, "redact_trace_view", None)
    if redact is None:
        raise ForbiddenError(
            "trace text is shown redacted to keys without scope raw, and no redactor is "
            "mounted on this server; use a key with scopes read and raw"
        )
    return Response(json.dumps(redact(model.model_dump(mode="json")), ensure_ascii=False),
                    media_type="application/json")


@router.get(
    "",
    operation_id="list_traces",
    dependencies=[requires("read")],
    summary="List traces, newest first, by service, time, status, error, tool or text "
    "(names redacted and text search refused unless the key has scope raw).",
    response_model=TraceList,
    responses=_ERRORS,
)
def list_traces_route(
    request: Request,
    service: Annotated[str | None, Query(description="Service name of the root span.")] = None,
    since: Annotated[
        str | None,
        Query(
            description="Traces that started at or after: ISO 8601, a duration ago (15m, 2h, 7d) "
            "or epoch seconds/ms/ns."
        ),
    ] = None,
    until: Annotated[
        str | None, Query(description="Traces that started before (same forms).")
    ] = None,
    status: Annotated[
        Literal["ok", "error"] | None,
        Query(description="'error': the root span ended in error; 'ok': it did not."),
    ] = None,
    has_error: Annotated[bool | None, Query(description="Any span of the trace in error.")] = None,
    tool: Annotated[str | None, Query(description="The trace called this tool.")] = None,
    text: Annotated[
        str | None,
        Query(
            max_length=1000,
            description="Case-insensitive text in a step's input, output, arguments or result "
            "(searches the text as recorded: needs scope raw).",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Page size.")] = 50,
    offset: Annotated[int, Query(ge=0, description="Rows to skip.")] = 0,
    cursor: Annotated[str | None, Query(description="next_cursor of the previous page.")] = None,
) -> Response:
    """A page of trace summaries; follow ``next_cursor`` for the next page."""
    store, project = _ctx(request)
    if text and not request_principal(request).allows("raw"):
        raise ForbiddenError(
            "text= searches trace text as recorded, which would tell a key without scope raw "
            "what the redacted text hides; use a key with scopes read and raw"
        )
    traces = list_traces(
        store,
        project=project,
        service=service or None,
        since_ns=parse_time(since),
        until_ns=parse_time(until),
        status=status,
        has_error=has_error,
        tool=tool or None,
        text=text or None,
        limit=limit,
        offset=offset,
        cursor=cursor or None,
    )
    nxt = encode_cursor(traces[-1]) if len(traces) == limit else None
    return _viewed(request, TraceList(traces=traces, next_cursor=nxt))


@router.get(
    "/{trace_id}",
    operation_id="get_trace",
    dependencies=[requires("read")],
    summary="One trace: its summary and a page of its spans in tree order with their steps "
    "(text redacted unless the key has scope raw).",
    response_model=TraceDetail,
    responses={**_ERRORS, 404: {"model": ApiError, "description": "No such trace in the project."}},
)
def get_trace_route(
    request: Request,
    trace_id: str,
    attributes: Annotated[
        bool, Query(description="Include raw span and resource attributes, events and links.")
    ] = True,
    offset: Annotated[
        int, Query(ge=0, description="First span of the page (next_offset of the previous page).")
    ] = 0,
    limit: Annotated[
        int, Query(ge=1, le=MAX_PAGE_SPANS, description="Spans per page.")
    ] = PAGE_SPANS,
) -> Response:
    """The span tree a page at a time: depth-first with ``depth`` and ``children``.

    ``summary`` and ``roots`` describe the whole trace; follow ``next_offset``
    until it is null for the rest of the spans.
    """
    store, project = _ctx(request)
    detail = get_trace(store, trace_id, project=project, attributes=attributes,
                       offset=offset, limit=limit)
    return _viewed(request, detail)


@router.get(
    "/{trace_id}/spans/{span_id}",
    operation_id="get_span",
    dependencies=[requires("read")],
    summary="One span of a trace with its step, attributes, events and links "
    "(text redacted unless the key has scope raw).",
    response_model=SpanNode,
    responses={**_ERRORS, 404: {"model": ApiError, "description": "No such trace or span."}},
)
def get_span_route(request: Request, trace_id: str, span_id: str) -> Response:
    """A span's attributes on demand (page a large trace with ``attributes=false``)."""
    store, project = _ctx(request)
    return _viewed(request, get_span(store, trace_id, span_id, project=project))
