"""The security matrix: every route x every kind of credential -> the expected status.

Credentials: none, a wrong key, a malformed header, a revoked key (every
scope), a key of each single scope (ingest, read, raw, review, admin) of project
A, and project B's key (every scope) naming project A. Expected:

- none, wrong, malformed, revoked: 401;
- B's key naming A: 403 (``tests/flywheel/test_isolation.py`` shows what B's
  key sees of A's data without naming A: nothing);
- a single-scope key: the route's answer when the scope is in ``SCOPES``
  below (written here, not read from the code), else 403. ``raw`` alone
  opens nothing but ``whoami``: it only changes what a ``read`` key sees of a
  trace's text (``tests/ingest/test_trace_view_scopes.py`` checks the bodies).

Routes come from walking ``app.routes``: a new route without a row in
``SCOPES`` fails. Writes that the scope allows are sent with a stale
``base_version`` (409: authorised, nothing written), so cells do not depend on
the order they are tried in. The matrix the run saw is in the failure message.
"""

from __future__ import annotations

from typing import Any

import httpx

from flywheel import create_key, revoke_key
from tests.flywheel.test_isolation import (
    _DIFF,
    A,
    B,
    OPEN_OPS,
    TRACE,
    TRIAL,
    Case,
    _ops,
    _otlp,
    _send,
    two_projects,  # noqa: F401 - the fixture
)

ALL = ("ingest", "read", "raw", "review", "admin")
#: operation_id -> the scopes that may call it (the specification of least privilege).
SCOPES: dict[str, tuple[str, ...]] = {
    "whoami": ALL,
    "list_keys": ("admin",),
    "create_key": ("admin",),
    "revoke_key": ("admin",),
    "list_audit": ("admin",),
    "get_config": ("admin",),
    "export_traces": ("ingest",),
    "list_traces": ("read",),
    "get_trace": ("read",),
    "get_span": ("read",),
    "get_trace_provenance": ("read",),
    "get_trace_attribution": ("read",),
    "get_trial_side_effects": ("read",),
    "diff_side_effects": ("read",),
    "list_review_queue": ("read", "review"),
    "get_candidate": ("read", "review"),
    "list_reviewer_progress": ("read", "review"),
    "claim_candidate": ("review",),
    "unclaim_candidate": ("review",),
    "reopen_candidate": ("review",),
    "edit_candidate_task": ("review",),
    "decide_candidate": ("review",),
    "redact_candidate": ("review",),
    "record_leak_exception": ("review",),
    "list_tools": ("read",),
    "get_tool": ("read",),
    "set_tool": ("admin",),
    "delete_tool": ("admin",),
    "import_tool_manifest": ("admin",),
}


def requests(cid: str, spare: str) -> dict[str, tuple[Case, int]]:
    """operation_id -> (a request on A's resources, its status when the scope allows it)."""
    c = f"/api/promote/candidates/{cid}"
    stale = {"base_version": 99}
    json_ct = {"content-type": "application/json"}
    return {
        "whoami": (Case("GET", "/api/auth/whoami"), 200),
        "list_keys": (Case("GET", "/api/keys"), 200),
        "create_key": (Case("POST", "/api/keys", json={"scopes": ["read"], "name": "x"}), 201),
        "revoke_key": (Case("POST", f"/api/keys/{spare}/revoke"), 200),
        "list_audit": (Case("GET", "/api/audit"), 200),
        "get_config": (Case("GET", "/api/config"), 200),
        "export_traces": (Case("POST", "/v1/traces", content=_otlp("f" * 32), headers=json_ct), 200),
        "list_traces": (Case("GET", "/api/traces"), 200),
        "get_trace": (Case("GET", f"/api/traces/{TRACE}"), 200),
        "get_span": (Case("GET", f"/api/traces/{TRACE}/spans/{'0' * 16}"), 404),
        "get_trace_provenance": (Case("GET", f"/api/traces/{TRACE}/provenance"), 200),
        "get_trace_attribution": (Case("GET", f"/api/traces/{TRACE}/attribution"), 200),
        "get_trial_side_effects": (Case("GET", f"/api/trials/{TRIAL}/side-effects"), 200),
        "diff_side_effects": (Case("POST", "/api/side-effects/diff", json=_DIFF), 200),
        "list_review_queue": (Case("GET", "/api/promote/queue"), 200),
        "get_candidate": (Case("GET", c), 200),
        "list_reviewer_progress": (Case("GET", "/api/promote/reviewers"), 200),
        "claim_candidate": (Case("POST", f"{c}/claim", json=stale), 409),
        "unclaim_candidate": (Case("POST", f"{c}/unclaim", json=stale), 409),
        "reopen_candidate": (Case("POST", f"{c}/reopen", json=stale), 409),
        "edit_candidate_task": (Case("PUT", f"{c}/task", json={**stale, "task": {}}), 409),
        "decide_candidate": (
            Case("POST", f"{c}/decision", json={**stale, "decision": "approve"}), 409),
        "redact_candidate": (
            Case("POST", f"{c}/redact", json={**stale, "deny_strings": {"NAME": ["x"]}}), 409),
        "record_leak_exception": (
            Case("POST", "/api/promote/leak-exceptions",
                 json={"evalset": "default", "task_id": "t-none", "path": "$.prompt",
                       "entity": "NAME", "reason": "checked"}), 404),
        "list_tools": (Case("GET", "/api/tools"), 200),
        "get_tool": (Case("GET", "/api/tools/update_address"), 200),
        "set_tool": (Case("PUT", "/api/tools/matrix_probe", json={"effect": "read"}), 200),
        "delete_tool": (Case("DELETE", "/api/tools/matrix_probe"), 200),
        "import_tool_manifest": (
            Case("POST", "/api/tools/manifest", content=b'[tools.matrix_probe]\neffect = "read"\n'),
            200),
    }


