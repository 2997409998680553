"""Reading traces back: the trace list with its filters, and one whole trace.

The list reads ``trace_summaries`` (one aggregate row per trace, possibly
several partial rows before a merge, hence GROUP BY with the matching
aggregates), which adds spans up as they arrive: exact while no span id of the
trace was stored twice. Traces that repeat one (an exporter's retry, a resend,
a reused span id; marked in ``trace_duplicates`` before the insert, see
``_duplicates``) are computed from their spans with each span counted once
(``WINNER``: the last write wins), the rows the detail view shows; every
filter applies to the figures shown. Opening a trace reads ``agent_steps`` by
its primary key ``(project_id, trace_id, ...)``, takes the trace's exact time
range from those rows (or from the collector's trace-id lookup table when no
step is stored) and reads the raw spans of the span table only inside that
range, so opening a trace never scans the span table. Every value reaches
ClickHouse as a bound parameter.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import gc
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from flywheel import NotFoundError, Store, UserError

from ._models import SpanEvent, SpanLink, SpanNode, Step, TraceDetail, TraceSummary
from ._turns import normalise_steps
from ._usage import trace_usage

#: Largest page of the trace list.
MAX_LIMIT = 1000
_STATUSES = ("ok", "error")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)\s*$")
_UNITS_NS = {
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
    "d": 86_400_000_000_000,
    "w": 604_800_000_000_000,
}
_HEX = re.compile(r"^[0-9a-fA-F]+$")


# -- values from users --------------------------------------------------------
def parse_time(value: str | int | None, *, now_ns: int | None = None) -> int | None:
    """A point in time as ns since the epoch, from what a user types.

    Accepts ISO 8601 (``2026-11-30T17:00:00Z``; no zone means UTC), a
    duration ago (``90s``, ``15m``, ``2h``, ``7d``, ``1w``), or an integer
    (seconds, milliseconds or nanoseconds since the epoch, told apart by size).
    None and '' mean no bound.
    """
    if value is None or value == "":
        return None
    now = time.time_ns() if now_ns is None else now_ns
    if isinstance(value, int) or (isinstance(value, str) and value.strip().isdigit()):
        n = int(value)
        if n < 10**11:
            return n * 1_000_000_000
        if n < 10**14:
            return n * 1_000_000
        return n
    text = str(value).strip()
    m = _DURATION.match(text)
    if m:
        return now - int(float(m.group(1)) * _UNITS_NS[m.group(2)])
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    except ValueError:
        raise UserError(
            f"cannot read the time {value!r}; use ISO 8601 (2026-11-30T17:00:00Z), "
            "a duration ago (15m, 2h, 7d) or seconds since the epoch"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return int(when.timestamp()) * 1_000_000_000 + when.microsecond * 1000


def normalize_trace_id(trace_id: str) -> str:
    """The stored form of a trace id: hex ids are lowercase; blanks are refused."""
    tid = (trace_id or "").strip()
    if not tid or len(tid) > 256:
        raise UserError(f"invalid trace id {trace_id!r}; expected 32 hex digits")
    return tid.lower() if _HEX.match(tid) else tid


def encode_cursor(summary: TraceSummary) -> str:
    """The opaque cursor that continues the list after ``summary``."""
    raw = f"{summary.start_ns}:{summary.trace_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    """``(start_ns, trace_id)`` of a cursor made by ``encode_cursor``."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        start, tid = raw.split(":", 1)
        return int(start), tid
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise UserError(
            f"invalid cursor {cursor!r}; pass the next_cursor of the previous page"
        ) from None


# -- the list -----------------------------------------------------------------
#: Which row of a span the readers use when a span id was stored more than once
#: (an exporter's retry, a resend, two writers): the last write, i.e. the row with
#: the latest ingest time; rows stored in the same millisecond are ordered by a
#: hash of their content, so the list, its filters and the detail view all pick
#: the same row. ``agent_steps`` is a ReplacingMergeTree on that ingest time, so
#: a merge keeps the same winner where it folds rows together.
WINNER = (
    "(ingest_time, cityHash64(span_name, kind, tool_name, arguments, result, input, output,"
    " status, error, start_time, duration_ns, input_tokens, output_tokens, total_tokens,"
    " cost, parent_span_id, service_name, session_id))"
)

