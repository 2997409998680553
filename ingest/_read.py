"""Reading traces back: the trace list with its filters (one trace opens in ``_trace``).

The list reads ``trace_summaries`` (one aggregate row per trace, possibly
several partial rows before a merge, hence GROUP BY with the matching
aggregates), which adds spans up as they arrive: exact while no span id of the
trace was stored twice. Traces that repeat one (an exporter's retry, a resend,
a reused span id; marked in ``trace_duplicates`` before the insert, see
``_duplicates``) are computed from their spans with each span counted once
(``WINNER``: the last write wins), the rows the detail view shows; every
filter applies to the figures shown. Every value reaches ClickHouse as a
bound parameter.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import re
import time
from typing import Any

from flywheel import Store, UserError

from ._models import TraceSummary

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

def steps_with_text(where: str, *, final: bool = False) -> str:
    """A subquery of ``agent_steps`` rows with their text joined from their span rows in one pass.

    ``where`` filters both sides and may name only ``project_id``, ``trace_id`` and
    ``span_id`` (columns of ``agent_steps`` and of the span-text view
    ``agent_step_texts``, ingest migration 013); ``final`` reads ``agent_steps FINAL``.
    The rows hold the table's columns, with ``arguments``, ``result``, ``input`` and
    ``output`` as its ALIAS columns read them: the text the view stored for a step
    written before 013, else the text of the span row it came from (same trace id,
    span id, attribute hash and kind). The ALIAS columns look the text up through a
    dictionary block by block of steps, which reads the span table once per block:
    right for one trace, slow for hundreds; this reads the span rows of ``where`` once.
    """
    return f"""(
    SELECT s.* EXCEPT (stored_arguments, stored_result, stored_input, stored_output),
           if(s.text_in_spans = 0, s.stored_arguments, r.arguments) AS arguments,
           if(s.text_in_spans = 0, s.stored_result, r.result) AS result,
           if(s.text_in_spans = 0, s.stored_input, r.input) AS input,
           if(s.text_in_spans = 0, s.stored_output, r.output) AS output
    FROM (SELECT * FROM agent_steps{' FINAL' if final else ''} WHERE {where}) AS s
    LEFT ANY JOIN (
        SELECT trace_id, span_id, attributes_hash, kind, arguments, result, input, output
        FROM agent_step_texts WHERE {where}) AS r
    ON r.trace_id = s.trace_id AND r.span_id = s.span_id
       AND r.attributes_hash = s.attributes_hash AND r.kind = toString(s.kind))"""


#: One row per (trace, span) of the marked traces of a project: the winning row.
_SPANS_ONCE = f"""
SELECT trace_id, span_id,
       argMax(parent_span_id, v) AS parent, argMax(service_name, v) AS svc_name,
       argMax(span_name, v) AS name, argMax(session_id, v) AS session,
       argMax(start_time, v) AS t_start, argMax(duration_ns, v) AS dur,
       argMax(status, v) AS st, argMax(kind, v) AS k, argMax(tool_name, v) AS tool_n,
       argMax(input_tokens, v) AS input_tokens, argMax(output_tokens, v) AS output_tokens,
       argMax(total_tokens, v) AS total_tokens, argMax(cost, v) AS cost
FROM (SELECT *, {WINNER} AS v FROM {steps_with_text(
    "project_id = {project:String} AND trace_id IN"
    " (SELECT trace_id FROM trace_duplicates WHERE project_id = {project:String})")})
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
#: later write of the same span do not count). The spans that may match are found
#: in one pass over the span rows (``agent_step_texts``) and the texts stored
#: before ingest migration 013 (``_TEXT_SPANS``); only their steps are read, with
#: their text (``steps_with_text``). A span none of whose rows holds the text has
#: no winning row that does.
_TEXT_SPANS = """(
    SELECT trace_id, span_id FROM agent_steps
    WHERE project_id = {{project:String}} AND text_in_spans = 0 AND ({match_stored})
    UNION DISTINCT
    SELECT trace_id, span_id FROM agent_step_texts
    WHERE project_id = {{project:String}} AND ({match}))"""
_TEXT_SQL = """
trace_id IN (
    SELECT trace_id FROM (
        SELECT trace_id, span_id, argMax((input, output, arguments, result), {winner}) AS t
        FROM {steps}
        GROUP BY trace_id, span_id)
    WHERE {match_t})"""
_MATCH = " OR ".join(
    f"positionCaseInsensitiveUTF8({col}, {{text:String}}) > 0"
    for col in ("input", "output", "arguments", "result")
)
_MATCH_STORED = " OR ".join(
    f"positionCaseInsensitiveUTF8(stored_{col}, {{text:String}}) > 0"
    for col in ("input", "output", "arguments", "result")
)
_MATCH_T = " OR ".join(
    f"positionCaseInsensitiveUTF8(t.{i}, {{text:String}}) > 0" for i in range(1, 5)
)
_TEXT_WHERE = _TEXT_SQL.format(
    winner=WINNER, match_t=_MATCH_T, steps=steps_with_text(
        "project_id = {project:String} AND (trace_id, span_id) IN "
        + _TEXT_SPANS.format(match_stored=_MATCH_STORED, match=_MATCH)))


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
        where.append(_TEXT_WHERE)
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
