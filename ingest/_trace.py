"""Opening one trace: its summary, its span tree, and its spans a page at a time.

A trace may hold tens of thousands of spans and tens of megabytes of text, so
it is read in two passes. The *outline* reads the light columns of every span
(ids, parent, start, kind, tool, status, usage) from ``agent_steps`` by its
primary key ``(project_id, trace_id, ...)``: enough for the summary, the tree
layout (depth-first, children by start time) and the roots. A *page* then
reads the heavy columns (inputs, outputs, arguments, results) of the spans
at positions ``offset .. offset + limit`` of that layout only, and their raw
span rows (attributes, events, links) only when asked for, inside the page's
exact time range, so the span table is never scanned. A 50,000-span trace
therefore answers its first page in the time of its outline. The heavy
columns of a step written since ingest migration 013 are computed from its
span row (``agent_steps``' ALIAS columns look the row up by trace id, span id
and attribute hash): the span table's trace-id bloom filter keeps that read
to the granules holding the trace.

Each (trace, span) counts once (``_read.WINNER``: the last write wins) in the
outline and in the page. The rows are the same as a whole-trace read: a
page's tool steps are normalised with the model calls before them only when a
bare argument needs a name (``normalise_steps``); that reads the earlier
model outputs (and, with attributes, every span's tool definitions), the one
case where a page costs more than its own spans. Spans of an adopted span
table with no step (stored before the normalising view existed) come from
the raw rows; with ``attributes=False`` they are left out unless the trace
has no step at all. Every value reaches ClickHouse as a bound parameter.
"""

from __future__ import annotations

import gc
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from flywheel import NotFoundError, Store, UserError

from ._models import SpanEvent, SpanLink, SpanNode, Step, TraceDetail, TraceSummary
from ._read import WINNER, normalize_trace_id
from ._turns import normalise_steps, tool_arguments
from ._usage import table_usage

#: Spans of one page of a trace (the API's default and largest page).
PAGE_SPANS = 1000
MAX_PAGE_SPANS = 10_000
#: The first page a terminal asks for: its lines come before the rest is read.
FIRST_PAGE_SPANS = 100

_STEP_COLUMNS = """span_id, parent_span_id, service_name, span_name, kind, tool_name, tool_call_id,
       arguments, result, input, output, model, agent_name, session_id,
       toUnixTimestamp64Nano(start_time) AS start_ns, duration_ns,
       input_tokens, output_tokens, total_tokens, cost, status, error,
       toUnixTimestamp64Milli(ingest_time) AS ingested"""

#: Every span's light columns, one row per span (its winning write).
_OUTLINE_SQL = """
SELECT span_id, parent_span_id, service_name, span_name, kind, tool_name, session_id,
       toUnixTimestamp64Nano(start_time) AS start_ns, toInt64(duration_ns) AS duration_ns,
       toInt64(input_tokens) AS input_tokens, toInt64(output_tokens) AS output_tokens,
       toInt64(total_tokens) AS total_tokens, toFloat64(cost) AS cost, status, error,
       true AS has_step
FROM agent_steps
WHERE project_id = {{project:String}} AND trace_id = {{trace:String}}
{once}
"""

#: The steps of one page, whole.
_STEPS_SQL = f"""
SELECT {_STEP_COLUMNS}
FROM agent_steps
WHERE project_id = {{project:String}} AND trace_id = {{trace:String}}
  AND span_id IN {{ids:Array(String)}}
  AND start_time >= fromUnixTimestamp64Nano({{lo:Int64}})
  AND start_time <= fromUnixTimestamp64Nano({{hi:Int64}})
ORDER BY span_id, {WINNER} DESC
LIMIT 1 BY span_id
"""

#: The model calls' outputs of a trace (the context that names a bare argument).
_CALLS_SQL = f"""
SELECT span_id, kind, output, toUnixTimestamp64Nano(start_time) AS start_ns
FROM agent_steps
WHERE project_id = {{project:String}} AND trace_id = {{trace:String}}
  AND kind IN ('llm', 'agent')
ORDER BY span_id, {WINNER} DESC
LIMIT 1 BY span_id
"""