#: One row per (trace, span) of the marked traces of a project: the winning row.
_SPANS_ONCE = f"""
SELECT trace_id, span_id,
       argMax(parent_span_id, v) AS parent, argMax(service_name, v) AS svc_name,
       argMax(span_name, v) AS name, argMax(session_id, v) AS session,
       argMax(start_time, v) AS t_start, argMax(duration_ns, v) AS dur,
       argMax(status, v) AS st, argMax(kind, v) AS k, argMax(tool_name, v) AS tool_n,
       argMax(input_tokens, v) AS input_tokens, argMax(output_tokens, v) AS output_tokens,
       argMax(total_tokens, v) AS total_tokens, argMax(cost, v) AS cost
FROM (SELECT *, {WINNER} AS v FROM agent_steps WHERE project_id = {{project:String}}
      AND trace_id IN (SELECT trace_id FROM trace_duplicates WHERE project_id = {{project:String}}))
GROUP BY trace_id, span_id
"""

#: Usage from ``trace_summaries`` rows: model calls' sums, else the largest
#: aggregate (the rule of ``_usage``, which the detail view applies).
USAGE_SQL = ",\n    ".join(
    f"if(sum({col}) > 0, sum({col}), max(agg_{col})) AS {alias}"
    for col, alias in (
        ("input_tokens", "tok_in"),
        ("output_tokens", "tok_out"),
        ("total_tokens", "tok_total"),
        ("cost", "cost_sum"),
    )
)
#: The same rule over de-duplicated spans (``k`` is the step kind).
_USAGE_ONCE_SQL = ",\n    ".join(
    f"if(sumIf({col}, k = 'llm') > 0, sumIf({col}, k = 'llm'), maxIf({col}, k != 'llm'))"
    f" AS {alias}"
    for col, alias in (
        ("input_tokens", "tok_in"),
        ("output_tokens", "tok_out"),
        ("total_tokens", "tok_total"),
        ("cost", "cost_sum"),
    )
)

#: Traces whose root span ended in error (rows of unmarked traces are exact).
_ROOT_ERRORS = ("SELECT trace_id FROM agent_steps WHERE project_id = {project:String}"
                " AND parent_span_id = '' AND status = 'error'")

_LIST_SQL = """
SELECT * FROM (
    SELECT
        trace_id,
        max(service_name) AS svc,
        max(root_name) AS root,
        max(session_id) AS sess,
        toUnixTimestamp64Nano(min(start_time)) AS t0,
        toUnixTimestamp64Nano(max(end_time)) AS t1,
        sum(span_count) AS n_spans,
        sum(error_count) AS n_errors,
        sum(tool_calls) AS n_tools,
        {root_error} AS root_error,
        0 AS exact,
        {usage},
        groupUniqArrayArray(tool_names) AS tools
    FROM trace_summaries
    WHERE project_id = {{project:String}}
      AND trace_id NOT IN (SELECT trace_id FROM trace_duplicates WHERE project_id = {{project:String}})
    GROUP BY trace_id
    UNION ALL
    SELECT
        trace_id,
        max(if(parent = '', svc_name, '')) AS svc,
        max(if(parent = '', name, '')) AS root,
        max(session) AS sess,
        toUnixTimestamp64Nano(min(t_start)) AS t0,
        toUnixTimestamp64Nano(max(t_start + toIntervalNanosecond(dur))) AS t1,
        count() AS n_spans,
        countIf(st = 'error') AS n_errors,
        countIf(k = 'tool') AS n_tools,
        countIf(parent = '' AND st = 'error') > 0 AS root_error,
        1 AS exact,
        {usage_once},
        groupUniqArrayIf(toString(tool_n), tool_n != '') AS tools
    FROM ({spans})
    GROUP BY trace_id
)
WHERE {where}
ORDER BY t0 DESC, trace_id DESC
LIMIT {{limit:UInt32}} OFFSET {{offset:UInt64}}
"""

