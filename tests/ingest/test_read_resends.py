"""The trace list equals the trace detail after resends and duplicate span ids (issue 19).

Spans go through the real receiver (an exporter's retry is the same request
again); both views are read over HTTP from the same live server. Rule under
test (``ingest._read.WINNER``): each (trace, span) counts once, the last
write wins; writes stored in the same millisecond are ordered by a hash of
their content.
"""

from __future__ import annotations

import json
import time

import httpx

from tests.ingest._server import running_server

TID = "5e" * 16
ROOT, LLM, TOOL = "a1" * 8, "b2" * 8, "c3" * 8


def _span(span_id: str, parent: str, name: str, attrs: dict[str, object], *,
          error: str = "", start: int = 0) -> dict[str, object]:
    def value(v: object) -> dict[str, object]:
        return {"intValue": str(v)} if isinstance(v, int) else {"stringValue": str(v)}

    span: dict[str, object] = {
        "traceId": TID, "spanId": span_id, "parentSpanId": parent, "name": name,
        "startTimeUnixNano": str(1_700_000_000_000_000_000 + start),
        "endTimeUnixNano": str(1_700_000_000_000_000_000 + start + 1_000_000),
        "attributes": [{"key": k, "value": value(v)} for k, v in attrs.items()],
    }
    if error:
        span["status"] = {"code": 2, "message": error}
    return span


def _body(spans: list[dict[str, object]]) -> bytes:
    return json.dumps({"resourceSpans": [{
        "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "agent"}}]},
        "scopeSpans": [{"spans": spans}]}]}).encode()


FIRST = [
    _span(ROOT, "", "invoke_agent helper", {"gen_ai.operation.name": "invoke_agent"}),
    _span(LLM, ROOT, "chat m", {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 100,
                                "gen_ai.usage.output_tokens": 20}, start=1000),
    _span(TOOL, ROOT, "execute_tool search", {"gen_ai.operation.name": "execute_tool",
                                              "gen_ai.tool.name": "search",
                                              "gen_ai.tool.call.arguments": '{"q": "alpha"}'},
          start=2000),
]
#: The same span ids, other content: the tool is another, it failed, the call used more tokens.
SECOND = [
    FIRST[0],
    _span(LLM, ROOT, "chat m", {"gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 150,
                                "gen_ai.usage.output_tokens": 30}, start=1000),
    _span(TOOL, ROOT, "execute_tool fetch", {"gen_ai.operation.name": "execute_tool",
                                             "gen_ai.tool.name": "fetch",
                                             "gen_ai.tool.call.arguments": '{"q": "beta"}'},
          error="timeout",
          start=2000),
]


def _views(url: str) -> tuple[dict, dict]:
    listed = httpx.get(f"{url}/api/traces").json()["traces"]
    assert [t["trace_id"] for t in listed] == [TID]
    detail = httpx.get(f"{url}/api/traces/{TID}").json()
    return listed[0], detail


def _same(listed: dict, detail: dict) -> None:
    summary = detail["summary"]
    steps = [s["step"] for s in detail["spans"]]
    for key in ("span_count", "error_count", "tool_calls", "tool_names", "input_tokens",
                "output_tokens", "total_tokens", "cost", "status", "start_ns", "end_ns",
                "service_name", "root_name"):
        assert listed[key] == summary[key], key
    assert listed["span_count"] == len(detail["spans"])
    assert listed["tool_names"] == sorted({s["tool_name"] for s in steps if s["tool_name"]})
    assert listed["error_count"] == sum(s["status"] == "error" for s in steps)


def _post(url: str, spans: list[dict[str, object]]) -> None:
    r = httpx.post(f"{url}/v1/traces", content=_body(spans),
                   headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text


def _filters(url: str, **query: str) -> list[str]:
    return [t["trace_id"] for t in httpx.get(f"{url}/api/traces", params=query).json()["traces"]]


def test_three_identical_resends_change_nothing(store, tmp_path):
    with running_server(store, tmp_path / "wal") as (url, app):
        for _ in range(4):  # the request and three retries of it
            _post(url, FIRST)
            assert app.state.writer.flush(10)
        assert store.scalar("SELECT count() AS n FROM otel_traces") == 12  # all stored ...
        listed, detail = _views(url)
        _same(listed, detail)  # ... each span counted once
        assert (listed["span_count"], listed["input_tokens"], listed["output_tokens"]) == (3, 100, 20)
        assert listed["tool_names"] == ["search"] and listed["error_count"] == 0


def test_duplicate_span_ids_with_other_content_last_write_wins(store, tmp_path):
    with running_server(store, tmp_path / "wal") as (url, app):
        _post(url, FIRST)
        assert app.state.writer.flush(10)
        time.sleep(0.01)  # a later millisecond: the second write is the last
        _post(url, SECOND)
        assert app.state.writer.flush(10)
        listed, detail = _views(url)
        _same(listed, detail)
        assert (listed["span_count"], listed["input_tokens"], listed["output_tokens"]) == (3, 150, 30)
        assert listed["tool_names"] == ["fetch"] and listed["error_count"] == 1
        tool = next(s for s in detail["spans"] if s["span_id"] == TOOL)
        assert tool["attributes"]["gen_ai.tool.name"] == "fetch"  # raw row of the winning write
        assert _filters(url, tool="fetch") == [TID] and _filters(url, tool="search") == []
        assert _filters(url, has_error="true") == [TID]
        assert _filters(url, text="alpha") == []  # only the losing write's arguments had it
        assert _filters(url, text="beta") == [TID]
        # and a third write flips it back: still one row per span, still equal
        time.sleep(0.01)
        _post(url, FIRST)
        assert app.state.writer.flush(10)
        listed, detail = _views(url)
        _same(listed, detail)
        assert listed["tool_names"] == ["search"] and listed["error_count"] == 0
        assert _filters(url, has_error="true") == [] and _filters(url, has_error="false") == [TID]


def test_duplicates_inside_one_request_are_counted_once(store, tmp_path):
    """Both writes in one request share a millisecond: the content hash picks one, for both views."""
    with running_server(store, tmp_path / "wal") as (url, app):
        _post(url, FIRST + SECOND[1:])
        assert app.state.writer.flush(10)
        listed, detail = _views(url)
        _same(listed, detail)
        assert listed["span_count"] == 3
