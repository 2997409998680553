"""Reviewer spoofing is impossible: every review event records the key's identity.

The old contract took the reviewer from ``X-Flywheel-Reviewer``; any key
holder could approve as anyone. Now the header is ignored, a key's identity
is fixed when the key is created (names with ':' are reserved for the
platform's own identities), and the release and audit log carry who acted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from flywheel.evalset import release_from_store
from flywheel.promote import read_events
from flywheel.tui import ReviewClient

from flywheel import Settings, Store, UserError, create_app, create_key, read_audit
from flywheel.cli import cli
from tests._auth import LOCAL, bearer, key_headers
from tests.ingest._server import running_server
from tests.promote.test_review import drafted  # noqa: F401 - the fixture

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_the_header_never_names_the_reviewer(drafted: Any, tmp_path: Path) -> None:  # noqa: F811
    store, (cid, other) = drafted
    alice, bob = key_headers(store, "review", name="alice"), key_headers(store, "review", name="bob")
    agent = key_headers(store, "ingest", name="agent")
    transport = httpx.ASGITransport(app=create_app(Settings(), store))
    c = f"/api/promote/candidates/{cid}"
    async with httpx.AsyncClient(transport=transport, base_url=LOCAL) as client:
        r = await client.post(f"{c}/claim", json={"base_version": 0},
                              headers={**alice, "x-flywheel-reviewer": "bob"})
        assert r.status_code == 200 and r.json()["claimed_by"] == "alice"
        # bob, even naming alice, cannot act on alice's claim
        r = await client.post(f"{c}/decision", json={"base_version": 1, "decision": "approve"},
                              headers={**bob, "x-flywheel-reviewer": "alice"})
        assert r.status_code == 409 and "claimed by alice" in r.json()["error"]["message"]
        # an agent's ingest key neither reviews nor reads
        for method, path, body in (("POST", f"{c}/claim", {"base_version": 1}),
                                   ("GET", c, None), ("GET", "/api/traces", None),
                                   ("GET", f"/api/promote/queue", None)):
            r = await client.request(method, path, json=body,
                                     headers={**agent, "x-flywheel-reviewer": "alice"})
            assert r.status_code == 403, (path, r.text)
        r = await client.post(f"{c}/decision", json={"base_version": 1, "decision": "approve"},
                              headers={**alice, "x-flywheel-reviewer": "mallory"})
        assert r.status_code == 200 and r.json()["decided_by"] == "alice"
        r = await client.post(f"/api/promote/candidates/{other}/claim", json={"base_version": 0},
                              headers={**bob, "x-flywheel-reviewer": "alice"})
        assert r.json()["claimed_by"] == "bob"
    events = read_events(store)
    assert [(e.kind, e.reviewer) for e in events[cid]] == [("claim", "alice"), ("approve", "alice")]
    assert [(e.kind, e.reviewer) for e in events[other]] == [("claim", "bob")]
    assert store.query("SELECT approved_by FROM approved_tasks FINAL")[0]["approved_by"] == "alice"
    # who released is recorded with the release, in the store and in the audit log
    rel = release_from_store(store, tmp_path, "default", released_by="local:op")
    row = store.query("SELECT evalset, version, released_by FROM evalset_releases")[0]
    assert (row["evalset"], row["version"], row["released_by"]) == ("default", rel.version,
                                                                    "local:op")
    [entry] = read_audit(store, action="evalset.release")
    assert (entry.actor, entry.target) == ("local:op", f"default@{rel.version}")


def test_a_key_cannot_take_a_platform_identity(drafted: Any) -> None:  # noqa: F811
    store, _ = drafted
    for name in ("local:alice", "admin-token:x", "key:abc", "anonymous:1", ""):
        with pytest.raises(UserError):
            create_key(store, "default", ["review"], name=name)


def test_the_reviewer_app_sends_no_reviewer_and_checks_its_key(drafted: Any, tmp_path: Path) -> None:  # noqa: F811
    store, _ = drafted
    client = ReviewClient("http://127.0.0.1:9", reviewer="alice", api_key="k")
    assert "x-flywheel-reviewer" not in {h.lower() for h in client._http.headers}  # noqa: SLF001
    key = create_key(store, "default", ["read", "review"], name="alice")
    reader = create_key(store, "default", ["read"], name="carol")
    runner = CliRunner()
    with running_server(store, tmp_path / "wal", decode_workers=0) as (url, app):
        app.state.key_cache.invalidate()
        r = runner.invoke(cli, ["review", "--url", url, "--api-key", key, "--reviewer", "bob"])
        assert r.exit_code == 1 and "this key acts as 'alice', not 'bob'" in r.output, r.output
        r = runner.invoke(cli, ["review", "--url", url, "--api-key", reader])
        assert r.exit_code == 1 and "no review scope" in r.output
        r = runner.invoke(cli, ["review", "--url", url])
        assert r.exit_code == 1 and "valid project API key" in r.output
        who = httpx.get(f"{url}/api/auth/whoami", headers=bearer(key)).json()
        assert (who["identity"], who["scopes"]) == ("alice", ["read", "review"])
