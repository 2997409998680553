"""Project API keys: 401 without, 403 for another project, isolation of data."""

from __future__ import annotations

import json

import httpx
from click.testing import CliRunner

from flywheel import create_key, list_keys, revoke_key
from flywheel.cli import cli
from tests.ingest._server import running_server


def _body(trace_hex: str, span_hex: str) -> bytes:
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [{
        "traceId": trace_hex, "spanId": span_hex, "name": "execute_tool t",
        "startTimeUnixNano": "1", "endTimeUnixNano": "2",
        "attributes": [{"key": "gen_ai.tool.name", "value": {"stringValue": "t"}}]}]}]}]}).encode()


def test_open_until_a_key_exists_then_enforced(store, tmp_path):
    with running_server(store, tmp_path / "wal") as (url, app):
        h = {"content-type": "application/json"}
        assert httpx.post(f"{url}/v1/traces", content=_body("a" * 32, "b" * 16), headers=h).status_code == 200
        key_a = create_key(store, "team-a", "ci")
        key_b = create_key(store, "team-b")
        app.state.key_cache.invalidate()  # else picked up within the cache TTL (5 s)
        r = httpx.post(f"{url}/v1/traces", content=_body("c" * 32, "d" * 16), headers=h)
        assert r.status_code == 401 and r.json()["error"]["type"] == "AuthError"
        bad = httpx.post(f"{url}/v1/traces", content=_body("c" * 32, "d" * 16),
                         headers={**h, "authorization": "Bearer fwk_nope_nope"})
        assert bad.status_code == 401
        other = httpx.post(f"{url}/v1/traces", content=_body("c" * 32, "d" * 16),
                           headers={**h, "authorization": f"Bearer {key_a}", "x-flywheel-project": "team-b"})
        assert other.status_code == 403 and other.json()["error"]["type"] == "ForbiddenError"
        ok = httpx.post(f"{url}/v1/traces", content=_body("c" * 32, "d" * 16),
                        headers={**h, "authorization": f"Bearer {key_a}"})
        assert ok.status_code == 200
        okb = httpx.post(f"{url}/v1/traces", content=_body("e" * 32, "f" * 16),
                         headers={**h, "x-flywheel-key": key_b})
        assert okb.status_code == 200
        assert httpx.get(f"{url}/healthz").status_code == 200
        assert app.state.writer.flush(10)
        # isolation: each project sees only its own trace
        pa = httpx.get(f"{url}/api/traces/{'c' * 32}/provenance", headers={"authorization": f"Bearer {key_a}"})
        assert pa.status_code == 200
        pb = httpx.get(f"{url}/api/traces/{'c' * 32}/provenance", headers={"authorization": f"Bearer {key_b}"})
        assert pb.status_code == 404
    rows = store.query("SELECT TraceId, ProjectId FROM otel_traces ORDER BY TraceId")
    assert [(r["TraceId"][0], r["ProjectId"]) for r in rows] == [("a", "default"), ("c", "team-a"), ("e", "team-b")]
    assert all(k.project_id in ("team-a", "team-b") for k in list_keys(store))
    stored = store.query("SELECT key_hash FROM api_keys")
    assert key_a not in json.dumps(stored) and all(len(r["key_hash"]) == 64 for r in stored)
    revoke_key(store, key_a.split("_")[1])
    assert [k.revoked for k in list_keys(store) if k.project_id == "team-a"] == [True]


def test_keys_cli(store):
    url = f"chdb://{store.path}?database={store.database}"
    out = CliRunner().invoke(cli, ["--store", url, "keys", "create", "--project", "p1", "--json"])
    assert out.exit_code == 0, out.output
    key = json.loads(out.output)["key"]
    listed = CliRunner().invoke(cli, ["--store", url, "keys", "list", "--json"])
    assert key not in listed.output and "p1" in listed.output
    bad = CliRunner().invoke(cli, ["--store", url, "keys", "create", "--project", "bad project"])
    assert bad.exit_code == 1 and bad.output.startswith("error:")
    missing = CliRunner().invoke(cli, ["--store", url, "keys", "revoke", "nope"])
    assert missing.exit_code == 1
