"""A trace read a page at a time is the whole trace, cut (issue 23, item 4).

Every page size, with and without attributes, on traces that exercise what a
page cannot see by itself: a bare tool argument named from a model call on an
earlier page, spans with no step (an adopted collector table), span ids stored
twice (the last write wins), children of a span on another page. The API
follows ``next_offset``; ``traces show --json`` streams the same document.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from flywheel import NotFoundError, UserError
from flywheel.cli import cli
from flywheel.ingest import get_span, get_trace, iter_trace
from tests._auth import LOCAL
from tests.ingest.test_api_traces import minimal_app
from tests.ingest.test_read import A, B, C, chat_span, insert_spans, seed, span, tool_span

N = "e" * 32  # a bare argument named by a model call several spans earlier


def _seed_named(store: Any) -> None:
    out = [{"role": "assistant", "tool_calls": [{"id": "call_x", "type": "function", "function": {
        "name": "lookup_city", "arguments": json.dumps({"city": "Oslo"})}}]}]
    spans = [
        span(N, "n1", name="invoke_agent travel", start=0, dur=100 * 1_000_000,
             attrs={"gen_ai.operation.name": "invoke_agent"}),
        chat_span(N, "n2", "n1", "weather in Oslo?", start=1),
        tool_span(N, "n3", "n1", "get_time", {}, "12:00", start=2),
        tool_span(N, "n4", "n1", "get_date", {}, "today", start=3),
        tool_span(N, "n5", "n1", "lookup_city", json.dumps("Oslo"), "rain", start=4),
    ]
    spans[1]["SpanAttributes"]["gen_ai.output.messages"] = json.dumps(out)
    spans[4]["SpanAttributes"]["gen_ai.tool.call.id"] = "call_x"
    insert_spans(store, spans)


def _dump(nodes: list[Any]) -> list[dict[str, Any]]:
    return [n.model_dump(mode="json") for n in nodes]


def assert_pages_are_the_trace(
    store: Any, tid: str, project: str = "default", sizes: tuple[int, ...] | None = None
) -> None:
    """Pages of every size (or of ``sizes``), concatenated, equal the whole trace."""
    for attributes in (True, False):
        whole = get_trace(store, tid, project=project, attributes=attributes)
        assert whole.offset == 0 and whole.next_offset is None
        n = whole.summary.span_count
        assert n == len(whole.spans)
        for size in sizes or range(1, n + 1):
            pages = list(iter_trace(store, tid, project=project, attributes=attributes, page=size))
            assert [p.offset for p in pages] == (list(range(0, n, size)) or [0])
            assert [p.next_offset for p in pages] == [*range(size, n, size), None]
            assert all(p.summary == whole.summary and p.roots == whole.roots for p in pages)
            got = [s for p in pages for s in p.spans]
            assert _dump(got) == _dump(whole.spans), (tid, attributes, size)


def test_pages_are_the_trace(store):
    seed(store)
    _seed_named(store)
    for tid in (A, B, C, N):
        assert_pages_are_the_trace(store, tid)
    assert_pages_are_the_trace(store, "d" * 32, project="p2")


def test_a_small_first_page_then_large_pages(store):
    """``first_page`` (the terminal's early lines) changes only where pages split."""
    seed(store)
    whole = get_trace(store, A)
    n = whole.summary.span_count
    pages = list(iter_trace(store, A, page=3, first_page=1))
    assert [len(p.spans) for p in pages] == [1, *[min(3, n - k) for k in range(1, n, 3)]]
    assert [p.offset for p in pages] == [0, *range(1, n, 3)]
    assert _dump([s for p in pages for s in p.spans]) == _dump(whole.spans)
    capped = list(iter_trace(store, A, page=3, first_page=2, offset=1, limit=3))
    assert [(p.offset, len(p.spans)) for p in capped] == [(1, 2), (3, 1)]


def test_a_bare_argument_is_named_from_a_call_on_an_earlier_page(store):
    _seed_named(store)
    whole = get_trace(store, N, attributes=False)
    assert [n.span_id for n in whole.spans][-1] == "n5"
    assert whole.spans[-1].step.arguments == {"city": "Oslo"}
    last = get_trace(store, N, attributes=False, offset=4, limit=1)
    assert [n.span_id for n in last.spans] == ["n5"]
    assert last.spans[0].step.arguments == {"city": "Oslo"}


def test_spans_without_steps_and_span_ids_stored_twice(store):
    """Raw-only spans (their steps deleted, as in an adopted table) and a resent span."""
    seed(store)
    store.command("DELETE FROM agent_steps WHERE span_id IN ('a4', 'b2')")
    insert_spans(store, [tool_span(A, "a5", "a1", "send_money", {"to": "Bob", "amount": 7},
                                   {"ok": False}, start=21, service="bank")])
    store.insert("trace_duplicates", {"project_id": ["default"], "trace_id": [A]})
    whole = get_trace(store, A)
    assert [n.span_id for n in whole.spans].count("a5") == 1
    by_id = {n.span_id: n for n in whole.spans}
    assert by_id["a5"].step.arguments == {"to": "Bob", "amount": 7}  # the last write
    assert by_id["a4"].step.kind == "other" and by_id["a4"].attributes  # raw row only
    assert "a4" not in {n.span_id for n in get_trace(store, A, attributes=False).spans}
    for tid in (A, B):
        assert_pages_are_the_trace(store, tid)


def test_page_bounds(store):
    seed(store)
    past = get_trace(store, A, offset=50, limit=10)
    assert past.spans == [] and past.next_offset is None and past.summary.span_count == 5
    with pytest.raises(UserError):
        get_trace(store, A, offset=-1)
    with pytest.raises(UserError):
        get_trace(store, A, limit=0)


def test_one_span_with_attributes(store):
    seed(store)
    node = get_span(store, A, "a3")
    assert node.step.tool_name == "send_money" and node.events[0].name == "exception"
    assert node.attributes["gen_ai.tool.name"] == "send_money"
    with pytest.raises(NotFoundError, match="no span zz"):
        get_span(store, A, "zz")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.anyio
async def test_api_pages_and_span_route(store):
    seed(store)
    transport = httpx.ASGITransport(app=minimal_app(store))
    async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as c:
        whole = (await c.get(f"/api/traces/{A}")).json()
        got, offset = [], 0
        while offset is not None:
            page = (await c.get(f"/api/traces/{A}", params={"offset": offset, "limit": 2})).json()
            assert page["summary"] == whole["summary"] and len(page["spans"]) <= 2
            got += page["spans"]
            offset = page["next_offset"]
        assert got == whole["spans"]
        slim = (await c.get(f"/api/traces/{A}", params={"attributes": "false"})).json()
        assert all(not s["attributes"] for s in slim["spans"])
        one = (await c.get(f"/api/traces/{A}/spans/a3")).json()
        assert one == next(s for s in whole["spans"] if s["span_id"] == "a3")
        assert (await c.get(f"/api/traces/{A}/spans/nope")).status_code == 404
        assert (await c.get(f"/api/traces/{A}", params={"limit": 0})).status_code in (400, 422)


def test_cli_streams_the_same_document(store):
    seed(store)
    url = f"chdb://{store.path}?database={store.database}"
    run = CliRunner().invoke
    res = run(cli, ["--store", url, "traces", "show", A, "--json"], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert json.loads(res.output) == get_trace(store, A).model_dump(mode="json")
    res = run(cli, ["--store", url, "traces", "show", A, "--json", "--offset", "1", "--limit", "2"])
    body = json.loads(res.output)
    assert [s["span_id"] for s in body["spans"]] == ["a2", "a3"]
    assert (body["offset"], body["next_offset"]) == (1, 3)
    res = run(cli, ["--store", url, "traces", "show", A, "--limit", "2"])
    assert res.exit_code == 0 and "more: --offset 2" in res.output
    assert "send_money" not in res.output.split("more:")[0].split("\n", 2)[2]  # a1, a2 only