#: Traces with a winning step whose text contains ``text`` (rows that lost to a
#: later write of the same span do not count).
_TEXT_SQL = """
trace_id IN (
    SELECT trace_id FROM (
        SELECT trace_id, span_id, argMax((input, output, arguments, result), {winner}) AS t
        FROM agent_steps
        WHERE project_id = {{project:String}} AND trace_id IN (
            SELECT trace_id FROM agent_steps WHERE project_id = {{project:String}} AND ({match}))
        GROUP BY trace_id, span_id)
    WHERE {match_t})"""
_MATCH = " OR ".join(
    f"positionCaseInsensitiveUTF8({col}, {{text:String}}) > 0"
    for col in ("input", "output", "arguments", "result")
)
_MATCH_T = " OR ".join(
    f"positionCaseInsensitiveUTF8(t.{i}, {{text:String}}) > 0" for i in range(1, 5)
)


def list_traces(
    store: Store,
    *,
    project: str = "default",
    service: str | None = None,
    since_ns: int | None = None,
    until_ns: int | None = None,
    status: str | None = None,
    has_error: bool | None = None,
    tool: str | None = None,
    text: str | None = None,
    limit: int = 50,
    offset: int = 0,
    cursor: str | None = None,
) -> list[TraceSummary]:
    """Traces of ``project``, newest first, that pass every given filter.

    Every figure and filter is computed from the trace's spans with each span
    counted once (``WINNER``: the last write of a span id wins), so the list
    equals the detail view after any number of resends.

    Args:
        store: The store to read.
        project: Project id.
        service: Service name of the root span (exact).
        since_ns: Only traces that started at or after this time (ns).
        until_ns: Only traces that started before this time (ns).
        status: 'error' for traces whose root span ended in error, 'ok' for the others.
        has_error: True for traces with at least one span in error, False for none.
        tool: Only traces that called this tool (exact name).
        text: Case-insensitive substring of a step's input, output, arguments or result.
        limit: Page size, 1..MAX_LIMIT.
        offset: Rows to skip (after the cursor, if any).
        cursor: ``next_cursor`` of the previous page (keyset paging, stable under inserts).
    """
    if not 1 <= limit <= MAX_LIMIT:
        raise UserError(f"limit {limit} is out of range; use 1..{MAX_LIMIT}")
    if offset < 0:
        raise UserError(f"offset {offset} is negative; use 0 or more")
    if since_ns is not None and until_ns is not None and since_ns >= until_ns:
        raise UserError("the time range is empty: since must be before until")
    if status is not None and status not in _STATUSES:
        raise UserError(f"unknown status {status!r}; use 'ok' or 'error'")
    params: dict[str, Any] = {"project": project, "limit": limit, "offset": offset}
    where: list[str] = ["1"]
    if service:
        where.append("svc = {service:String}")
        params["service"] = service
    if since_ns is not None:
        where.append("t0 >= {since:Int64}")
        params["since"] = since_ns
    if until_ns is not None:
        where.append("t0 < {until:Int64}")
        params["until"] = until_ns
    if has_error is not None:
        where.append("n_errors > 0" if has_error else "n_errors = 0")
    if status is not None:
        where.append("root_error" if status == "error" else "NOT root_error")
    if tool:
        where.append("has(tools, {tool:String})")
        params["tool"] = tool
    if text:
        where.append(_TEXT_SQL.format(winner=WINNER, match=_MATCH, match_t=_MATCH_T))
        params["text"] = text
    if cursor:
        c_start, c_tid = decode_cursor(cursor)
        where.append(
            "(t0 < {c_start:Int64} OR (t0 = {c_start:Int64} AND trace_id < {c_tid:String}))"
        )
        params.update(c_start=c_start, c_tid=c_tid)
    sql = _LIST_SQL.format(
        # the root-error scan only when the status filter needs it; else per page below
        root_error=f"trace_id IN ({_ROOT_ERRORS})" if status is not None else "0",
        usage=USAGE_SQL,
        usage_once=_USAGE_ONCE_SQL,
        spans=_SPANS_ONCE,
        where=" AND ".join(where),
    )
    rows = store.query(sql, params)
    if status is None:
        roots = _root_errors(store, project, [r["trace_id"] for r in rows if not r["exact"]])
        rows = [{**r, "root_error": r["root_error"] or r["trace_id"] in roots} for r in rows]
    outcomes = _outcomes(store, project, [r["trace_id"] for r in rows])
    return [_summary(r, project, outcomes.get(r["trace_id"], "")) for r in rows]


