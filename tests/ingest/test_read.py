"""The trace read side over a real chDB store: list filters, paging, one trace.

Spans go into the span table as the collector would write them; the
normalising views fill ``agent_steps`` and ``trace_summaries``. ``span`` and
``insert_spans`` are shared with the API and CLI tests.
"""

from __future__ import annotations

import importlib.util
import json
import os
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from flywheel.ingest import get_trace
from flywheel.ingest._read import (
    decode_cursor,
    encode_cursor,
    list_traces,
    normalize_trace_id,
    parse_time,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from flywheel import NotFoundError, Store, UserError, open_store

T0 = 1_764_520_000_000_000_000  # 2025-11-30T16:26:40Z in ns
MS = 1_000_000


def span(
    trace: str,
    span_id: str,
    parent: str = "",
    *,
    name: str = "step",
    start: int = 0,
    dur: int = MS,
    attrs: dict[str, Any] | None = None,
    status: str = "Unset",
    message: str = "",
    service: str = "agent",
    events: list[tuple[int, str, dict[str, str]]] | None = None,
    project: str = "default",
    resource: dict[str, str] | None = None,
) -> dict[str, Any]:
    """One span row as the collector's exporter writes it (``start`` is ms after T0)."""
    return {
        "Timestamp": T0 + start * MS,
        "TraceId": trace,
        "SpanId": span_id,
        "ParentSpanId": parent,
        "TraceState": "",
        "SpanName": name,
        "SpanKind": "Internal",
        "ServiceName": service,
        "ResourceAttributes": {"service.name": service, **(resource or {})},
        "ScopeName": "test",
        "ScopeVersion": "",
        "SpanAttributes": {
            k: v if isinstance(v, str) else json.dumps(v) for k, v in (attrs or {}).items()
        },
        "Duration": dur,
        "StatusCode": status,
        "StatusMessage": message,
        "Events.Timestamp": [T0 + t * MS for t, _, _ in events or []],
        "Events.Name": [n for _, n, _ in events or []],
        "Events.Attributes": [a for _, _, a in events or []],
        "Links.TraceId": [],
        "Links.SpanId": [],
        "Links.TraceState": [],
        "Links.Attributes": [],
        "ProjectId": project,
    }


def insert_spans(store: Any, spans: list[dict[str, Any]]) -> None:
    """Columnar insert of ``span`` rows into the store's span table."""
    cols = {k: [s[k] for s in spans] for k in spans[0]}
    store.insert(store.otel_table, cols)


def tool_span(
    trace: str, sid: str, parent: str, tool: str, args: Any, result: Any, **kw: Any
) -> dict:
    """A GenAI ``execute_tool`` span."""
    return span(
        trace,
        sid,
        parent,
        name=f"execute_tool {tool}",
        attrs={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": tool,
            "gen_ai.tool.call.id": f"call_{sid}",
            "gen_ai.tool.call.arguments": args if isinstance(args, str) else json.dumps(args),
            "gen_ai.tool.call.result": result if isinstance(result, str) else json.dumps(result),
        },
        **kw,
    )


def chat_span(trace: str, sid: str, parent: str, prompt: str, **kw: Any) -> dict:
    """A GenAI ``chat`` span with token usage."""
    return span(
        trace,
        sid,
        parent,
        name="chat gpt-x",
        attrs={
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-x",
            "gen_ai.usage.input_tokens": "100",
            "gen_ai.usage.output_tokens": "20",
            "gen_ai.usage.cost": "0.5",
            "gen_ai.input.messages": json.dumps([{"role": "user", "content": prompt}]),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": "ok"}]),
        },
        **kw,
    )


A = "a" * 32  # bank agent, rent paid, a tool error it recovered from
B = "b" * 32  # shop agent, the root failed
C = "c" * 32  # bank agent, later, clean


def seed(store: Any) -> None:
    """Three traces across two services (and one in another project)."""
    insert_spans(
        store,
        [
            span(
                A,
                "a1",
                name="invoke_agent banker",
                start=0,
                dur=50 * MS,
                service="bank",
                attrs={"gen_ai.operation.name": "invoke_agent", "session.id": "sess-1"},
            ),
            chat_span(A, "a2", "a1", "Please pay my RENT to Alice", start=1, service="bank"),
            tool_span(
                A,
                "a3",
                "a1",
                "send_money",
                {"to": "Alice", "amount": 1100},
                "insufficient funds",
                start=5,
                status="Error",
                message="insufficient funds",
                service="bank",
                events=[(6, "exception", {"exception.message": "insufficient funds"})],
            ),
            tool_span(
                A, "a4", "a1", "get_balance", {}, {"balance": 2000}, start=10, service="bank"
            ),
            tool_span(
                A,
                "a5",
                "a1",
                "send_money",
                {"to": "Alice", "amount": 1000},
                {"ok": True},
                start=20,
                service="bank",
            ),
        ],
    )
    insert_spans(
        store,
        [
            span(
                B,
                "b1",
                name="invoke_agent shopper",
                start=1000,
                dur=30 * MS,
                service="shop",
                status="Error",
                message="gave up",
                attrs={"openinference.span.kind": "AGENT"},
            ),
            span(
                B,
                "b2",
                "b1",
                name="search",
                start=1001,
                service="shop",
                attrs={
                    "openinference.span.kind": "TOOL",
                    "tool.name": "search_catalog",
                    "input.value": '{"q": "red shoes"}',
                    "output.value": "[]",
                },
            ),
        ],
    )
    insert_spans(
        store,
        [
            span(
                C,
                "c1",
                name="invoke_agent banker",
                start=5000,
                dur=10 * MS,
                service="bank",
                attrs={"gen_ai.operation.name": "invoke_agent"},
            ),
            tool_span(C, "c2", "c1", "get_balance", {}, {"balance": 5}, start=5001, service="bank"),
            span("d" * 32, "d1", name="other project", start=6000, project="p2"),
        ],
    )


def seeded_store(chdb_dir: str) -> Iterator[Store]:
    """A migrated store with ``seed`` in it, for a module of read-only tests.

    Migrating a fresh database costs a second or more on a loaded machine;
    tests that only read share one per module (tests that insert use ``store``).
    """
    s = open_store(f"chdb://{chdb_dir}?database=read_{os.getpid()}_{uuid.uuid4().hex[:8]}")
    s.migrate()
    seed(s)
    try:
        yield s
    finally:
        s.close()


@pytest.fixture(scope="module")
def seeded(chdb_dir: str) -> Iterator[Store]:
    yield from seeded_store(chdb_dir)


def ids(traces: list) -> list[str]:
    return [t.trace_id for t in traces]


def test_list_newest_first_with_aggregates(seeded):
    traces = list_traces(seeded)
    assert ids(traces) == [C, B, A]
    a = traces[2]
    assert (a.service_name, a.root_name, a.session_id) == ("bank", "invoke_agent banker", "sess-1")
    assert (a.span_count, a.error_count, a.tool_calls) == (5, 1, 3)
    assert a.tool_names == ["get_balance", "send_money"]
    assert (a.input_tokens, a.output_tokens, a.total_tokens, a.cost) == (100, 20, 120, 0.5)
    assert a.status == "ok" and a.has_error
    assert a.start_ns == T0 and a.end_ns == T0 + 50 * MS and a.duration_ms == 50.0
    assert traces[1].status == "error" and traces[0].status == "ok" and not traces[0].has_error


def test_list_is_per_project(seeded):
    assert ids(list_traces(seeded, project="p2")) == ["d" * 32]
    assert list_traces(seeded, project="nobody") == []


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"service": "bank"}, [C, A]),
        ({"service": "nope"}, []),
        ({"status": "error"}, [B]),
        ({"status": "ok"}, [C, A]),
        ({"has_error": True}, [B, A]),
        ({"has_error": False}, [C]),
        ({"tool": "send_money"}, [A]),
        ({"tool": "get_balance"}, [C, A]),
        ({"tool": "search_catalog"}, [B]),
        ({"text": "rent"}, [A]),  # llm input, any case
        ({"text": "RED SHOES"}, [B]),  # tool arguments (OpenInference input.value)
        ({"text": "insufficient"}, [A]),  # tool result
        ({"text": "'; DROP TABLE x; --"}, []),
        ({"since_ns": T0 + 1000 * MS}, [C, B]),
        ({"until_ns": T0 + 1000 * MS}, [A]),
        ({"since_ns": T0 + 1 * MS, "until_ns": T0 + 5000 * MS}, [B]),
        ({"service": "bank", "tool": "get_balance", "has_error": True}, [A]),
    ],
)
def test_list_filters(seeded, filters, expected):
    assert ids(list_traces(seeded, **filters)) == expected


