"""Keys with scopes and identities, the auth modes, the bind check, config and the audit log."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from flywheel import (
    Settings,
    Store,
    UserError,
    auth_state,
    check_serving,
    create_app,
    create_key,
    list_keys,
    read_audit,
    revoke_key,
)
from flywheel._migrations import migration_statements, package_migrations
from flywheel.cli import cli
from tests._auth import LOCAL, bearer

pytestmark = pytest.mark.anyio
TOKEN = "t" * 40


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _client(app: Any, *, client: tuple[str, int] = ("127.0.0.1", 5000), base: str = LOCAL,
            headers: dict[str, str] | None = None) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, client=client)
    return httpx.AsyncClient(transport=transport, base_url=base, headers=headers or {})


def _url(store: Store) -> str:
    return f"chdb://{store.path}?database={store.database}"


def test_keys_carry_scopes_identity_and_only_a_hash(store: Store) -> None:
    key = create_key(store, "team-a", ["review", "read"], name="alice", actor="local:op")
    agent = create_key(store, "team-a", "ingest")
    [a, b] = list_keys(store, project="team-a")
    assert (a.identity, a.scopes, a.created_by, a.revoked) == ("alice", ("read", "review"),
                                                               "local:op", False)
    assert b.identity == f"key:{agent.split('_')[1]}" and b.scopes == ("ingest",)
    stored = json.dumps(store.query("SELECT * FROM auth_keys"), default=str)
    assert key not in stored and agent not in stored and key.split("_", 2)[2] not in stored
    gone = revoke_key(store, a.key_id, actor="bob")
    assert gone.revoked and gone.revoked_by == "bob"
    create_key(store, "team-a", ["read"], name="carol")  # a later row elsewhere changes nothing
    assert [k.revoked for k in list_keys(store) if k.identity == "alice"] == [True]
    audit = read_audit(store, project="team-a")
    assert [(e.action, e.actor) for e in audit] == [
        ("key.create", "unknown"), ("key.revoke", "bob"), ("key.create", "unknown"),
        ("key.create", "local:op")]
    assert all(key not in json.dumps(e.to_dict()) for e in audit)


@pytest.mark.parametrize("scopes, name, match", [
    ([], "x", "no scope"),
    (["write"], "x", "unknown scope"),
    (["review"], "", "review key needs --name"),
    (["read"], "local:root", "reserved"),
    (["read"], "admin-token:x", "reserved"),
    (["read"], "a" * 101, "invalid key name"),
])
def test_key_validation(store: Store, scopes: list[str], name: str, match: str) -> None:
    with pytest.raises(UserError, match=match):
        create_key(store, "p", scopes, name=name)
    with pytest.raises(UserError, match="invalid project"):
        create_key(store, "bad project", ["read"])


def test_keys_created_before_scopes_keep_their_powers(store: Store) -> None:
    """An old api_keys fixture through migration 002: ingest, read, review; revocation kept."""
    store.insert("api_keys", {"key_id": ["aaaaaaaaaaaa", "bbbbbbbbbbbb", "bbbbbbbbbbbb"],
                              "key_hash": ["h1", "h2", "h2"], "project_id": ["p", "p", "p"],
                              "name": ["ci", "", ""], "revoked": [0, 0, 1],
                              "created_at": [1_000_000_000, 2_000_000_000, 3_000_000_000]})
    mig = next(m for m in package_migrations("flywheel") if m.version == 2)
    for stmt in migration_statements(mig, cluster=None, otel_table="otel_traces"):
        if stmt.startswith("INSERT"):
            store.command(stmt)
    keys = {k.key_id: k for k in list_keys(store)}
    assert keys["aaaaaaaaaaaa"].identity == "ci" and not keys["aaaaaaaaaaaa"].revoked
    assert keys["aaaaaaaaaaaa"].scopes == ("ingest", "read", "review")
    assert keys["bbbbbbbbbbbb"].identity == "key:bbbbbbbbbbbb" and keys["bbbbbbbbbbbb"].revoked


async def test_local_mode_serves_loopback_only_until_the_first_key(store: Store) -> None:
    app = create_app(Settings(), store)
    async with _client(app) as c:
        me = (await c.get("/api/auth/whoami")).json()
        assert me["identity"].startswith("local:") and me["via"] == "local"
        assert me["scopes"] == ["ingest", "read", "raw", "review", "admin"]
    async with _client(app, client=("203.0.113.7", 5000)) as c:  # a remote client
        r = await c.get("/api/traces")
        assert r.status_code == 401 and "no API key exists yet" in r.json()["error"]["message"]
        assert (await c.get("/healthz")).status_code == 200
    async with _client(app, base="http://evil.example") as c:  # DNS rebinding: foreign Host
        assert (await c.get("/api/traces")).status_code == 401
    key = create_key(store, "default", ["read"], name="reader")
    app.state.key_cache.invalidate()  # else within LOCAL_RECHECK_S (1 s)
    async with _client(app) as c:  # the first key ends local mode
        assert (await c.get("/api/traces")).status_code == 401
        assert (await c.get("/api/traces", headers=bearer(key))).status_code == 200


async def test_required_and_off_modes(store: Store) -> None:
    async with _client(create_app(Settings(auth="required"), store)) as c:
        assert (await c.get("/api/traces")).status_code == 401  # loopback too
    async with _client(create_app(Settings(auth="off"), store), client=("203.0.113.7", 1)) as c:
        me = (await c.get("/api/auth/whoami")).json()
        assert me["identity"] == "anonymous" and "admin" in me["scopes"]


async def test_admin_token_administers_and_reads_nothing(store: Store) -> None:
    app = create_app(Settings(admin_token=TOKEN), store)
    async with _client(app, client=("203.0.113.7", 1), headers=bearer(TOKEN)) as c:
        assert (await c.get("/api/traces")).status_code == 403  # admin is not read
        r = await c.post("/api/keys", json={"scopes": ["review"], "name": "alice"},
                         headers={"x-flywheel-project": "team-a"})
        assert r.status_code == 201, r.text
        made = r.json()
        assert made["project_id"] == "team-a" and made["created_by"] == "admin-token"
        r = await c.post("/api/keys", json={"scopes": ["review"]})
        assert r.status_code == 400 and "needs --name" in r.json()["error"]["message"]
        me = (await c.get("/api/auth/whoami", headers=bearer(made["key"]))).json()
        assert (me["identity"], me["project"], me["scopes"]) == ("alice", "team-a", ["review"])
        r = await c.post(f"/api/keys/{made['key_id']}/revoke", headers={"x-flywheel-project": "team-a"})
        assert r.status_code == 200 and r.json()["revoked_by"] == "admin-token"
        assert (await c.get("/api/auth/whoami", headers=bearer(made["key"]))).status_code == 401
        audit = (await c.get("/api/audit", headers={"x-flywheel-project": "team-a"})).json()
        assert [(e["action"], e["actor"]) for e in audit] == [
            ("key.revoke", "admin-token"), ("key.create", "admin-token")]
        cfg = (await c.get("/api/config")).json()
        assert cfg["settings"]["admin_token"] == "***" and TOKEN not in json.dumps(cfg)
        assert cfg["auth"]["enforcement"].startswith("keys:")
        assert (await c.get("/api/auth/whoami", headers=bearer("t" * 39))).status_code == 401


def test_a_revoked_key_is_refused_within_the_cache_ttl(store: Store) -> None:
    from flywheel._auth import KeyCache

    cache = KeyCache(store, ttl=0.0)
    key = create_key(store, "p", ["read"])
    assert cache.principal_of(key) is not None
    assert cache.principal_of(key[:-1] + ("x" if key[-1] != "x" else "y")) is None
    revoke_key(store, key.split("_")[1])
    assert cache.principal_of(key) is None
    # unknown key ids cost a store lookup only within a token bucket
    limited = KeyCache(store, ttl=60, lookups_per_s=0.001, burst=2)
    limited.keys()
    fresh = [create_key(store, "p", ["read"]) for _ in range(3)]
    assert [limited.principal_of(k) is not None for k in fresh] == [True, True, False]


def test_serving_anything_but_loopback_needs_authentication(store: Store) -> None:
    settings = Settings(store="clickhouse://u:pw-9x@h:8123/db")
    assert check_serving(settings, store, "127.0.0.1") is None
    assert check_serving(settings, store, "localhost") is None
    assert check_serving(settings, store, "::1") is None
    for host in ("0.0.0.0", "::", "10.0.0.5", "flywheel.internal"):
        with pytest.raises(UserError) as err:
            check_serving(settings, store, host)
        msg = err.value.message
        assert f"refusing to serve on {host}" in msg and "keys create" in msg
        assert "--scope admin" in msg and "FLYWHEEL_ADMIN_TOKEN" in msg and "--insecure-no-auth" in msg
        assert "pw-9x" not in msg
    assert check_serving(Settings(admin_token=TOKEN), store, "0.0.0.0") is None
    with pytest.raises(UserError, match="shorter than 32"):
        check_serving(Settings(admin_token="short"), store, "0.0.0.0")
    assert "authentication is off" in check_serving(Settings(auth="off"), store, "0.0.0.0")
    create_key(store, "default", ["admin"], name="op")
    assert check_serving(settings, store, "0.0.0.0") is None


def test_serve_on_all_interfaces_without_auth_is_refused(store: Store, monkeypatch: Any) -> None:
    import uvicorn

    started: list[str] = []
    monkeypatch.setattr(uvicorn, "run", lambda app, host, **kw: started.append(host))
    runner = CliRunner()
    r = runner.invoke(cli, ["--store", _url(store), "serve", "--host", "0.0.0.0",
                            "--decode-workers", "0"])
    assert r.exit_code == 1 and r.output.startswith("error: refusing to serve on 0.0.0.0")
    assert started == []
    r = runner.invoke(cli, ["--store", _url(store), "serve", "--host", "0.0.0.0",
                            "--decode-workers", "0", "--insecure-no-auth"])
    assert r.exit_code == 0 and "authentication is off" in r.output and started == ["0.0.0.0"]
    [entry] = read_audit(store, action="server.start")
    assert entry.detail["auth"] == "off" and entry.detail["host"] == "0.0.0.0"


def test_keys_config_and_audit_cli(store: Store) -> None:
    url, runner = _url(store), CliRunner()
    before = json.loads(runner.invoke(cli, ["--store", url, "config", "--json"]).output)
    assert before["auth"] == "auto" and before["auth_state"]["live_keys"] == 0
    assert before["auth_state"]["enforcement"].startswith("local:")
    out = runner.invoke(cli, ["--store", url, "keys", "create", "--project", "p1", "--scope",
                              "review", "--scope", "read", "--name", "alice", "--json"])
    assert out.exit_code == 0, out.output
    made = json.loads(out.output)
    assert made["scopes"] == ["review", "read"] and made["key"].startswith("fwk_")
    after = json.loads(runner.invoke(cli, ["--store", url, "config", "--json"]).output)
    assert after["auth_state"]["live_keys"] == 1
    assert after["auth_state"]["enforcement"].startswith("keys:")  # not "auth_required: False"
    listed = runner.invoke(cli, ["--store", url, "keys", "list", "--json"])
    assert made["key"] not in listed.output
    assert json.loads(listed.output)[0]["scopes"] == ["read", "review"]
    bad = runner.invoke(cli, ["--store", url, "keys", "create", "--project", "bad project",
                              "--scope", "read"])
    assert bad.exit_code == 1 and bad.output.startswith("error:")
    assert runner.invoke(cli, ["--store", url, "keys", "create", "--project", "p"]).exit_code == 2
    assert runner.invoke(cli, ["--store", url, "keys", "revoke", "nope"]).exit_code == 1
    key_id = made["key"].split("_")[1]
    assert runner.invoke(cli, ["--store", url, "keys", "revoke", key_id]).exit_code == 0
    audit = json.loads(runner.invoke(cli, ["--store", url, "audit", "--json"]).output)
    assert [e["action"] for e in audit] == ["key.revoke", "key.create"]
    assert all(e["actor"].startswith("local:") and e["at"] > 0 for e in audit)
    text = runner.invoke(cli, ["--store", url, "audit"]).output
    assert "key.revoke" in text and key_id in text


def test_config_never_creates_a_store(tmp_path: Any) -> None:
    r = CliRunner().invoke(cli, ["--store", f"chdb://{tmp_path}/nothing", "config", "--json"])
    assert r.exit_code == 0 and json.loads(r.output)["auth_state"]["live_keys"] == 0
    assert not (tmp_path / "nothing").exists()
    assert auth_state(Settings(), None).enforcement.startswith("unknown")


def test_a_reload_waiting_behind_a_busy_store_holds_no_request(store: Store,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The store is made to hold its answers (a stand-in for the embedded store busy with a
    large span insert): requests go on with the list they have while it reloads, the
    reload's answer is kept when it comes, and past ``ttl + grace`` the list is reloaded
    before answering."""
    import threading
    import time

    from flywheel._auth import KeyCache

    cache = KeyCache(store, ttl=0.1, grace=30.0)
    key = create_key(store, "p", ["read"])
    assert cache.principal_of(key) is not None
    revoke_key(store, key.split("_")[1])
    gate, real_query = threading.Event(), store.query

    def held_query(*args: Any, **kw: Any) -> Any:
        gate.wait(30)
        return real_query(*args, **kw)

    monkeypatch.setattr(store, "query", held_query)
    time.sleep(0.15)
    t0 = time.monotonic()
    assert cache.principal_of(key) is not None  # answered from the list it holds
    assert time.monotonic() - t0 < 1.0
    gate.set()  # the store answers: the revocation is seen
    deadline = time.monotonic() + 10
    while cache.principal_of(key) is not None:
        assert time.monotonic() < deadline, "the background reload never landed"
        time.sleep(0.02)
    strict = KeyCache(store, ttl=0.05, grace=0.05)
    fresh = create_key(store, "p", ["read"])
    assert strict.principal_of(fresh) is not None
    revoke_key(store, fresh.split("_")[1])
    time.sleep(0.15)  # past ttl + grace: reloaded before the answer
    assert strict.principal_of(fresh) is None
