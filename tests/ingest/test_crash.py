"""Acknowledged means durable: kill -9 the server mid-stream, restart, count.

The server runs as a real subprocess (``flywheel serve``) over its own chDB
directory; a client streams OTLP/protobuf requests of unique spans and keeps
the ids of every request answered 200. After SIGKILL and a restart (which
replays the log), every acknowledged span is in the store exactly once.
"""

from __future__ import annotations

import json
import os
import random
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


def _launch(store_dir: Path, port: int, wal: Path | None, *, fault: str = "",
            wait: bool = True) -> subprocess.Popen:
    """``flywheel serve`` over ``store_dir`` (through the fault wrapper when ``fault``)."""
    store_dir.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "FLYWHEEL_INGEST__FLUSH_INTERVAL_S": "0.05",
           "FLYWHEEL_TEST_FAULT": fault}
    module = "tests.ingest._faulty_serve" if fault else "flywheel"
    args = ["--store", f"chdb://{store_dir}", "serve", "--port", str(port), "--decode-workers", "0"]
    if wal is not None:
        args += ["--wal-dir", str(wal)]
    proc = subprocess.Popen(
        [sys.executable, "-m", module, *args], env=env, cwd=Path(__file__).parents[2],
        stdout=subprocess.DEVNULL, stderr=open(store_dir.parent / "server.log", "ab"),
    )
    if not wait:
        return proc
    deadline = time.time() + 90
    while time.time() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None:
            if fault:
                return proc  # it killed itself where the fault said
            raise RuntimeError((store_dir.parent / "server.log").read_text()[-2000:])
        time.sleep(0.1)
    proc.kill()
    raise RuntimeError("server did not become ready")


def _start(store_dir: Path, port: int, wal: Path | None) -> subprocess.Popen:
    return _launch(store_dir, port, wal)


class _Clients:
    """Clients streaming unique spans at a server; they keep what was answered 200.

    Each client waits ``pause`` seconds between its requests: the server is always
    mid-stream (requests in flight, batches in the log, inserts running) without the
    test spending its CPU on volume, which proves nothing more.
    """

    def __init__(self, port: int, first_batch: int, clients: int = 4, spans: int = 200,
                 pause: float = 0.02) -> None:
        self.acked: list[str] = []
        self.other: list[int] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pause = pause
        self._threads = [threading.Thread(target=self._run, args=(port, first_batch + k * 10_000,
                                                                  spans)) for k in range(clients)]
        for t in self._threads:
            t.start()

    def _run(self, port: int, batch: int, spans: int) -> None:
        with httpx.Client(timeout=5) as c:
            while not self._stop.is_set():
                body, ids = _request(batch, spans)
                batch += 1
                try:
                    r = c.post(f"http://127.0.0.1:{port}/v1/traces", content=body,
                               headers={"content-type": "application/x-protobuf"})
                except httpx.HTTPError:
                    return
                with self._lock:
                    if r.status_code == 200:
                        self.acked.extend(ids)
                    elif r.status_code != 503:
                        self.other.append(r.status_code)
                self._stop.wait(self._pause)

    def wait_first_ack(self, timeout: float = 60) -> None:
        deadline = time.time() + timeout
        while not self.acked and time.time() < deadline:
            time.sleep(0.05)

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join()