def test_partial_summary_rows_are_merged(store):
    """Spans of one trace arriving in several inserts still make one list row."""
    insert_spans(store, [span(A, "a1", name="root", start=0, dur=100 * MS, service="bank")])
    insert_spans(store, [tool_span(A, "a2", "a1", "t1", {}, "x", start=10, status="Error")])
    insert_spans(store, [tool_span(A, "a3", "a1", "t2", {}, "y", start=20)])
    [t] = list_traces(store, tool="t2")
    assert (t.span_count, t.error_count, t.tool_names, t.service_name) == (
        3,
        1,
        ["t1", "t2"],
        "bank",
    )
    assert ids(list_traces(store, has_error=True, service="bank")) == [A]


def test_paging_by_offset_and_cursor(store):
    tids = [f"{i:032x}" for i in range(7)]
    insert_spans(store, [span(t, "s", start=i * 10) for i, t in enumerate(tids)])
    newest_first = list(reversed(tids))
    assert ids(list_traces(store, limit=3)) == newest_first[:3]
    assert ids(list_traces(store, limit=3, offset=3)) == newest_first[3:6]
    seen, cursor = [], None
    while True:
        page = list_traces(store, limit=3, cursor=cursor)
        seen += ids(page)
        if len(page) < 3:
            break
        cursor = encode_cursor(page[-1])
    assert seen == newest_first


