"""Who sees a trace's text as recorded: only a key with scopes ``read`` and ``raw``.

``GET /api/traces/{id}`` and ``GET /api/traces/{id}/spans/{span}`` carry
the trace's text (steps, attributes, span names); ``GET /api/traces`` carries
names, and its ``text=`` search reads the text as recorded (``raw`` only). A ``read`` key gets it
redacted (the review queue's redactor, pseudonyms consistent within the
response); ``read`` + ``raw`` gets it as recorded; ``raw`` alone opens no
route; a server with no redactor mounted refuses a ``read`` key rather than
send raw text. The status of every (route, scope) cell is in
``tests/flywheel/test_security_matrix.py``; this file checks the bodies.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from flywheel import Settings, Store, create_app
from tests._auth import LOCAL, key_headers
from tests.ingest.test_api_traces import minimal_app
from tests.promote.test_sampling import agent_trace, insert, tid

EMAIL = "odalys.brennecke@fjordline.example"
PHONE = "+33 6 48 19 27 05"
TRACE = tid(41)

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def seeded(store: Store) -> AsyncIterator[Store]:
    insert(
        store,
        agent_trace(
            TRACE,
            f"Please update the contact of {EMAIL}, new phone {PHONE}.",
            [("update_contact", {"email": EMAIL, "phone": PHONE}, {"ok": True, "who": EMAIL})],
            f"Updated {EMAIL}.",
        ),
    )
    yield store


async def _get(app: Any, path: str, headers: dict[str, str]) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=LOCAL) as c:
        return await c.get(path, headers=headers)


async def test_read_key_sees_redacted_text_raw_key_sees_it_as_recorded(seeded: Store) -> None:
    app = create_app(Settings(), seeded)
    read = key_headers(seeded, "read")
    raw = key_headers(seeded, "read", "raw")
    detail = (await _get(app, f"/api/traces/{TRACE}", raw)).json()
    assert EMAIL in json.dumps(detail) and PHONE in json.dumps(detail)
    span_id = next(s["span_id"] for s in detail["spans"] if s["step"]["tool_name"])

    r = await _get(app, f"/api/traces/{TRACE}", read)
    assert r.status_code == 200, r.text
    text = r.text
    assert EMAIL not in text and "brennecke" not in text and "48 19 27" not in text
    body = r.json()
    # The tree is intact: the same spans, ids and order; the text carries pseudonyms.
    assert [s["span_id"] for s in body["spans"]] == [s["span_id"] for s in detail["spans"]]
    assert body["trace_id"] == detail["trace_id"] and body["roots"] == detail["roots"]
    tool = next(s for s in body["spans"] if s["span_id"] == span_id)
    email_token = tool["step"]["arguments"]["email"]
    assert email_token.startswith("<EMAIL_")
    assert tool["step"]["result"]["who"] == email_token  # one token per value in the response

    r = await _get(app, f"/api/traces/{TRACE}/spans/{span_id}", read)
    assert r.status_code == 200 and EMAIL not in r.text and "<EMAIL_" in r.text
    r = await _get(app, f"/api/traces/{TRACE}/spans/{span_id}", raw)
    assert r.status_code == 200 and EMAIL in r.text


async def test_raw_alone_opens_nothing(seeded: Store) -> None:
    app = create_app(Settings(), seeded)
    only_raw = key_headers(seeded, "raw")
    r = await _get(app, f"/api/traces/{TRACE}", only_raw)
    assert r.status_code == 403 and EMAIL not in r.text


async def test_no_redactor_mounted_refuses_a_read_key(seeded: Store) -> None:
    app = minimal_app(seeded)  # the trace router alone: no redactor
    r = await _get(app, f"/api/traces/{TRACE}", key_headers(seeded, "read"))
    assert r.status_code == 403 and EMAIL not in r.text
    assert "raw" in r.json()["error"]["message"]
    r = await _get(app, f"/api/traces/{TRACE}", key_headers(seeded, "read", "raw"))
    assert r.status_code == 200 and EMAIL in r.text


async def test_schema_fields_are_redacted_as_text_not_by_key_rule(seeded: Store) -> None:
    """A span's ``name`` is the schema's, not a person's: kept unless a detector finds a value."""
    app = create_app(Settings(), seeded)
    body = (await _get(app, f"/api/traces/{TRACE}", key_headers(seeded, "read"))).json()
    raw = (await _get(app, f"/api/traces/{TRACE}", key_headers(seeded, "read", "raw"))).json()
    assert [s["name"] for s in body["spans"]] == [s["name"] for s in raw["spans"]]
    assert body["summary"]["session_id"] == raw["summary"]["session_id"]


async def test_the_list_is_redacted_and_its_text_search_needs_raw(seeded: Store) -> None:
    app = create_app(Settings(), seeded)
    read, raw = key_headers(seeded, "read"), key_headers(seeded, "read", "raw")
    r = await _get(app, "/api/traces?text=brennecke", read)
    assert r.status_code == 403 and "raw" in r.json()["error"]["message"]  # no oracle
    r = await _get(app, "/api/traces?text=brennecke", raw)
    assert r.status_code == 200 and [t["trace_id"] for t in r.json()["traces"]] == [TRACE]
    listed = await _get(app, "/api/traces?limit=1", read)
    assert listed.status_code == 200, listed.text
    as_raw = (await _get(app, "/api/traces?limit=1", raw)).json()
    body = listed.json()
    assert body["next_cursor"] == as_raw["next_cursor"]  # the cursor still pages
    assert [t["trace_id"] for t in body["traces"]] == [t["trace_id"] for t in as_raw["traces"]]