def _span_counts(store_dir: Path) -> dict[str, int]:
    code = (
        "import json,sys; from flywheel import open_store; s=open_store(sys.argv[1]);"
        "rows=s.query('SELECT SpanId, count() AS c FROM otel_traces GROUP BY SpanId');"
        "print(json.dumps({r['SpanId']: r['c'] for r in rows}))"
    )
    out = subprocess.run([sys.executable, "-c", code, f"chdb://{store_dir}"],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def _check(store_dir: Path, acked: list[str], foreign: set[str] = frozenset()) -> dict[str, int]:
    counts = _span_counts(store_dir)
    missing = [s for s in acked if counts.get(s, 0) == 0]
    dupes = {s: c for s, c in counts.items() if c != 1}
    assert not missing, f"{len(missing)} acknowledged spans lost"
    assert not dupes, f"{len(dupes)} spans stored more than once"
    assert not foreign & set(counts), f"{len(foreign & set(counts))} spans of another store"
    return counts


def run_crash_once(tmp: Path, *, clients: int = 4, kill_after_s: float = 1.5) -> tuple[int, int]:
    """One kill -9 cycle; returns (acknowledged spans, spans found once)."""
    store_dir, wal = tmp / "store", tmp / "wal"
    port = free_port()
    proc = _start(store_dir, port, wal)
    load = _Clients(port, 0, clients)
    load.wait_first_ack()  # a loaded machine can take seconds for the first answer
    time.sleep(kill_after_s)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    load.stop()
    proc = _start(store_dir, port, wal)  # replays the log
    proc.send_signal(signal.SIGTERM)
    proc.wait(30)
    counts = _check(store_dir, load.acked)
    assert not load.other, load.other
    return len(load.acked), sum(1 for s in load.acked if counts.get(s) == 1)


def test_kill_9_loses_no_acknowledged_span(tmp_path):
    acked, once = run_crash_once(tmp_path)
    assert acked > 0 and acked == once


@pytest.mark.slow
def test_kill_9_twenty_times(tmp_path):
    for i in range(20):
        run_crash_once(tmp_path / f"run{i}", kill_after_s=1.0 + (i % 5) * 0.3)


def test_sigkill_in_checkpoint_and_in_replay(tmp_path):
    """Killed mid-checkpoint (a torn slot), then mid-replay (inserted, not marked done):
    every acknowledged span is stored exactly once (a random moment: the test above)."""
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    store_dir, wal, port = tmp_path / "store", tmp_path / "wal", free_port()
    acked: list[str] = []
    # 1. a slow store (the log lags) and a SIGKILL inside the N-th checkpoint write
    proc = _launch(store_dir, port, wal, fault=f"slow_insert:0.3,checkpoint:{rng.randint(4, 12)}")
    load = _Clients(port, 0, clients=2, spans=100)
    proc.wait(120)
    load.stop()
    acked += load.acked
    assert proc.returncode == -signal.SIGKILL, f"seed {seed}: exit {proc.returncode}"
    # 2. restart: killed during replay, after a batch is inserted and before it is marked done
    proc = _launch(store_dir, port, wal, fault="slow_insert:0.05,replay:1", wait=False)
    assert proc.wait(120) == -signal.SIGKILL, f"seed {seed}: nothing to replay?"
    # 3. restart cleanly (replays), stop, count
    proc = _launch(store_dir, port, wal)
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)
    assert acked, f"seed {seed}: nothing acknowledged"
    _check(store_dir, acked)


def test_two_servers_on_sibling_stores_keep_their_own_logs(tmp_path):
    """``chdb:///X/a`` and ``chdb:///X/b`` served at once (default log places), both
    SIGKILLed, restarted: each store holds its own acknowledged spans once, none of the
    other's; a third server given a's log while a runs is refused."""
    a, b = tmp_path / "X" / "a", tmp_path / "X" / "b"
    pa_, pb = free_port(), free_port()
    procs = {a: _launch(a, pa_, None), b: _launch(b, pb, None)}
    # a third server pointed at a's log (another store) is refused, in one line
    a_wal = a / "flywheel_wal" / "flywheel"
    third = subprocess.run(
        [sys.executable, "-m", "flywheel", "--store", f"chdb://{tmp_path / 'c'}", "serve",
         "--port", str(free_port()), "--wal-dir", str(a_wal), "--decode-workers", "0"],
        capture_output=True, text=True, timeout=120)
    assert third.returncode == 1 and "Traceback" not in third.stderr, third.stderr
    assert f"the write-ahead log in {a_wal} is in use by pid {procs[a].pid}" in third.stderr
    loads = {a: _Clients(pa_, 0, clients=2, spans=100), b: _Clients(pb, 5_000_000, clients=2,
                                                                    spans=100)}
    for load in loads.values():
        load.wait_first_ack()
    time.sleep(0.5)  # both mid-stream
    for proc in procs.values():
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    for load in loads.values():
        load.stop()
    for store_dir, port in ((b, pb), (a, pa_)):  # b first, as in the issue
        proc = _launch(store_dir, port, None)
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
    other = {a: b, b: a}
    for store_dir, load in loads.items():
        _check(store_dir, load.acked, foreign=set(loads[other[store_dir]].acked))
