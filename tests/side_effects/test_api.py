"""REST routes of side effects, through the platform's app factory."""

from __future__ import annotations

import httpx
import pytest

from flywheel import Settings, create_app
from tests._auth import LOCAL

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_diff_store_and_read_back(store) -> None:  # noqa: ANN001 - conftest fixture
    app = create_app(Settings(store=store.url), store)
    body = {
        "before": {
            "inbox": [{"id": 1, "body": "hi"}],
            "notes": [{"id": "n", "t": "Secret plan 42"}],
        },
        "after": {"inbox": [{"id": 1, "body": "hi"}, {"id": 2, "body": "fyi Secret plan 42"}]},
        "profile": {"name": "p", "sinks": ["inbox"]},
        "calls": [
            {"name": "send_message", "args": {"body": "fyi Secret plan 42"}, "span_id": "s1"}
        ],
        "trial_id": "api-1",
    }
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as c:
        r = await c.post("/api/side-effects/diff", json=body)
        assert r.status_code == 200, r.text
        out = r.json()
        assert out["counts"]["unauthorized"] == 2 and out["gate"]["blocking"]
        assert out["gate"]["counts"]["information_movement"] == 1
        got = await c.get("/api/trials/api-1/side-effects")
        assert got.status_code == 200 and got.json()["unauthorized"] == 2
        missing = await c.get("/api/trials/nope/side-effects")
        assert missing.status_code == 404 and "nope" in missing.json()["error"]["message"]
        bad = await c.post("/api/side-effects/diff", json={**body, "scope": {"expected": [{}]}})
        assert bad.status_code == 400
    ops = {op["operationId"]: op for p in app.openapi()["paths"].values() for op in p.values()}
    for name in ("diff_side_effects", "get_trial_side_effects"):
        assert ops[name]["summary"] and {"400", "503"} <= set(ops[name]["responses"])
