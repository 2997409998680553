"""Per-project isolation on every route of the app, with two projects' keys.

Every route the app serves must appear in ``cases`` (the test walks
``app.routes``, so a new route without an isolation case fails here). For
each one: no key is 401, project A's key naming project B is 403, and
project B's key never sees or changes project A's data: a path naming A's
trace, candidate or trial is 404 (the ingest convention: not leaking that it
exists), listings come back without A's rows, and B's writes land in B. A's
view of every read route is the same before and after B's requests.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from flywheel.promote import (
    SamplingPolicy,
    dedupe_candidates,
    draft_candidates,
    redact_candidates,
    sample_candidates,
)

from flywheel import Store, create_key
from flywheel._auth import OPEN_PATHS
from tests.ingest._server import running_server
from tests.promote.test_sampling import agent_trace, insert, refund_trace, tid

A, B = "team-a", "team-b"
TRACE = tid(1)  # A's failed refund trace
TRIAL = "trial-a"


@dataclass
class Case:
    """One route: the request (paths name A's resources) and what B's key gets."""

    method: str
    path: str
    json: Any = None
    content: bytes | None = None
    headers: dict[str, str] = field(default_factory=dict)
    b_status: int = 404  # A's resource under B's key
    read: bool = False  # part of A's before/after snapshot


def _otlp(trace_hex: str) -> bytes:
    return json.dumps(
        {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {
                            "spans": [
                                {
                                    "traceId": trace_hex,
                                    "spanId": "e" * 16,
                                    "name": "execute_tool t",
                                    "startTimeUnixNano": "1",
                                    "endTimeUnixNano": "2",
                                    "attributes": [
                                        {"key": "gen_ai.tool.name", "value": {"stringValue": "t"}}
                                    ],
                                }
                            ]
                        }
                    ]
                }
            ]
        }
    ).encode()


_DIFF = {
    "before": {"notes": [{"id": "n", "t": "Secret plan 42"}], "inbox": []},
    "after": {
        "notes": [{"id": "n", "t": "Secret plan 42"}],
        "inbox": [{"id": 1, "body": "Secret plan 42"}],
    },
    "profile": {"name": "p", "sinks": ["inbox"]},
    "trial_id": TRIAL,
}
_ALL = ["ingest", "read", "review", "admin"]


def cases(cid: str, spare: str) -> dict[str, Case]:
    """operation_id -> the isolation case of that route (B's reads come before B's writes).

    ``spare`` is the id of a key of A that B tries to revoke.
    """
    c = f"/api/promote/candidates/{cid}"
    return {
        "whoami": Case("GET", "/api/auth/whoami", b_status=200, read=True),
        "list_keys": Case("GET", "/api/keys", b_status=200, read=True),
        "list_audit": Case("GET", "/api/audit", b_status=200, read=True),
        "get_config": Case("GET", "/api/config", b_status=200),
        "create_key": Case("POST", "/api/keys", json={"scopes": ["read"], "name": "b-reader"},
                           b_status=201),
        "revoke_key": Case("POST", f"/api/keys/{spare}/revoke"),
        "list_traces": Case("GET", "/api/traces", b_status=200, read=True),
        "get_trace": Case("GET", f"/api/traces/{TRACE}", read=True),
        "get_span": Case("GET", f"/api/traces/{TRACE}/spans/{TRACE[:8]}r0000000", read=True),
        "get_trace_provenance": Case("GET", f"/api/traces/{TRACE}/provenance", read=True),
        "get_trace_attribution": Case("GET", f"/api/traces/{TRACE}/attribution", read=True),
        "export_traces": Case(
            "POST",
            "/v1/traces",
            content=_otlp(TRACE),
            headers={"content-type": "application/json"},
            b_status=200,
        ),
        "list_review_queue": Case("GET", "/api/promote/queue", b_status=200, read=True),
        "get_candidate": Case("GET", c, read=True),
        "list_reviewer_progress": Case("GET", "/api/promote/reviewers", b_status=200, read=True),
        "claim_candidate": Case("POST", f"{c}/claim", json={"base_version": 1}),
        "unclaim_candidate": Case("POST", f"{c}/unclaim", json={"base_version": 1}),
        "reopen_candidate": Case("POST", f"{c}/reopen", json={"base_version": 1}),
        "edit_candidate_task": Case(
            "PUT", f"{c}/task", json={"base_version": 1, "task": {}}
        ),
        "decide_candidate": Case(
            "POST", f"{c}/decision", json={"base_version": 1, "decision": "approve"}
        ),
        "redact_candidate": Case(
            "POST",
            f"{c}/redact",
            json={"base_version": 1, "deny_strings": {"NAME": ["x"]}},
        ),
        "record_leak_exception": Case(
            "POST",
            "/api/promote/leak-exceptions",
            json={"evalset": "default", "task_id": "t-1", "path": "$.prompt", "entity": "NAME",
                  "reason": "checked"},
        ),
        "get_trial_side_effects": Case("GET", f"/api/trials/{TRIAL}/side-effects", read=True),
        "diff_side_effects": Case("POST", "/api/side-effects/diff", json=_DIFF, b_status=200),
        # tool semantics: A's view (its traces' tools) holds; B's overrides land in B only
        "list_tools": Case("GET", "/api/tools", b_status=200, read=True),
        "get_tool": Case("GET", "/api/tools/update_address", b_status=200, read=True),
        "set_tool": Case("PUT", "/api/tools/update_address", json={"effect": "read"},
                         b_status=200),
        "import_tool_manifest": Case("POST", "/api/tools/manifest",
                                     content=b'[tools.update_address]\nreach = "egress"\n',
                                     b_status=200),
        "delete_tool": Case("DELETE", "/api/tools/update_address", b_status=200),
    }


#: Routes without project data, open without a key (health, readiness, process counters).
OPEN_OPS = {"healthz", "readyz", "metrics"}


def _ops(app: Any) -> dict[str, str]:
    """operation_id -> path of every API route the app serves (walking included routers)."""

    def walk(routes: Any) -> Iterator[Any]:
        for r in routes:
            if hasattr(r, "original_router"):
                yield from walk(r.original_router.routes)
            else:
                yield r

    return {r.operation_id: r.path for r in walk(app.routes) if getattr(r, "operation_id", None)}


@pytest.fixture
def two_projects(
    store: Store, tmp_path: Any
) -> Iterator[tuple[str, Any, str, dict[str, str], str]]:
    """A server over a store where A has a trace, a drafted candidate; keys of A and B (every
    scope, identities alice and mallory) and the id of a spare key of A."""
    spans = refund_trace(1, error="refund API down") + agent_trace(
        tid(2),
        "Please move my deliveries to 12 Elm Road",
        [("update_address", {"address": "12 Elm Road"}, {"ok": True})],
        "Done.",
        root_attrs={"flywheel.slice": "address"},
        start_ms=500,
    )
    for s in spans:
        s["ProjectId"] = A
    insert(store, spans)
    sample_candidates(store, SamplingPolicy(project=A, successes={"per_slice": 5}))
    dedupe_candidates(store, project=A)
    redact_candidates(store, project=A)
    cands = draft_candidates(store, project=A)
    cid = next(c.candidate_id for c in cands if c.trace_id == TRACE)
    keys = {A: create_key(store, A, _ALL, name="alice"), B: create_key(store, B, _ALL, name="mallory")}
    spare = create_key(store, A, ["read"], name="spare").split("_")[1]
    with running_server(store, tmp_path / "wal", decode_workers=0) as (url, app):
        yield url, app, cid, keys, spare


def _send(client: httpx.Client, case: Case, key: str | None, **extra: str) -> httpx.Response:
    headers = {**case.headers, **extra}
    if key:
        headers["authorization"] = f"Bearer {key}"
    return client.request(
        case.method, case.path, json=case.json, content=case.content, headers=headers
    )


def _snapshot(client: httpx.Client, table: dict[str, Case], key: str) -> dict[str, Any]:
    out = {}
    for op, case in table.items():
        if case.read:
            r = _send(client, case, key)
            assert r.status_code == 200, (op, r.text)
            out[op] = r.json()
    return out


def test_every_route_is_isolated_by_project(two_projects, store: Store) -> None:  # noqa: ANN001
    url, app, cid, keys, spare = two_projects
    table = cases(cid, spare)
    served = _ops(app)
    assert set(served) - OPEN_OPS == set(table), (
        "every route needs an isolation case here (or, if it holds no project data, OPEN_OPS)"
    )
    assert {served[op] for op in OPEN_OPS} <= OPEN_PATHS
    with httpx.Client(base_url=url, timeout=60) as client:
        for op, case in table.items():
            r = _send(client, case, None)
            assert r.status_code == 401 and r.json()["error"]["type"] == "AuthError", (op, r.text)
            r = _send(client, case, keys[A], **{"x-flywheel-project": B})
            assert r.status_code == 403 and r.json()["error"]["type"] == "ForbiddenError", (
                op,
                r.text,
            )
        for op in OPEN_OPS:
            r = client.get(served[op])
            assert r.status_code == 200 and A not in r.text and TRACE not in r.text, op

        # A's own state: a claim by alice (the key's identity), a stored side-effect result
        r = client.post(
            f"/api/promote/candidates/{cid}/claim",
            json={"base_version": 0},
            headers={"authorization": f"Bearer {keys[A]}"},
        )
        assert r.status_code == 200 and r.json()["claimed_by"] == "alice", r.text
        r = _send(client, table["diff_side_effects"], keys[A])
        assert r.status_code == 200, r.text
        before = _snapshot(client, table, keys[A])
        assert before["list_traces"]["traces"] and before["list_review_queue"]["items"]
        assert [p["reviewer"] for p in before["list_reviewer_progress"]] == ["alice"]

        # listings under B hold none of A's rows
        assert _send(client, table["list_traces"], keys[B]).json()["traces"] == []
        assert _send(client, table["list_review_queue"], keys[B]).json()["items"] == []
        assert _send(client, table["list_reviewer_progress"], keys[B]).json() == []
        assert {k["identity"] for k in _send(client, table["list_keys"], keys[B]).json()} == {
            "mallory"}
        b_audit = _send(client, table["list_audit"], keys[B]).json()
        assert b_audit and {e["project"] for e in b_audit} == {B}
        for op, case in table.items():
            r = _send(client, case, keys[B])
            assert r.status_code == case.b_status, (op, r.status_code, r.text)
            if r.status_code == 404:
                assert r.json()["error"]["type"] == "NotFoundError", (op, r.text)
        assert app.state.writer.flush(10)
        # B's writes landed in B (same trace and trial ids as A's, A's rows untouched)
        b_trace = _send(client, table["get_trace"], keys[B])
        assert b_trace.status_code == 200, b_trace.text
        assert _send(client, table["get_trial_side_effects"], keys[B]).status_code == 200
        after = _snapshot(client, table, keys[A])
    assert after == before
    rows = store.query(
        "SELECT ProjectId AS p, count() AS n FROM otel_traces WHERE TraceId = {t:String} "
        "GROUP BY p ORDER BY p",
        {"t": TRACE},
    )
    assert [r["p"] for r in rows] == [A, B]
    events = store.query("SELECT DISTINCT project_id, reviewer FROM review_events")
    assert [(e["project_id"], e["reviewer"]) for e in events] == [(A, "alice")]
