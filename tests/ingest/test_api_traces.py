"""``GET /api/traces`` and ``GET /api/traces/{trace_id}`` over ASGI, on a real chDB store."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from flywheel.ingest._api_traces import router

from flywheel import FlywheelError, Settings, Store
from flywheel._app import create_app, error_body
from flywheel._auth import KeyCache
from flywheel._authz import AuthMiddleware
from tests._auth import LOCAL
from tests.ingest.test_read import MS, T0, A, B, C, seeded_store


def minimal_app(store: Any, project: str = "default") -> FastAPI:
    """The router alone, with the platform's two error handlers (as ``create_app`` mounts it)."""
    app = FastAPI()
    app.state.store = store
    app.state.settings = Settings(store=store.url, project=project)

    @app.exception_handler(FlywheelError)
    async def _err(request: Request, exc: FlywheelError) -> JSONResponse:
        return JSONResponse(error_body(exc), status_code=exc.http_status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"error": {"type": "UserError", "message": str(exc.errors()[0])}}, 400)

    app.include_router(router)
    app.add_middleware(AuthMiddleware, cache=KeyCache(store), settings=app.state.settings)
    return app


@pytest.fixture(scope="module")
def seeded(chdb_dir: str) -> Iterator[Store]:
    yield from seeded_store(chdb_dir)


@pytest.fixture
async def client(seeded: Store) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=minimal_app(seeded))
    async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as c:
        yield c


def _ids(resp: httpx.Response) -> list[str]:
    assert resp.status_code == 200, resp.text
    return [t["trace_id"] for t in resp.json()["traces"]]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


pytestmark = pytest.mark.anyio


async def test_list_all(client):
    resp = await client.get("/api/traces")
    assert _ids(resp) == [C, B, A]
    body = resp.json()
    assert body["next_cursor"] is None
    a = body["traces"][2]
    assert a["tool_names"] == ["get_balance", "send_money"] and a["has_error"] is True
    assert a["status"] == "ok" and a["duration_ms"] == 50.0
    assert a["start_time"].startswith("2025-11-30T16:26:40.000")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"service": "shop"}, [B]),
        ({"status": "error"}, [B]),
        ({"has_error": "true"}, [B, A]),
        ({"has_error": "false"}, [C]),
        ({"tool": "send_money"}, [A]),
        ({"text": "red shoes"}, [B]),
        ({"since": str((T0 + 1000 * MS) // 10**9)}, [C, B]),
        ({"until": "2025-11-30T16:26:41Z"}, [A]),
        ({"service": "bank", "has_error": "1", "tool": "get_balance"}, [A]),
    ],
)
async def test_list_filters(client, query, expected):
    assert _ids(await client.get("/api/traces", params=query)) == expected


async def test_list_pages_with_next_cursor(client):
    first = (await client.get("/api/traces", params={"limit": 2})).json()
    assert [t["trace_id"] for t in first["traces"]] == [C, B] and first["next_cursor"]
    second = (
        await client.get("/api/traces", params={"limit": 2, "cursor": first["next_cursor"]})
    ).json()
    assert [t["trace_id"] for t in second["traces"]] == [A] and second["next_cursor"] is None
    assert _ids(await client.get("/api/traces", params={"limit": 1, "offset": 1})) == [B]


@pytest.mark.parametrize(
    "query",
    [
        {"limit": 0},
        {"limit": 1001},
        {"limit": "many"},
        {"offset": -1},
        {"status": "failed"},
        {"has_error": "maybe"},
        {"since": "yesterday"},
        {"until": "soon"},
        {"cursor": "%%%"},
    ],
)
async def test_list_bad_values_are_400(client, query):
    resp = await client.get("/api/traces", params=query)
    assert resp.status_code == 400, resp.text
    assert set(resp.json()["error"]) == {"type", "message"}


async def test_get_trace(client):
    resp = await client.get(f"/api/traces/{A}")
    assert resp.status_code == 200 and resp.headers["content-type"] == "application/json"
    body = resp.json()
    assert body["trace_id"] == A and body["roots"] == ["a1"]
    assert [s["span_id"] for s in body["spans"]] == ["a1", "a2", "a3", "a4", "a5"]
    tool = body["spans"][2]
    assert tool["depth"] == 1 and tool["parent_span_id"] == "a1"
    assert tool["step"]["kind"] == "tool" and tool["step"]["order"] == 3
    assert tool["step"]["arguments"] == {"to": "Alice", "amount": 1100}
    assert tool["step"]["status"] == "error" and tool["step"]["error"] == "insufficient funds"
    assert tool["attributes"]["gen_ai.tool.name"] == "send_money"
    assert tool["events"][0]["name"] == "exception"
    assert body["summary"]["span_count"] == 5 and body["summary"]["tool_calls"] == 3


async def test_get_trace_steps_only(client):
    body = (await client.get(f"/api/traces/{A}", params={"attributes": "false"})).json()
    assert len(body["spans"]) == 5 and all(s["attributes"] == {} for s in body["spans"])


async def test_get_unknown_trace_is_404(client):
    resp = await client.get(f"/api/traces/{'f' * 32}")
    assert resp.status_code == 404
    assert resp.json()["error"]["type"] == "NotFoundError"
    assert "f" * 32 in resp.json()["error"]["message"]


async def test_project_comes_from_settings(seeded):
    transport = httpx.ASGITransport(app=minimal_app(seeded, project="p2"))
    async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as c:
        assert _ids(await c.get("/api/traces")) == ["d" * 32]
        assert (await c.get(f"/api/traces/{A}")).status_code == 404


async def test_routes_declare_operation_summary_and_errors(seeded):
    spec = minimal_app(seeded).openapi()
    ops = {op["operationId"]: op for path in spec["paths"].values() for op in path.values()}
    assert set(ops) == {"list_traces", "get_trace", "get_span"}
    for op in ops.values():
        assert op["summary"] and {"400", "503"} <= set(op["responses"])
    assert "404" in ops["get_trace"]["responses"] and "404" in ops["get_span"]["responses"]
    assert {p["name"] for p in ops["get_trace"]["parameters"]} == {
        "trace_id", "attributes", "offset", "limit"}
    params = {p["name"] for p in ops["list_traces"]["parameters"]}
    assert params == {
        "service",
        "since",
        "until",
        "status",
        "has_error",
        "tool",
        "text",
        "limit",
        "offset",
        "cursor",
    }


async def test_mounted_by_create_app(seeded):
    """The platform's app factory mounts this router with its own error mapping."""
    app = create_app(Settings(store=seeded.url), seeded)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=LOCAL) as c:
        assert _ids(await c.get("/api/traces", params={"tool": "search_catalog"})) == [B]
        assert (await c.get("/api/traces", params={"limit": 0})).status_code == 400
        assert (await c.get(f"/api/traces/{'e' * 32}")).status_code == 404
        assert (await c.get(f"/api/traces/{C}")).json()["summary"]["tool_names"] == ["get_balance"]