#: Spans of the raw table that have no step, in the outline's columns (an
#: anti-join: usually no row at all); of a span written twice the latest write.
_RAW_OUTLINE_SQL = """
SELECT SpanId AS span_id, ParentSpanId AS parent_span_id, ServiceName AS service_name,
       SpanName AS span_name, 'other' AS kind, '' AS tool_name, '' AS session_id,
       toUnixTimestamp64Nano(Timestamp) AS start_ns, toInt64(Duration) AS duration_ns,
       toInt64(0) AS input_tokens, toInt64(0) AS output_tokens, toInt64(0) AS total_tokens,
       toFloat64(0) AS cost,
       multiIf(position(StatusCode, 'rror') > 0, 'error',
               StatusCode IN ('Ok', 'STATUS_CODE_OK'), 'ok', 'unset') AS status,
       if(status = 'error', StatusMessage, '') AS error, false AS has_step
FROM {table}
WHERE TraceId = {{trace:String}} AND ProjectId = {{project:String}}
  AND Timestamp >= fromUnixTimestamp64Nano({{lo:Int64}})
  AND Timestamp <= fromUnixTimestamp64Nano({{hi:Int64}})
  AND SpanId NOT IN (SELECT span_id FROM agent_steps
                     WHERE project_id = {{project:String}} AND trace_id = {{trace:String}})
ORDER BY SpanId, IngestTime DESC
LIMIT 1 BY SpanId
"""

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
  AND SpanId IN {{ids:Array(String)}}
  AND Timestamp >= fromUnixTimestamp64Nano({{lo:Int64}})
  AND Timestamp <= fromUnixTimestamp64Nano({{hi:Int64}})
"""


@dataclass(slots=True)
class _Span:
    """A span of a page: its place in the layout and its outline row."""

    span_id: str
    parent: str
    start_ns: int
    order: int
    depth: int
    children: list[str]
    row: dict[str, Any]

    @property
    def has_step(self) -> bool:
        """False for a span known only from the raw span table."""
        return bool(self.row["has_step"])


@dataclass
class Outline:
    """A trace's every span in light columns and laid out; its summary and roots.

    ``table`` holds one row per span in start order (``order`` is the row
    number + 1); ``layout`` lists row numbers depth-first, ``depth`` and
    ``children`` (row numbers) go with each layout position.
    """

    trace_id: str
    project: str
    summary: TraceSummary
    roots: list[str]
    table: pa.Table
    ids: list[str]
    layout: list[int]
    depth: list[int]
    children: list[list[int]]
    raw_range: tuple[int, int]

    def spans(self, start: int, end: int) -> list[_Span]:
        """The spans at layout positions ``start .. end``."""
        rows = self.table.take(self.layout[start:end]).to_pylist()
        return [
            _Span(r["span_id"], r["parent_span_id"], int(r["start_ns"]), i + 1, d,
                  [self.ids[k] for k in kids], r)
            for r, i, d, kids in zip(rows, self.layout[start:end], self.depth[start:end],
                                     self.children[start:end], strict=True)
        ]


def get_trace(
    store: Store,
    trace_id: str,
    *,
    project: str = "default",
    attributes: bool = True,
    offset: int = 0,
    limit: int | None = None,
) -> TraceDetail:
    """One trace: its summary and its spans in tree order, each with its step.

    Args:
        store: The store to read.
        trace_id: The trace (32 hex characters; case and dashes are forgiven).
        project: Project id.
        attributes: Also read each span's raw attributes, events and links.
        offset: First position of the depth-first layout to return.
        limit: Spans to return from ``offset`` (None: every span).

    ``summary`` and ``roots`` always describe the whole trace; ``next_offset``
    is the offset of the next page, None after the last. Raises
    ``NotFoundError`` when the project has no span of ``trace_id``.
    """
    outline = trace_outline(store, trace_id, project=project, attributes=attributes)
    return trace_page(store, outline, attributes=attributes, offset=offset, limit=limit)


def iter_trace(
    store: Store,
    trace_id: str,
    *,
    project: str = "default",
    attributes: bool = True,
    offset: int = 0,
    limit: int | None = None,
    page: int = PAGE_SPANS,
    first_page: int | None = None,
) -> Iterator[TraceDetail]:
    """A trace page after page from one outline read: print a large trace as it comes.

    Yields pages of ``page`` spans (the first of ``first_page`` spans when
    given, so its lines come early) from ``offset`` until ``limit`` spans
    (None: all) are out; the last page's ``next_offset`` says where the rest
    starts.
    """
    outline = trace_outline(store, trace_id, project=project, attributes=attributes)

    def fetch(at: int, size: int) -> TraceDetail:
        return trace_page(store, outline, attributes=attributes, offset=at, limit=size)

    return paged(fetch, offset=offset, limit=limit, page=page, first_page=first_page)


def paged(
    fetch: Callable[[int, int], TraceDetail],
    *,
    offset: int = 0,
    limit: int | None = None,
    page: int = PAGE_SPANS,
    first_page: int | None = None,
) -> Iterator[TraceDetail]:
    """Pages ``fetch(offset, size)`` from ``offset`` until ``limit`` spans (None: all) are
    out: a first page of ``first_page`` spans (default ``page``), then pages of ``page``,
    each starting at the previous page's ``next_offset``. One pager for the store
    (:func:`iter_trace`) and for a server's ``GET /api/traces/{id}``."""
    left = limit
    at: int | None = offset
    size_now = first_page or page
    while at is not None:
        detail = fetch(at, size_now if left is None else min(size_now, left))
        yield detail
        at, size_now = detail.next_offset, page
        if left is not None:
            left -= len(detail.spans)
            if left <= 0:
                return