def test_same_start_pages_by_trace_id(store):
    tids = [f"{i:032x}" for i in range(5)]
    insert_spans(store, [span(t, "s", start=0) for t in tids])
    first = list_traces(store, limit=2)
    rest = list_traces(store, limit=10, cursor=encode_cursor(first[-1]))
    assert ids(first) + ids(rest) == sorted(tids, reverse=True)


@pytest.mark.parametrize(
    "bad",
    [
        {"limit": 0},
        {"limit": 1001},
        {"offset": -1},
        {"status": "failed"},
        {"cursor": "!!!"},
        {"since_ns": T0, "until_ns": T0},
    ],
)
def test_list_rejects_bad_values(seeded, bad):
    with pytest.raises(UserError):
        list_traces(seeded, **bad)


def test_get_trace_tree_and_steps(seeded):
    t = get_trace(seeded, A.upper())
    assert t.trace_id == A and t.roots == ["a1"]
    assert [n.span_id for n in t.spans] == ["a1", "a2", "a3", "a4", "a5"]
    assert [n.depth for n in t.spans] == [0, 1, 1, 1, 1]
    assert t.spans[0].children == ["a2", "a3", "a4", "a5"]
    assert [n.step.order for n in t.spans] == [1, 2, 3, 4, 5]
    assert [n.step.kind for n in t.spans] == ["agent", "llm", "tool", "tool", "tool"]
    llm = t.spans[1].step
    assert llm.input == [{"role": "user", "content": "Please pay my RENT to Alice"}]
    assert (llm.model, llm.input_tokens, llm.total_tokens, llm.cost) == ("gpt-x", 100, 120, 0.5)
    failed = t.spans[2]
    assert failed.step.tool_name == "send_money"
    assert failed.step.arguments == {"to": "Alice", "amount": 1100}
    assert failed.step.result == "insufficient funds"  # not JSON: kept as text
    assert (failed.step.status, failed.step.error) == ("error", "insufficient funds")
    assert failed.step.tool_call_id == "call_a3" and failed.step.duration_ms == 1.0
    assert failed.attributes["gen_ai.tool.name"] == "send_money"
    assert failed.resource_attributes == {"service.name": "bank"}
    assert [(e.name, e.attributes) for e in failed.events] == [
        ("exception", {"exception.message": "insufficient funds"})
    ]
    assert failed.events[0].time_ns == T0 + 6 * MS
    assert failed.span_kind == "Internal" and failed.status_message == "insufficient funds"
    assert t.spans[3].step.result == {"balance": 2000}
    s = t.summary
    assert (s.span_count, s.error_count, s.tool_calls, s.status) == (5, 1, 3, "ok")
    assert s == list_traces(seeded, tool="send_money")[0]