def _root_errors(store: Store, project: str, trace_ids: list[str]) -> set[str]:
    """Which of ``trace_ids`` have a root span in error (one primary-key read)."""
    if not trace_ids:
        return set()
    rows = store.query(
        f"SELECT DISTINCT trace_id FROM ({_ROOT_ERRORS}) WHERE trace_id IN {{ids:Array(String)}}",
        {"project": project, "ids": trace_ids},
    )
    return {r["trace_id"] for r in rows}


def _outcomes(store: Store, project: str, trace_ids: list[str]) -> dict[str, str]:
    """Graded outcomes of ``trace_ids`` (kept in ``trace_summaries``), one primary-key read."""
    if not trace_ids:
        return {}
    rows = store.query(
        "SELECT trace_id, max(outcome) AS o FROM trace_summaries WHERE project_id = {project:String}"
        " AND trace_id IN {ids:Array(String)} GROUP BY trace_id",
        {"project": project, "ids": trace_ids},
    )
    return {r["trace_id"]: r["o"] or "" for r in rows}


def _summary(r: dict[str, Any], project: str, outcome: str) -> TraceSummary:
    return TraceSummary(
        trace_id=r["trace_id"],
        project=project,
        service_name=r["svc"] or "",
        root_name=r["root"] or "",
        session_id=r["sess"] or "",
        status="error" if r["root_error"] else "ok",
        outcome=outcome,
        start_ns=int(r["t0"]),
        end_ns=int(r["t1"]),
        span_count=int(r["n_spans"]),
        error_count=int(r["n_errors"]),
        tool_calls=int(r["n_tools"]),
        tool_names=sorted(r["tools"] or []),
        input_tokens=int(r["tok_in"]),
        output_tokens=int(r["tok_out"]),
        total_tokens=int(r["tok_total"]),
        cost=float(r["cost_sum"]),
    )


# -- one trace ----------------------------------------------------------------
_STEPS_SQL = """
SELECT span_id, parent_span_id, service_name, span_name, kind, tool_name, tool_call_id,
       arguments, result, input, output, model, agent_name, session_id,
       toUnixTimestamp64Nano(start_time) AS start_ns, duration_ns,
       input_tokens, output_tokens, total_tokens, cost, status, error,
       toUnixTimestamp64Milli(ingest_time) AS ingested
FROM agent_steps
WHERE project_id = {{project:String}} AND trace_id = {{trace:String}}
ORDER BY span_id, {winner} DESC
LIMIT 1 BY span_id
""".format(winner=WINNER)