def trace_outline(
    store: Store, trace_id: str, *, project: str = "default", attributes: bool = True
) -> Outline:
    """Every span's light columns, laid out; the summary. ``NotFoundError`` if none."""
    tid = normalize_trace_id(trace_id)
    params = {"project": project, "trace": tid}
    marked = store.scalar(
        "SELECT count() AS n FROM trace_duplicates"
        " WHERE project_id = {project:String} AND trace_id = {trace:String}",
        params,
    )
    # only a trace marked in trace_duplicates repeats a span id (``_duplicates``)
    once = f"ORDER BY span_id, {WINNER} DESC LIMIT 1 BY span_id" if marked else ""
    table = _plain(store.query_arrow(_OUTLINE_SQL.format(once=once), params))
    # The raw span table is read inside the trace's time range: the collector's
    # trace-id lookup (seconds) widened by the steps' exact range.
    ranges = [r for r in (_lookup_range(store, tid),) if r is not None]
    if table.num_rows:
        ranges.append((pc.min(table["start_ns"]).as_py(), pc.max(table["start_ns"]).as_py()))
    if not ranges:
        raise _not_found(tid, project)
    raw_range = (min(r[0] for r in ranges), max(r[1] for r in ranges))
    if attributes or not table.num_rows:
        sql = _RAW_OUTLINE_SQL.format(table=store.otel_table)
        raw = _plain(store.query_arrow(sql, {**params, "lo": raw_range[0], "hi": raw_range[1]}))
        if raw.num_rows:
            table = pa.concat_tables([table, raw]) if table.num_rows else raw
    if not table.num_rows:
        raise _not_found(tid, project)
    table = table.sort_by([("start_ns", "ascending"), ("span_id", "ascending")])
    ids = table["span_id"].to_pylist()
    with _gc_paused():
        layout, depth, children = _assemble(ids, table["parent_span_id"].to_pylist())
    outcome = store.scalar(
        "SELECT max(outcome) AS o FROM trace_summaries"
        " WHERE project_id = {project:String} AND trace_id = {trace:String}",
        params,
    )
    summary = _summarise(tid, project, table, outcome or "")
    roots = [ids[i] for i, d in zip(layout, depth, strict=True) if d == 0]
    return Outline(tid, project, summary, roots, table, ids, layout, depth, children, raw_range)