def test_get_trace_deep_orphans_and_order(store):
    """A chain deeper than Python's recursion limit, an orphan, out-of-order inserts."""
    n = 3000
    chain = [span(A, f"s{i}", f"s{i - 1}" if i else "", start=i) for i in range(n)]
    orphan = span(A, "orphan", "missing-parent", start=n + 5)
    insert_spans(store, list(reversed(chain[n // 2 :])) + [orphan])
    insert_spans(store, chain[: n // 2])
    t = get_trace(store, A)
    assert t.roots == ["s0", "orphan"]
    assert [x.depth for x in t.spans[:n]] == list(range(n))
    assert t.spans[-1].span_id == "orphan" and t.spans[-1].parent_span_id == "missing-parent"
    assert [x.step.order for x in t.spans] == list(range(1, n + 2))
    assert len(t.model_dump_json()) > 0


def test_get_trace_siblings_by_start_time(store):
    insert_spans(
        store,
        [
            span(A, "r", start=0, dur=100 * MS),
            span(A, "late", "r", start=30),
            span(A, "early", "r", start=10),
            span(A, "kid", "early", start=11),
        ],
    )
    t = get_trace(store, A)
    assert [(n.span_id, n.depth) for n in t.spans] == [
        ("r", 0),
        ("early", 1),
        ("kid", 2),
        ("late", 1),
    ]
    assert {n.span_id: n.step.order for n in t.spans} == {"r": 1, "early": 2, "kid": 3, "late": 4}


def test_get_trace_without_attributes_reads_steps_only(seeded):
    t = get_trace(seeded, A, attributes=False)
    assert len(t.spans) == 5 and all(n.attributes == {} for n in t.spans)
    assert t.spans[2].step.arguments == {"to": "Alice", "amount": 1100}


def test_get_trace_unknown_or_other_project(seeded):
    with pytest.raises(NotFoundError, match="f{32}"):
        get_trace(seeded, "f" * 32)
    with pytest.raises(NotFoundError):
        get_trace(seeded, "d" * 32)  # exists, but in project p2
    assert get_trace(seeded, "d" * 32, project="p2").spans[0].name == "other project"
    with pytest.raises(UserError):
        get_trace(seeded, "  ")


def test_get_trace_reads_span_table_inside_its_time_range():
    """The raw-span read is bounded by time, so ClickHouse prunes parts and partitions."""
    from flywheel.ingest import _trace

    for sql in (_trace._SPANS_SQL, _trace._RAW_OUTLINE_SQL):
        assert "Timestamp >=" in sql and "Timestamp <=" in sql and "TraceId =" in sql
    for sql in (_trace._OUTLINE_SQL, _trace._STEPS_SQL):
        assert "WHERE project_id = {{project:String}} AND trace_id = {{trace:String}}" in sql \
            or "WHERE project_id = {project:String} AND trace_id = {trace:String}" in sql


def test_parse_time():
    now = T0
    assert parse_time(None) is None and parse_time("") is None
    assert parse_time("15m", now_ns=now) == now - 15 * 60 * 10**9
    assert parse_time("2h", now_ns=now) == now - 2 * 3600 * 10**9
    assert parse_time("1.5s", now_ns=now) == now - 1_500_000_000
    assert parse_time("2025-11-30T16:26:40Z") == T0
    assert parse_time("2025-11-30T17:26:40+01:00") == T0
    assert parse_time("2025-11-30 16:26:40") == T0
    assert parse_time("1764520000") == T0
    assert parse_time(str(T0 // MS)) == T0
    assert parse_time(str(T0)) == T0
    with pytest.raises(UserError, match="yesterday"):
        parse_time("yesterday")


def test_normalize_trace_id():
    assert normalize_trace_id(" ABCDEF ") == "abcdef"
    assert normalize_trace_id("not-hex") == "not-hex"
    with pytest.raises(UserError):
        normalize_trace_id("")


@given(st.integers(min_value=0, max_value=2**62), st.text(min_size=1, max_size=64))
def test_cursor_round_trip(start, tid):
    from flywheel.ingest import TraceSummary

    s = TraceSummary(
        trace_id=tid,
        project="p",
        service_name="",
        root_name="",
        status="ok",
        start_ns=start,
        end_ns=start,
        span_count=1,
        error_count=0,
        tool_calls=0,
    )
    assert decode_cursor(encode_cursor(s)) == (start, tid)


_HAS_STANDIN = importlib.util.find_spec("tests._standin") is not None


@pytest.mark.parametrize(
    "store_any",
    [
        "chdb",
        pytest.param(
            "server",
            marks=pytest.mark.skipif(not _HAS_STANDIN, reason="no ClickHouse-HTTP stand-in yet"),
        ),
    ],
    indirect=True,
)
def test_read_side_on_both_backends(store_any):
    """The list and a whole trace read the same through chDB and the server path."""
    seed(store_any)
    assert ids(list_traces(store_any, tool="get_balance", has_error=True)) == [A]
    assert ids(list_traces(store_any, text="red shoes", status="error")) == [B]
    t = get_trace(store_any, A)
    assert [n.step.order for n in t.spans] == [1, 2, 3, 4, 5]
    failed = t.spans[2]
    assert failed.step.arguments == {"to": "Alice", "amount": 1100}
    assert failed.attributes["gen_ai.tool.name"] == "send_money"
    assert failed.events[0].attributes == {"exception.message": "insufficient funds"}
    assert failed.events[0].time_ns == T0 + 6 * MS
    with pytest.raises(NotFoundError):
        get_trace(store_any, "f" * 32)


def test_spans_without_steps_are_read_from_the_span_table(store):
    """Spans stored before the normalising view (an adopted table) open as 'other' steps."""
    insert_spans(
        store,
        [
            span(A, "r", name="root", start=0, dur=5 * MS),
            span(A, "k", "r", name="kid", start=1, status="Error", message="boom"),
        ],
    )
    store.command("TRUNCATE TABLE agent_steps")
    t = get_trace(store, A)
    assert [(n.span_id, n.depth, n.name, n.step.kind) for n in t.spans] == [
        ("r", 0, "root", "other"),
        ("k", 1, "kid", "other"),
    ]
    assert (t.spans[1].step.status, t.spans[1].step.error) == ("error", "boom")
    assert t.summary.error_count == 1 and t.summary.service_name == "agent"
    with pytest.raises(NotFoundError):
        get_trace(store, A, project="p2")


@st.composite
def _forests(draw: Any) -> list[tuple[str, str, int]]:
    """Spans (id, parent, start) with parents among earlier spans, missing, or cyclic."""
    n = draw(st.integers(min_value=1, max_value=40))
    spans = []
    for i in range(n):
        parent = draw(
            st.one_of(
                st.just(""),
                st.just("gone"),
                st.integers(min_value=0, max_value=n - 1).map(lambda j: f"s{j}"),
            )
        )
        spans.append((f"s{i}", parent, draw(st.integers(min_value=0, max_value=5))))
    return spans


@settings(deadline=None)
@given(_forests())
def test_assemble_lays_out_every_span_once_depth_first(spans):
    """Any parent graph (orphans, cycles, self-parents) gives a valid depth-first layout."""
    from types import SimpleNamespace

    from flywheel.ingest._trace import _assemble

    ordered = sorted(spans, key=lambda s: (s[2], s[0]))  # _assemble takes spans in start order
    ids = [s[0] for s in ordered]
    layout, depths, kids = _assemble(ids, [s[1] for s in ordered])
    nodes = [
        SimpleNamespace(span_id=ids[i], parent_span_id=ordered[i][1], depth=d,
                        children=[ids[k] for k in ks], step=SimpleNamespace(order=i + 1))
        for i, d, ks in zip(layout, depths, kids, strict=True)
    ]
    assert sorted(n.span_id for n in nodes) == sorted(s[0] for s in spans)
    by_id = {n.span_id: n for n in nodes}
    pos = {n.span_id: i for i, n in enumerate(nodes)}
    starts = {sid: start for sid, _, start in spans}
    assert sorted(n.step.order for n in nodes) == list(range(1, len(spans) + 1))
    assert [n.step.order for n in sorted(nodes, key=lambda n: (starts[n.span_id], n.span_id))] == (
        list(range(1, len(spans) + 1))
    )
    for n in nodes:
        assert [starts[k] for k in n.children] == sorted(starts[k] for k in n.children)
        for k in n.children:
            child = by_id[k]
            assert child.parent_span_id == n.span_id and child.depth == n.depth + 1
            assert pos[k] > pos[n.span_id]
        if n.depth == 0:
            continue
        parent = by_id[n.parent_span_id]
        assert n.span_id in parent.children
        # everything between the parent and this node is in the parent's subtree
        assert all(
            nodes[i].depth > parent.depth for i in range(pos[parent.span_id] + 1, pos[n.span_id])
        )
