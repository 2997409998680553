"""Acknowledged means durable: kill -9 the server mid-stream, restart, count.

The server runs as a real subprocess (``flywheel serve``) over its own chDB
directory; a client streams OTLP/protobuf requests of unique spans and keeps
the ids of every request answered 200. After SIGKILL and a restart (which
replays the log), every acknowledged span is in the store exactly once.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.ingest._server import free_port


def _request(batch: int, n: int) -> tuple[bytes, list[str]]:
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    kv = rs.resource.attributes.add()
    kv.key, kv.value.string_value = "service.name", "crash-test"
    ss = rs.scope_spans.add()
    ids = []
    for i in range(n):
        sp = ss.spans.add()
        sp.trace_id = (batch + 1).to_bytes(16, "big")
        sp.span_id = (batch * 100_000 + i + 1).to_bytes(8, "big")
        sp.name = "execute_tool lookup"
        sp.start_time_unix_nano = 1_700_000_000_000_000_000 + i
        sp.end_time_unix_nano = sp.start_time_unix_nano + 1000
        a = sp.attributes.add()
        a.key, a.value.string_value = "gen_ai.tool.name", "lookup"
        ids.append(sp.span_id.hex())
    return req.SerializeToString(), ids


def _start(store_dir: Path, port: int, wal: Path) -> subprocess.Popen:
    store_dir.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "FLYWHEEL_INGEST__FLUSH_INTERVAL_S": "0.05"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "flywheel", "--store", f"chdb://{store_dir}", "serve",
         "--port", str(port), "--wal-dir", str(wal)],
        env=env, stdout=subprocess.DEVNULL, stderr=open(store_dir.parent / "server.log", "ab"),
    )
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            raise RuntimeError((store_dir.parent / "server.log").read_text()[-2000:])
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not become ready")


def _span_counts(store_dir: Path) -> dict[str, int]:
    code = (
        "import json,sys; from flywheel import open_store; s=open_store(sys.argv[1]);"
        "rows=s.query('SELECT SpanId, count() AS c FROM otel_traces GROUP BY SpanId');"
        "print(json.dumps({r['SpanId']: r['c'] for r in rows}))"
    )
    out = subprocess.run([sys.executable, "-c", code, f"chdb://{store_dir}"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def run_crash_once(tmp: Path, *, clients: int = 4, kill_after_s: float = 1.5) -> tuple[int, int]:
    """One kill -9 cycle; returns (acknowledged spans, spans found once)."""
    store_dir, wal = tmp / "store", tmp / "wal"
    port = free_port()
    proc = _start(store_dir, port, wal)
    acked: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def client(k: int) -> None:
        batch = k * 10_000
        with httpx.Client(timeout=5) as c:
            while not stop.is_set():
                body, ids = _request(batch, 200)
                batch += 1
                try:
                    r = c.post(f"http://127.0.0.1:{port}/v1/traces", content=body,
                               headers={"content-type": "application/x-protobuf"})
                except httpx.HTTPError:
                    return
                if r.status_code == 200:
                    with lock:
                        acked.extend(ids)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(clients)]
    for t in threads:
        t.start()
    time.sleep(kill_after_s)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    stop.set()
    for t in threads:
        t.join()
    proc = _start(store_dir, port, wal)  # replays the log
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    counts = _span_counts(store_dir)
    missing = [s for s in acked if counts.get(s, 0) == 0]
    dupes = {s: c for s, c in counts.items() if c != 1}
    assert not missing, f"{len(missing)} acknowledged spans lost"
    assert not dupes, f"{len(dupes)} spans stored more than once"
    return len(acked), sum(1 for s in acked if counts.get(s) == 1)


def test_kill_9_loses_no_acknowledged_span(tmp_path):
    acked, once = run_crash_once(tmp_path)
    assert acked > 0 and acked == once


@pytest.mark.slow
def test_kill_9_twenty_times(tmp_path):
    for i in range(20):
        run_crash_once(tmp_path / f"run{i}", kill_after_s=1.0 + (i % 5) * 0.3)
