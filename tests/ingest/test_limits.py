"""Input limits (issue 19): multi-member gzip decoded whole, caps cut and counted, workers die with the server."""

from __future__ import annotations

import gzip
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from flywheel.ingest import decode_request
from tests.ingest._server import free_port, running_server

_PB = {"content-type": "application/x-protobuf"}


def _req(first_span: int, n: int = 1) -> ExportTraceServiceRequest:
    req = ExportTraceServiceRequest()
    ss = req.resource_spans.add().scope_spans.add()
    for i in range(n):
        sp = ss.spans.add()
        sp.trace_id = b"\x01" * 16
        sp.span_id = (first_span + i).to_bytes(8, "big")
        sp.name = "chat m"
        sp.start_time_unix_nano = 1_700_000_000_000_000_000
    return req


def test_multi_member_gzip_is_decoded_whole(store, tmp_path):
    """Two gzip members (two requests concatenated: protobuf merges them) store both halves."""
    body = gzip.compress(_req(1, 3).SerializeToString()) + gzip.compress(_req(10, 2).SerializeToString())
    with running_server(store, tmp_path / "wal") as (url, app):
        r = httpx.post(f"{url}/v1/traces", content=body, headers={**_PB, "content-encoding": "gzip"})
        assert r.status_code == 200, r.content
        assert app.state.writer.flush(10)
        assert store.scalar("SELECT count() AS n FROM otel_traces") == 5
        cut = gzip.compress(_req(20).SerializeToString()) + gzip.compress(b"x" * 100)[:15]
        r = httpx.post(f"{url}/v1/traces", content=cut, headers={**_PB, "content-encoding": "gzip"})
        assert r.status_code == 400  # refused whole, never half-stored
        assert app.state.writer.flush(10)
        assert store.scalar("SELECT count() AS n FROM otel_traces") == 5


def _oversized() -> ExportTraceServiceRequest:
    req = _req(1)
    sp = req.resource_spans[0].scope_spans[0].spans[0]
    sp.name = "n" * 10_000_000  # the 10 MB span name
    for i in range(1100):
        kv = sp.attributes.add()
        kv.key, kv.value.string_value = f"k{i}", "v"
    kv = sp.attributes[0]
    kv.key = "k" * 300
    for _ in range(1030):
        sp.events.add().name = "e"
    deep = sp.attributes[1].value
    for _ in range(20):
        deep = deep.array_value.values.add()
    deep.string_value = "bottom"
    return req


def test_caps_cut_and_count_never_reject():
    batch = decode_request(_oversized())
    assert batch.accepted == 1 and batch.rejected == 0
    assert len(batch.table.column("SpanName")[0].as_py()) == 4096
    assert len(batch.table.column("SpanAttributes")[0].as_py()) == 1023  # 1024 kept, 1 long key dropped
    assert len(batch.table.column("Events.Name")[0].as_py()) == 1024
    assert dict(batch.truncated) == {"span_name": 1, "attribute_count": 76, "attribute_key": 1,
                                     "event_count": 6, "nesting_depth": 1}
    assert "truncated: " in batch.error_message() and "1 span_name" in batch.error_message()


def test_caps_are_reported_in_partial_success_and_metrics(store, tmp_path):
    with running_server(store, tmp_path / "wal", max_body_bytes=64 << 20) as (url, app):
        r = httpx.post(f"{url}/v1/traces", content=_oversized().SerializeToString(), headers=_PB)
        assert r.status_code == 200
        resp = ExportTraceServiceResponse.FromString(r.content)
        assert resp.partial_success.rejected_spans == 0
        assert "1 span_name" in resp.partial_success.error_message
        metrics = httpx.get(f"{url}/metrics").text
        assert 'flywheel_ingest_truncated_total{what="span_name"} 1.0' in metrics
        assert 'flywheel_ingest_truncated_total{what="event_count"} 6.0' in metrics
        assert app.state.writer.flush(10)
        rows = httpx.get(f"{url}/api/traces").json()["traces"]
        assert len(rows[0]["root_name"]) == 4096


def _children(pid: int) -> list[int]:
    out = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        text = (task / "children").read_text().split()
        out.extend(int(c) for c in text)
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
def test_decode_workers_exit_when_the_server_is_killed(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "flywheel", "--store", f"chdb://{tmp_path / 'store'}", "serve",
         "--port", str(port), "--decode-workers", "1"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 120
        workers: list[int] = []
        while time.time() < deadline and not workers:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    workers = [c for c in _children(proc.pid)
                               if b"multiprocessing" in Path(f"/proc/{c}/cmdline").read_bytes()]
            except httpx.HTTPError:
                pass
            time.sleep(0.2)
        assert workers, "no decode worker found"
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    deadline = time.time() + 15
    while time.time() < deadline and any(_alive(w) for w in workers):
        time.sleep(0.2)
    left = [w for w in workers if _alive(w)]
    for w in left:
        os.kill(w, signal.SIGKILL)  # do not leave them behind if the test fails
    assert not left, f"decode workers {left} outlived the killed server"