_SPANS_SQL = """
SELECT SpanId, ParentSpanId, SpanName, ServiceName, SpanKind, ScopeName, StatusCode,
       StatusMessage, toUnixTimestamp64Nano(Timestamp) AS start_ns, Duration,
       SpanAttributes, ResourceAttributes,
       arrayMap(t -> toUnixTimestamp64Nano(t), Events.Timestamp) AS ev_ts,
       Events.Name AS ev_name, Events.Attributes AS ev_attrs,
       Links.TraceId AS ln_trace, Links.SpanId AS ln_span, Links.Attributes AS ln_attrs,
       toUnixTimestamp64Milli(IngestTime) AS ingested
FROM {table}
WHERE TraceId = {{trace:String}} AND ProjectId = {{project:String}}
  AND Timestamp >= fromUnixTimestamp64Nano({{lo:Int64}})
  AND Timestamp <= fromUnixTimestamp64Nano({{hi:Int64}})
"""


@dataclass
class _Span:
    """A span while its trace is assembled: the step row and/or the raw row."""

    span_id: str
    parent: str
    start_ns: int
    step: dict[str, Any] | None = None
    raw: dict[str, Any] | None = None


def get_trace(
    store: Store, trace_id: str, *, project: str = "default", attributes: bool = True
) -> TraceDetail:
    """One trace: its summary and every span in tree order, with its step.

    Raises ``NotFoundError`` when the project has no span of ``trace_id``.
    With ``attributes=False`` the raw span table is not read (steps only).
    """
    tid = normalize_trace_id(trace_id)
    with _gc_paused():
        return _get_trace(store, tid, project, attributes)