def trace_page(
    store: Store,
    outline: Outline,
    *,
    attributes: bool = True,
    offset: int = 0,
    limit: int | None = None,
) -> TraceDetail:
    """The spans at ``offset .. offset + limit`` of an outline's layout, whole."""
    if offset < 0:
        raise UserError(f"offset {offset} is negative; use 0 or more")
    if limit is not None and limit < 1:
        raise UserError(f"limit {limit} is out of range; use 1 or more")
    n = len(outline.layout)
    end = n if limit is None else min(n, offset + limit)
    with _gc_paused():
        page = outline.spans(offset, end) if offset < end else []
        nodes = _page_nodes(store, outline, page, attributes) if page else []
    return TraceDetail(
        trace_id=outline.trace_id,
        project=outline.project,
        summary=outline.summary,
        roots=outline.roots,
        spans=nodes,
        offset=offset,
        next_offset=end if end < n else None,
    )


def get_span(
    store: Store, trace_id: str, span_id: str, *, project: str = "default"
) -> SpanNode:
    """One span of a trace with its step and raw attributes (a trace's attributes on demand)."""
    outline = trace_outline(store, trace_id, project=project, attributes=True)
    sid = span_id.strip().lower()
    if sid not in outline.ids:
        raise NotFoundError(
            f"no span {span_id} in trace {outline.trace_id}; its spans are listed by"
            f" `flywheel traces show {outline.trace_id}`"
        )
    at = outline.layout.index(outline.ids.index(sid))
    return _page_nodes(store, outline, outline.spans(at, at + 1), attributes=True)[0]


# -- the outline ----------------------------------------------------------------


def _not_found(tid: str, project: str) -> NotFoundError:
    return NotFoundError(
        f"no trace {tid} in project {project!r}; list traces with `flywheel traces list`"
    )


def _columns(store: Store, sql: str, params: dict[str, Any]) -> dict[str, list[Any]]:
    """A query's columns as Python lists (column by column: ten times faster than rows).

    Map columns (also inside lists) become dicts.
    """
    table = store.query_arrow(sql, params)
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
    return cols


def _rows(cols: dict[str, list[Any]]) -> list[dict[str, Any]]:
    names = list(cols)
    return [dict(zip(names, vals, strict=True)) for vals in zip(*cols.values(), strict=True)]


def _plain(table: pa.Table) -> pa.Table:
    """Dictionary and binary columns as plain strings (the server path's Arrow types)."""
    cols = []
    for col in table.columns:
        if pa.types.is_dictionary(col.type):
            col = col.dictionary_decode()
        if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type):
            col = col.cast(pa.string())
        cols.append(col)
    return pa.table(cols, names=table.column_names)


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


def _assemble(ids: list[str], parents: list[str]) -> tuple[list[int], list[int], list[list[int]]]:
    """Lay out spans (given in start order) depth-first: rows, depths, children.

    A child list is in start order; a span whose parent is missing (or
    itself) is a root, and spans on a parent cycle are shown as roots.
    """
    pos = dict(zip(ids, range(len(ids)), strict=True))
    children: dict[int, list[int]] = {}
    roots: list[int] = []
    for i, p in enumerate(parents):  # in start order, so every child list is by start time
        j = pos.get(p) if p else None
        if j is None or j == i:
            roots.append(i)
        else:
            children.setdefault(j, []).append(i)
    layout: list[int] = []
    depth: list[int] = []
    kids_at: list[list[int]] = []
    seen = bytearray(len(ids))

    def walk(root: int) -> None:
        stack = [(root, 0)]
        while stack:
            i, d = stack.pop()
            if seen[i]:
                continue
            seen[i] = 1
            # a span has one parent, so an unseen child is laid out right
            # under it; a seen one is the back edge of a parent cycle
            kids = [k for k in children.get(i, ()) if not seen[k]]
            layout.append(i)
            depth.append(d)
            kids_at.append(kids)
            if kids:
                stack.extend((k, d + 1) for k in reversed(kids))

    for r in roots:
        walk(r)
    if len(layout) < len(ids):
        for i in range(len(ids)):  # spans on a parent cycle have no root: show them as roots
            if not seen[i]:
                walk(i)
    return layout, depth, kids_at