def _table(rows: dict[str, dict[str, int]], creds: list[str]) -> str:
    head = f"{'route':<24}" + "".join(f"{c:>10}" for c in creds)
    return "\n".join([head] + [f"{op:<24}" + "".join(f"{row[c]:>10}" for c in creds)
                               for op, row in rows.items()])


def test_every_route_against_every_credential(two_projects: Any, store: Any) -> None:  # noqa: F811
    url, app, cid, keys, spare = two_projects
    served = _ops(app)
    assert set(served) - OPEN_OPS == set(SCOPES), (
        "every route needs its scopes in SCOPES (or, if it holds no data, OPEN_OPS)")
    spec = app.openapi()["paths"]
    for op, path in served.items():  # the documented scopes are the specified ones
        documented = [m.get("x-flywheel-scopes") for m in spec[path].values()
                      if m.get("operationId") == op]
        assert documented == ([None] if op in OPEN_OPS else [list(SCOPES[op])]), op
    single = {s: create_key(store, A, [s], name=f"only-{s}") for s in ALL}
    revoked = create_key(store, A, ALL, name="gone")
    revoke_key(store, revoked.split("_")[1])
    app.state.key_cache.invalidate()
    creds: dict[str, tuple[str | None, dict[str, str]]] = {
        "none": (None, {}),
        "wrong": ("fwk_000000000000_notavalidsecretnotavalidsecret0", {}),
        "malformed": (None, {"authorization": "Basic YWxpY2U6cHc="}),
        "revoked": (revoked, {}),
        **{s: (k, {}) for s, k in single.items()},
        "other-proj": (keys[B], {"x-flywheel-project": A}),
    }
    table = requests(cid, spare)
    expected: dict[str, dict[str, int]] = {}
    seen: dict[str, dict[str, int]] = {}
    with httpx.Client(base_url=url, timeout=60) as client:
        assert _send(client, Case("POST", "/api/side-effects/diff", json=_DIFF), keys[A]).status_code == 200
        for op, (case, ok) in table.items():
            expected[op], seen[op] = {}, {}
            for name, (key, extra) in creds.items():
                if name in ("none", "wrong", "malformed", "revoked"):
                    want = 401
                elif name == "other-proj":
                    want = 403
                else:
                    want = ok if name in SCOPES[op] else 403
                expected[op][name] = want
                r = _send(client, case, key, **extra)
                seen[op][name] = r.status_code
                if r.status_code in (401, 403):
                    kind = "AuthError" if r.status_code == 401 else "ForbiddenError"
                    assert r.json()["error"]["type"] == kind, (op, name, r.text)
        for op in OPEN_OPS:
            for name, (key, extra) in creds.items():
                r = client.get(served[op], headers={**extra, **(
                    {"authorization": f"Bearer {key}"} if key else {})})
                assert r.status_code == 200, (op, name)
    names = list(creds)
    assert seen == expected, "observed:\n" + _table(seen, names) + "\nexpected:\n" + _table(
        expected, names)