_gc_lock = threading.Lock()
_gc_users = 0
_gc_was_enabled = False


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector while a trace is assembled.

    A 10,000-span trace allocates a few hundred thousand objects (no cycles);
    every allocation burst triggers a collection that walks them all again,
    which took half of the time to open a trace. Reference counting still
    frees memory; the collector resumes when the last assembly ends.
    """
    global _gc_users, _gc_was_enabled
    with _gc_lock:
        if _gc_users == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _gc_users += 1
    try:
        yield
    finally:
        with _gc_lock:
            _gc_users -= 1
            if _gc_users == 0 and _gc_was_enabled:
                gc.enable()


def _get_trace(store: Store, tid: str, project: str, attributes: bool) -> TraceDetail:
    params = {"project": project, "trace": tid}
    spans: dict[str, _Span] = {}
    for r in _rows(store, _STEPS_SQL, params):  # one row per span: the winning write
        spans[r["span_id"]] = _Span(r["span_id"], r["parent_span_id"], int(r["start_ns"]), step=r)
    # The time range bounds the span-table read: the collector's trace-id
    # lookup (seconds) widened by the steps' exact range (spans of an adopted
    # table that predate the normalising view have no step).
    ranges = [r for r in (_lookup_range(store, tid),) if r is not None]
    if spans:
        starts = [s.start_ns for s in spans.values()]
        ranges.append((min(starts), max(starts)))
    if not ranges:
        raise NotFoundError(
            f"no trace {tid} in project {project!r}; list traces with `flywheel traces list`"
        )
    lo, hi = min(r[0] for r in ranges), max(r[1] for r in ranges)
    if attributes or not spans:
        sql = _SPANS_SQL.format(table=store.otel_table)
        for r in _rows(store, sql, {**params, "lo": lo, "hi": hi}):
            sid = r["SpanId"]
            cur = spans.get(sid)
            if cur is None:
                spans[sid] = _Span(sid, r["ParentSpanId"], int(r["start_ns"]), raw=r)
            elif cur.raw is None or _raw_fit(cur, r) > _raw_fit(cur, cur.raw):
                cur.raw = r  # the raw row of the winning write (attributes, events)
    if not spans:
        raise NotFoundError(
            f"no trace {tid} in project {project!r}; list traces with `flywheel traces list`"
        )
    rows = []
    for s in sorted(spans.values(), key=lambda s: (s.start_ns, s.span_id)):
        if s.step is not None:
            st = s.step
            st["attributes"] = s.raw["SpanAttributes"] if s.raw else {}  # tool definitions
            st["input"], st["output"] = _maybe_json(st["input"]), _maybe_json(st["output"])
            rows.append(st)
    normalise_steps(rows)
    nodes = _assemble(spans)
    outcome = store.scalar(
        "SELECT max(outcome) AS o FROM trace_summaries"
        " WHERE project_id = {project:String} AND trace_id = {trace:String}",
        params,
    )
    session = max((s.step["session_id"] for s in spans.values() if s.step), default="")
    summary = _summarise(tid, project, nodes, outcome or "", session)
    roots = [n.span_id for n in nodes if n.depth == 0]
    return TraceDetail(trace_id=tid, project=project, summary=summary, roots=roots, spans=nodes)


def _raw_fit(span: _Span, raw: dict[str, Any]) -> tuple[int, ...]:
    """How well a raw span row matches the span's winning step (higher is better).

    A span id stored several times has several raw rows; its attributes are
    shown from the row the winning step was derived from. Without a step the
    latest write wins.
    """
    st = span.step
    if st is None:
        return (int(raw["ingested"]),)
    return (int(raw["ingested"] == st["ingested"]), int(int(raw["start_ns"]) == span.start_ns),
            int(raw["SpanName"] == st["span_name"]), int(raw["Duration"] == st["duration_ns"]),
            int(raw["ingested"]))


def _rows(store: Store, sql: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """Rows of a query, converted column by column.

    ``Store.query`` converts row by row; for a 10,000-span trace with maps
    that is ten times slower than ``to_pylist`` on each column. Map columns
    (also inside lists) become dicts.
    """
    table = store.query_arrow(sql, params)
    if not table.num_columns:
        return []
    cols: dict[str, list[Any]] = {}
    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type):
            col = col.cast(pa.string())
        values = col.to_pylist()
        if pa.types.is_map(col.type):
            values = [dict(v) if v else {} for v in values]
        elif pa.types.is_list(col.type) and pa.types.is_map(col.type.value_type):
            values = [[dict(m) for m in v] if v else [] for v in values]
        cols[name] = values
    names = list(cols)
    return [dict(zip(names, vals, strict=True)) for vals in zip(*cols.values(), strict=True)]


def _lookup_range(store: Store, tid: str) -> tuple[int, int] | None:
    """The trace's time range from the collector's trace-id lookup table (second precision)."""
    row = store.query(
        f"SELECT toUnixTimestamp(min(Start)) AS lo, toUnixTimestamp(max(End)) AS hi, count() AS n"
        f" FROM {store.otel_table}_trace_id_ts WHERE TraceId = {{trace:String}}",
        {"trace": tid},
    )
    if not row or not row[0]["n"]:
        return None
    return int(row[0]["lo"]) * 1_000_000_000, (int(row[0]["hi"]) + 1) * 1_000_000_000 - 1


def _assemble(spans: dict[str, _Span]) -> list[SpanNode]:
    """Number steps by start time, then lay the spans out depth-first."""
    ordered = sorted(spans.values(), key=lambda s: (s.start_ns, s.span_id))
    order = {s.span_id: i + 1 for i, s in enumerate(ordered)}
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for s in ordered:  # in start order, so every child list is by start time
        if s.parent and s.parent in spans and s.parent != s.span_id:
            children.setdefault(s.parent, []).append(s.span_id)
        else:
            roots.append(s.span_id)
    out: list[SpanNode] = []
    seen: set[str] = set()

    def walk(root: str) -> None:
        stack = [(root, 0)]
        while stack:
            sid, depth = stack.pop()
            if sid in seen:
                continue
            seen.add(sid)
            # a span has one parent, so an unseen child is laid out right
            # under it; a seen one is the back edge of a parent cycle
            kids = [k for k in children.get(sid, ()) if k not in seen]
            out.append(_node(spans[sid], order[sid], depth, kids))
            stack.extend((k, depth + 1) for k in reversed(kids))

    for r in roots:
        walk(r)
    for s in ordered:  # spans on a parent cycle have no root: show them as roots
        if s.span_id not in seen:
            walk(s.span_id)
    return out


def _json_value(text: str) -> Any:
    """A tool argument or result: JSON text, from the view or ``normalise_steps`` (None if '')."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _maybe_json(text: str) -> Any:
    """Parsed JSON when ``text`` holds a JSON object or array, else the text (None if '')."""
    if not text:
        return None
    head = text.lstrip()[:1]
    if head in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _node(s: _Span, order: int, depth: int, kids: list[str]) -> SpanNode:
    """The span's node (validated: pydantic-core beats model_construct here)."""
    st, raw = s.step, s.raw
    if st is not None:
        step = Step(
            order=order,
            kind=st["kind"],
            tool_name=st["tool_name"],
            tool_call_id=st["tool_call_id"],
            arguments=_json_value(st["arguments"]),
            result=_json_value(st["result"]),
            input=st["input"],  # parsed before normalising
            output=st["output"],
            input_turns=st["input_turns"],
            output_turns=st["output_turns"],
            model=st["model"],
            agent_name=st["agent_name"],
            input_tokens=st["input_tokens"],
            output_tokens=st["output_tokens"],
            total_tokens=st["total_tokens"],
            cost=st["cost"],
            start_ns=s.start_ns,
            duration_ns=st["duration_ns"],
            status=st["status"],
            error=st["error"],
        )
    else:  # a span stored before the normalising view existed
        code = (raw or {}).get("StatusCode", "")
        status = (
            "error" if "rror" in code else "ok" if code in ("Ok", "STATUS_CODE_OK") else "unset"
        )
        step = Step(
            order=order,
            kind="other",
            start_ns=s.start_ns,
            duration_ns=(raw or {}).get("Duration", 0),
            status=status,
            error=(raw or {}).get("StatusMessage", "") if status == "error" else "",
        )
    node: dict[str, Any] = {
        "span_id": s.span_id,
        "parent_span_id": s.parent,
        "depth": depth,
        "children": kids,
        "name": st["span_name"] if st else raw["SpanName"] if raw else "",
        "service_name": st["service_name"] if st else raw["ServiceName"] if raw else "",
        "span_kind": "",
        "scope_name": "",
        "status_message": "",
        "step": step,
        "attributes": {},
        "resource_attributes": {},
        "events": [],
        "links": [],
    }
    if raw is not None:
        node.update(
            span_kind=raw["SpanKind"],
            scope_name=raw["ScopeName"],
            status_message=raw["StatusMessage"],
            attributes=raw["SpanAttributes"],
            resource_attributes=raw["ResourceAttributes"],
            events=[
                SpanEvent(time_ns=t, name=n, attributes=a)
                for t, n, a in zip(raw["ev_ts"], raw["ev_name"], raw["ev_attrs"], strict=True)
            ],
            links=[
                SpanLink(trace_id=t, span_id=i, attributes=a)
                for t, i, a in zip(raw["ln_trace"], raw["ln_span"], raw["ln_attrs"], strict=True)
            ],
        )
    return SpanNode(**node)


def _summarise(
    tid: str, project: str, nodes: list[SpanNode], outcome: str, session: str
) -> TraceSummary:
    """The trace's summary from its spans (the same rules as ``trace_summaries``)."""
    roots = [n for n in nodes if not n.parent_span_id]
    steps = [n.step for n in nodes]
    usage = trace_usage(steps)
    return TraceSummary(
        trace_id=tid,
        project=project,
        service_name=max((n.service_name for n in roots), default=""),
        root_name=max((n.name for n in roots), default=""),
        session_id=session,
        status="error" if any(n.step.status == "error" for n in roots) else "ok",
        outcome=outcome,
        start_ns=min(s.start_ns for s in steps),
        end_ns=max(s.start_ns + s.duration_ns for s in steps),
        span_count=len(nodes),
        error_count=sum(s.status == "error" for s in steps),
        tool_calls=sum(s.kind == "tool" for s in steps),
        tool_names=sorted({s.tool_name for s in steps if s.tool_name}),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        cost=usage.cost,
    )