def _summarise(tid: str, project: str, t: pa.Table, outcome: str) -> TraceSummary:
    """The trace's summary from its spans (the same rules as ``trace_summaries``)."""
    roots = t.filter(pc.equal(t["parent_span_id"], ""))
    usage = table_usage(t)
    tools = pc.unique(pc.filter(t["tool_name"], pc.not_equal(t["tool_name"], ""))).to_pylist()
    end = pc.max(pc.add(t["start_ns"], t["duration_ns"])).as_py()
    sessions = pc.filter(t["session_id"], t["has_step"])
    return TraceSummary(
        trace_id=tid,
        project=project,
        service_name=pc.max(roots["service_name"]).as_py() or "",
        root_name=pc.max(roots["span_name"]).as_py() or "",
        session_id=(pc.max(sessions).as_py() if len(sessions) else "") or "",
        status="error" if pc.any(pc.equal(roots["status"], "error")).as_py() else "ok",
        outcome=outcome,
        start_ns=pc.min(t["start_ns"]).as_py(),
        end_ns=end,
        span_count=t.num_rows,
        error_count=pc.sum(pc.equal(t["status"], "error")).as_py() or 0,
        tool_calls=pc.sum(pc.equal(t["kind"], "tool")).as_py() or 0,
        tool_names=sorted(tools),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        total_tokens=usage.total_tokens,
        cost=usage.cost,
    )


# -- a page -------------------------------------------------------------------------


def _page_nodes(
    store: Store, outline: Outline, page: list[_Span], attributes: bool
) -> list[SpanNode]:
    """The page's spans whole: steps, normalised; raw rows when asked for."""
    params = {"project": outline.project, "trace": outline.trace_id}
    ids = [p.span_id for p in page]
    lo = min(p.start_ns for p in page)
    hi = max(p.start_ns for p in page)
    steps: dict[str, dict[str, Any]] = {}
    with_step = [i for i, p in zip(ids, page, strict=True) if p.has_step]
    if with_step:
        cols = _columns(store, _STEPS_SQL, {**params, "ids": with_step, "lo": lo, "hi": hi})
        steps = {r["span_id"]: r for r in _rows(cols)}
    raws: dict[str, dict[str, Any]] = {}
    if attributes or any(not p.has_step for p in page):
        sql = _SPANS_SQL.format(table=store.otel_table)
        for r in _rows(_columns(store, sql, {**params, "ids": ids, "lo": lo, "hi": hi})):
            sid = r["SpanId"]
            cur = raws.get(sid)
            if cur is None or _raw_fit(steps.get(sid), r) > _raw_fit(steps.get(sid), cur):
                raws[sid] = r  # the raw row of the winning write (attributes, events)
    rows = []
    for p in sorted(page, key=lambda p: (p.start_ns, p.span_id)):
        st = steps.get(p.span_id)
        if st is not None:
            raw = raws.get(p.span_id)
            st["attributes"] = raw["SpanAttributes"] if raw else {}  # tool definitions
            st["input"], st["output"] = _maybe_json(st["input"]), _maybe_json(st["output"])
            rows.append(st)
    if any(_needs_calls(r) for r in rows):
        rows = _with_calls(store, outline, rows, attributes)
    normalise_steps(rows)
    return [_node(p, steps.get(p.span_id), raws.get(p.span_id)) for p in page]


