"""POST /v1/traces as a plain ASGI handler answers exactly as the FastAPI route did.

The server answers the hot route from ``ingest._api.asgi_routes`` inside the
authentication middleware; the FastAPI route stays for principals without
scope ``ingest`` (their 403) and the OpenAPI document. One app (its
lifespan, through httpx's ASGI transport): every request is sent through the
plain handler, then again with it switched off.
"""

from __future__ import annotations

import asyncio
import gzip
import json

import httpx
import pytest

from flywheel import OverloadedError, Settings, create_app
from flywheel._app import PlainRoutes
from tests.ingest.test_receiver import _json_request, _span

_T = "5b8efff798038103d269b633813fc60c"
_PROTO = {"content-type": "application/x-protobuf"}
_JSON = {"content-type": "application/json"}


def _proto_body() -> bytes:
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    doc = _json_request(_T, [_span(_T, "eee19b7ec3c1b174", "s", {"k": "v"})])
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0].update(
        traceId="W47/95gDgQPSabYzgT/GDA==", spanId="7uGbfsPBsXQ=")
    return json_format.ParseDict(doc, ExportTraceServiceRequest()).SerializeToString()


_CASES = [
    ("json with a rejected span", _JSON, json.dumps(_json_request(_T, [
        _span(_T, "eee19b7ec3c1b175", "execute_tool t", {"gen_ai.tool.name": "t"}),
        _span(_T, "zz", "bad id", {})])).encode()),
    ("protobuf", _PROTO, _proto_body()),
    ("gzip protobuf", {**_PROTO, "content-encoding": "gzip"}, gzip.compress(_proto_body())),
    ("415 type", {"content-type": "text/plain"}, b"x"),
    ("415 encoding", {**_JSON, "content-encoding": "br"}, b"x"),
    ("400 protobuf", _PROTO, b"\xff\xff\xff\xff"),
    ("400 json", _JSON, b"{not json"),
    ("400 gzip", {**_PROTO, "content-encoding": "gzip"}, b"not gzip"),
    ("413 declared", _PROTO, b"x" * 5000),
    ("413 gunzipped", {**_PROTO, "content-encoding": "gzip"}, gzip.compress(b"\0" * 100_000)),
    ("charset parameter", {"content-type": "application/json; charset=utf-8"}, b"{}"),
]


def _answer(r: httpx.Response) -> tuple:
    return (r.status_code, r.headers.get("content-type"), r.headers.get("retry-after"), r.content)


def _plain(app) -> PlainRoutes:
    layer = app.middleware_stack
    while not isinstance(layer, PlainRoutes):
        layer = layer.app
    return layer


async def _rounds(app, store) -> dict[str, dict[str, tuple]]:
    out: dict[str, dict[str, tuple]] = {"plain": {}, "fastapi": {}}
    async with app.router.lifespan_context(app), httpx.AsyncClient(
            transport=httpx.ASGITransport(app, client=("127.0.0.1", 5000)),
            base_url="http://127.0.0.1") as client:
        for route in ("plain", "fastapi"):
            for name, headers, body in _CASES:
                out[route][name] = _answer(await client.post("/v1/traces", content=body,
                                                             headers=headers))
            writer = app.state.writer
            real = writer.check_capacity

            def full(nbytes: int = 0) -> None:
                raise OverloadedError("ingest is 9 bytes behind the store; retry later",
                                      retry_after=3.2)

            writer.check_capacity = full
            out[route]["503"] = _answer(await client.post("/v1/traces", content=_proto_body(),
                                                          headers=_PROTO))
            writer.check_capacity = real
            if route == "plain":
                out["handled_by_plain"] = _plain(app).routes  # type: ignore[assignment]
            _plain(app).routes = {}  # the second round goes through FastAPI
        assert app.state.writer.flush(10)
    out["stored"] = {"n": store.scalar(  # type: ignore[dict-item]
        "SELECT count() FROM otel_traces WHERE TraceId = {t:String}", {"t": _T})}
    return out


@pytest.fixture(scope="module")
def answers(tmp_path_factory, _chdb_template):
    """Each case's answer through the plain handler and through FastAPI's route."""
    store = _chdb_template.fresh()
    settings = Settings(store="chdb:///unused", ingest={
        "wal_dir": tmp_path_factory.mktemp("plain") / "wal", "max_body_bytes": 4096,
        "flush_interval_s": 0.02})
    try:
        return asyncio.run(_rounds(create_app(settings, store), store))
    finally:
        store.close()


@pytest.mark.parametrize("name", [c[0] for c in _CASES] + ["503"])
def test_plain_route_answers_as_fastapi(answers, name):
    assert ("POST", "/v1/traces") in answers["handled_by_plain"]
    assert answers["plain"][name] == answers["fastapi"][name]


def test_plain_route_statuses(answers):
    got = {name: a[0] for name, a in answers["plain"].items()}
    assert got == {"json with a rejected span": 200, "protobuf": 200, "gzip protobuf": 200,
                   "415 type": 415, "415 encoding": 415, "400 protobuf": 400, "400 json": 400,
                   "400 gzip": 400, "413 declared": 413, "413 gunzipped": 413,
                   "charset parameter": 200, "503": 503}
    assert answers["plain"]["503"][2] == "3"
    # two rounds of one accepted JSON span and two protobuf spans (same ids: resends)
    assert answers["stored"]["n"] == 6
