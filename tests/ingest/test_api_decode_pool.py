"""The receiver with its decode pool, as ``flywheel serve`` runs it: answers, a dead worker."""

from __future__ import annotations

import json
import os
import signal
import time

import httpx

from flywheel import Store, create_key
from tests.ingest._server import running_server

JSON = {"content-type": "application/json"}


def _body(trace_hex: str) -> bytes:
    return json.dumps(
        {
            "resourceSpans": [
                {
                    "scopeSpans": [
                        {
                            "spans": [
                                {
                                    "traceId": trace_hex,
                                    "spanId": "b" * 16,
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


def test_pool_decodes_rejects_and_survives_a_dead_worker(store: Store, tmp_path) -> None:  # noqa: ANN001
    key = create_key(store, "team-a", ["ingest"], name="agent")
    with running_server(store, tmp_path / "wal", decode_workers=1) as (url, app):
        auth = {**JSON, "authorization": f"Bearer {key}"}
        assert app.state.decode_pool is not None
        ok = httpx.post(f"{url}/v1/traces", content=_body("a" * 32), headers=auth, timeout=60)
        assert ok.status_code == 200, ok.text
        bad = httpx.post(f"{url}/v1/traces", content=b"\x00{not otlp", headers=auth, timeout=60)
        assert bad.status_code == 400 and bad.json()["message"]
        bad_pb = httpx.post(
            f"{url}/v1/traces",
            content=b"\xff" * 64,
            timeout=60,
            headers={"content-type": "application/x-protobuf", "authorization": f"Bearer {key}"},
        )
        assert bad_pb.status_code == 400
        # a worker killed from outside (OOM killer, operator): one retryable 503, then served again
        broken = app.state.decode_pool
        for pid in list(broken._pool._processes):  # noqa: SLF001 - the test needs the worker pids
            os.kill(pid, signal.SIGKILL)
        time.sleep(0.5)
        r = httpx.post(f"{url}/v1/traces", content=_body("c" * 32), headers=auth, timeout=60)
        assert r.status_code == 503 and r.headers["retry-after"] == "1", r.text
        assert app.state.decode_pool is not broken
        again = httpx.post(f"{url}/v1/traces", content=_body("c" * 32), headers=auth, timeout=60)
        assert again.status_code == 200, again.text
        assert app.state.writer.flush(10)
    rows = store.query("SELECT TraceId, ProjectId FROM otel_traces ORDER BY TraceId")
    assert [(r["TraceId"][0], r["ProjectId"]) for r in rows] == [("a", "team-a"), ("c", "team-a")]