def _needs_calls(row: dict[str, Any]) -> bool:
    """A tool step whose bare argument may be named from an earlier model call."""
    if row["kind"] != "tool":
        return False
    args, _ = tool_arguments(_json_value(row["arguments"]))
    return args is not None and not isinstance(args, dict | list)


def _with_calls(
    store: Store, outline: Outline, rows: list[dict[str, Any]], attributes: bool
) -> list[dict[str, Any]]:
    """The page's steps among every model call of the trace, in start order.

    ``normalise_steps`` names a bare argument from the latest matching call
    before it and from the tool definitions the spans carry; the calls of
    other pages (their outputs only) and, with attributes, every span's
    definitions come along so a page reads exactly as the whole trace does.
    The page's own rows are normalised in place; the context rows are thrown away.
    """
    params = {"project": outline.project, "trace": outline.trace_id}
    own = {r["span_id"] for r in rows}
    context: list[dict[str, Any]] = []
    for r in _rows(_columns(store, _CALLS_SQL, params)):
        if r["span_id"] not in own:
            context.append({"span_id": r["span_id"], "kind": r["kind"], "input": "",
                            "output": _maybe_json(r["output"]), "start_ns": r["start_ns"]})
    if attributes:
        lo, hi = outline.raw_range
        sql = (
            f"SELECT SpanId AS span_id, SpanAttributes AS attributes,"
            f" toUnixTimestamp64Nano(Timestamp) AS start_ns FROM {store.otel_table}"
            " WHERE TraceId = {trace:String} AND ProjectId = {project:String}"
            " AND Timestamp >= fromUnixTimestamp64Nano({lo:Int64})"
            " AND Timestamp <= fromUnixTimestamp64Nano({hi:Int64})"
        )
        for r in _rows(_columns(store, sql, {**params, "lo": lo, "hi": hi})):
            if r["span_id"] not in own and r["attributes"]:
                context.append({"span_id": r["span_id"], "kind": "other",
                                "attributes": r["attributes"], "start_ns": r["start_ns"]})
    merged = rows + context
    merged.sort(key=lambda r: (int(r["start_ns"]), r["span_id"]))
    return merged


def _raw_fit(step: dict[str, Any] | None, raw: dict[str, Any]) -> tuple[int, ...]:
    """How well a raw span row matches the span's winning step (higher is better).

    A span id stored several times has several raw rows; its attributes are
    shown from the row the winning step was derived from. Without a step the
    latest write wins.
    """
    if step is None:
        return (int(raw["ingested"]),)
    return (int(raw["ingested"] == step["ingested"]),
            int(int(raw["start_ns"]) == int(step["start_ns"])),
            int(raw["SpanName"] == step["span_name"]), int(raw["Duration"] == step["duration_ns"]),
            int(raw["ingested"]))


def _json_value(text: str) -> Any:
    """A tool argument or result: JSON text, from the view or ``normalise_steps`` (None if '')."""
    if not text:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _maybe_json(text: Any) -> Any:
    """Parsed JSON when ``text`` holds a JSON object or array, else the text (None if '')."""
    if not text or not isinstance(text, str):
        return text or None
    head = text.lstrip()[:1]
    if head in ("{", "["):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _node(s: _Span, st: dict[str, Any] | None, raw: dict[str, Any] | None) -> SpanNode:
    """The span's node (validated: pydantic-core beats model_construct here)."""
    if st is not None:
        step = Step(
            order=s.order,
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
    else:  # a span stored before the normalising view existed: its outline row
        r = s.row
        step = Step(order=s.order, kind="other", start_ns=s.start_ns,
                    duration_ns=r["duration_ns"], status=r["status"], error=r["error"])
    node: dict[str, Any] = {
        "span_id": s.span_id,
        "parent_span_id": s.parent,
        "depth": s.depth,
        "children": s.children,
        "name": st["span_name"] if st else s.row["span_name"],
        "service_name": st["service_name"] if st else s.row["service_name"],
        "step": step,
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
