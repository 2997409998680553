"""A 200 means the spans are safe, under every fault (issue 19), through a real server.

Each test runs the app under uvicorn over the test store, injects a fault in
the write-ahead log's disk, and checks the contract: while the fault lasts
every answer is 200 or 503 + Retry-After (never a 500), each 503 names the
disk; the server recovers without a restart when the fault clears; and after
a restart (replay) the store holds every span acknowledged with 200 exactly
once and no span of a request that was refused.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
from google.rpc import status_pb2
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from flywheel import Store
from tests.ingest._faults import FaultyDisk, tiny_disk
from tests.ingest._server import free_port, running_server

_PB = {"content-type": "application/x-protobuf"}


def _request(batch: int, spans: int, pad: int) -> tuple[bytes, list[str]]:
    """An OTLP request of ``spans`` unique spans with ``pad`` bytes of attribute each."""
    req = ExportTraceServiceRequest()
    ss = req.resource_spans.add().scope_spans.add()
    ids = []
    filler = os.urandom(pad // 2).hex()  # incompressible, like real payloads
    for i in range(spans):
        sp = ss.spans.add()
        sp.trace_id = (batch + 1).to_bytes(16, "big")
        sp.span_id = (batch * 10_000 + i + 1).to_bytes(8, "big")
        sp.name = "execute_tool lookup"
        sp.start_time_unix_nano = 1_700_000_000_000_000_000 + i
        sp.end_time_unix_nano = sp.start_time_unix_nano + 1000
        a = sp.attributes.add()
        a.key, a.value.string_value = "payload", filler
        ids.append(sp.span_id.hex())
    return req.SerializeToString(), ids


class _Client:
    """Sends requests and keeps what was acknowledged, refused, and any other answer."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.acked: list[str] = []
        self.refused: list[httpx.Response] = []
        self.other: list[httpx.Response] = []
        self._lock = threading.Lock()
        self._batch = 0

    def send(self, spans: int = 20, pad: int = 1000) -> int:
        with self._lock:
            self._batch += 1
            batch = self._batch
        body, ids = _request(batch, spans, pad)
        r = httpx.post(f"{self.url}/v1/traces", content=body, headers=_PB, timeout=60)
        with self._lock:
            if r.status_code == 200:
                self.acked.extend(ids)
            elif r.status_code == 503:
                self.refused.append(r)
            else:
                self.other.append(r)
        return r.status_code

    def until_ok(self, timeout: float = 30.0, **kw: int) -> float:
        """Seconds until a request is acknowledged again (the server recovered by itself)."""
        t0 = time.monotonic()
        while self.send(**kw) != 200:
            assert time.monotonic() - t0 < timeout, "the server did not recover by itself"
            time.sleep(0.2)
        return time.monotonic() - t0


def _check_stored(store: Store, wal: Path, client: _Client) -> None:
    """Restart on the same log (replay), then: acknowledged == stored, each once."""
    with running_server(store, wal, wal_min_free_bytes=0) as (_url, app):
        assert app.state.writer.flush(60)
    rows = store.query("SELECT SpanId, count() AS c FROM otel_traces GROUP BY SpanId")
    counts = {r["SpanId"]: r["c"] for r in rows}
    assert not client.other, [(r.status_code, r.text[:200]) for r in client.other]
    assert set(counts) == set(client.acked), (
        f"{len(set(client.acked) - set(counts))} acknowledged spans lost, "
        f"{len(set(counts) - set(client.acked))} refused spans stored")
    assert all(c == 1 for c in counts.values()), "a span stored twice"


def _assert_503s_name_the_disk(client: _Client, disk: Path, *words: str) -> None:
    assert client.refused, "the fault never reached a client: not a fault test"
    for r in client.refused:
        assert r.headers.get("retry-after", "").isdigit(), r.headers
        message = status_pb2.Status.FromString(r.content).message  # OTLP: google.rpc.Status
        assert str(disk) in message and any(w in message for w in words), message


def test_wal_on_a_tiny_tmpfs_fills_mid_request(store, tmp_path, monkeypatch):
    """3 MB tmpfs, requests of about 800 KB, a slow store: the log fills mid-request."""
    slow = threading.Event()
    slow.set()
    real_insert = store._insert_arrow

    def slow_insert(table, data, token):
        while slow.is_set():
            time.sleep(0.02)
        real_insert(table, data, token)

    monkeypatch.setattr(store, "_insert_arrow", slow_insert)
    with tiny_disk(tmp_path, monkeypatch) as disk:
        wal = disk.path / "wal"
        with running_server(store, wal, wal_min_free_bytes=0, flush_interval_s=0.05) as (url, app):
            client = _Client(url)
            threads = [threading.Thread(target=lambda: [client.send(spans=80, pad=10_000)
                                                         for _ in range(3)]) for _ in range(3)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            _assert_503s_name_the_disk(client, disk.path, "is full", "free")
            slow.clear()  # the store takes inserts again: the log drains and frees its disk
            client.until_ok(spans=80, pad=10_000)
            assert app.state.writer.flush(30)
            assert httpx.get(f"{url}/readyz").json()["status"] == "ready"
        _check_stored(store, wal, client)


def test_free_space_floor_refuses_before_writing(store, tmp_path, monkeypatch):
    """Under the free-space floor the answer is 503 naming the disk, nothing written."""
    with tiny_disk(tmp_path, monkeypatch) as disk:
        wal = disk.path / "wal"
        with running_server(store, wal, wal_min_free_bytes=2 << 20) as (url, app):
            client = _Client(url)
            assert client.send() == 200
            hog = disk.path / "hog"
            hog.write_bytes(b"\0" * (int(disk.size * 0.6)))  # another program fills the disk
            assert client.send() == 503
            _assert_503s_name_the_disk(client, disk.path, "free")
            metrics = httpx.get(f"{url}/metrics").text
            assert "flywheel_ingest_wal_writable 0.0" in metrics
            hog.unlink()
            client.until_ok()
        _check_stored(store, wal, client)


def test_read_only_wal_answers_503_and_recovers(store, tmp_path, monkeypatch):
    """The log's disk turns read-only under a running server (EROFS stand-in), then back."""
    wal = tmp_path / "wal"
    with running_server(store, wal, wal_min_free_bytes=0) as (url, app):
        disk = FaultyDisk(monkeypatch, wal)
        client = _Client(url)
        assert client.send() == 200
        disk.write_errno = disk.fsync_errno = errno.EROFS
        for _ in range(3):
            assert client.send() == 503
        _assert_503s_name_the_disk(client, wal, "read-only")
        ready = httpx.get(f"{url}/readyz")
        assert ready.status_code == 503 and "read-only" in ready.json()["wal"]["fault"]
        disk.clear()
        client.until_ok()
        assert app.state.writer.flush(30)
    _check_stored(store, wal, client)


def test_serve_on_a_read_only_mount_is_a_one_line_error(tmp_path, monkeypatch):
    with tiny_disk(tmp_path, monkeypatch) as disk:
        if not disk.real:
            pytest.skip("needs a mountable tmpfs (the EROFS stand-in is tested above)")
        disk.remount("ro")
        try:
            done = subprocess.run(
                [sys.executable, "-m", "flywheel", "--store", f"chdb://{tmp_path / 'store'}",
                 "serve", "--port", str(free_port()), "--wal-dir", str(disk.path / "wal"),
                 "--decode-workers", "0"], capture_output=True, text=True, timeout=120)
        finally:
            disk.remount("rw")
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    assert "Read-only file system" in done.stderr and str(disk.path) in done.stderr


def test_short_writes_and_eio_on_fsync(store, tmp_path, monkeypatch):
    """os.write returns short throughout; fsync fails with EIO for a while."""
    wal = tmp_path / "wal"
    with running_server(store, wal, wal_min_free_bytes=0) as (url, app):
        disk = FaultyDisk(monkeypatch, wal)
        disk.short_write = 4096
        client = _Client(url)
        for _ in range(3):
            assert client.send() == 200
        disk.fsync_errno = errno.EIO
        for _ in range(3):
            assert client.send() == 503
        _assert_503s_name_the_disk(client, wal, "I/O error")
        disk.fsync_errno = None
        client.until_ok()
        for _ in range(3):
            client.send()
        assert app.state.writer.flush(30)
        disk.clear()
    _check_stored(store, wal, client)


def test_dead_writer_thread_is_restarted_and_loses_nothing(store, tmp_path, monkeypatch):
    """An unexpected exception kills the drain thread; the supervisor restarts it."""
    wal = tmp_path / "wal"
    with running_server(store, wal, wal_min_free_bytes=0, flush_interval_s=0.02) as (url, app):
        writer = app.state.writer
        real_begin = writer.wal.begin
        calls = {"n": 0}

        def flaky_begin(*a):
            calls["n"] += 1
            if calls["n"] == 2:
                raise RuntimeError("a bug in the writer")
            return real_begin(*a)

        monkeypatch.setattr(writer.wal, "begin", flaky_begin)
        client = _Client(url)
        for _ in range(6):
            assert client.send() == 200
            time.sleep(0.05)
        assert writer.flush(30)
        assert writer.stats.writer_restarts >= 1 and writer.alive()
        assert "a bug in the writer" in writer.stats.last_error
        assert "flywheel_ingest_writer_restarts_total 1.0" in httpx.get(f"{url}/metrics").text
    _check_stored(store, wal, client)


def test_a_batch_that_does_not_read_back_is_replayed_from_the_log(store, tmp_path, monkeypatch):
    """The drain thread reads each batch back from the log (the queue holds only where the
    frames are); EIO on that read, or a frame that no longer verifies, ends the thread and
    its restart replays from the checkpoint: every acknowledged span stored once."""
    wal = tmp_path / "wal"
    with running_server(store, wal, wal_min_free_bytes=0, flush_interval_s=0.02) as (url, app):
        writer = app.state.writer
        real_preadv = os.preadv
        calls = {"n": 0}

        def flaky_preadv(fd, buffers, offset):
            calls["n"] += 1
            if calls["n"] == 2:
                raise OSError(errno.EIO, "Input/output error")
            n = real_preadv(fd, buffers, offset)
            if calls["n"] == 4:
                payload = memoryview(buffers[-1]).cast("B")  # a byte flipped in the page cache
                payload[0] ^= 0xFF
            return n

        monkeypatch.setattr(os, "preadv", flaky_preadv)
        client = _Client(url)
        for _ in range(8):
            assert client.send() == 200
            time.sleep(0.05)
        assert writer.flush(30)
        assert calls["n"] >= 4 and writer.stats.writer_restarts >= 2 and writer.alive()
        assert "does not read back as written" in writer.stats.last_error
    _check_stored(store, wal, client)


def test_store_refusing_a_batch_quarantines_it_and_moves_on(store, tmp_path, monkeypatch):
    """A frame the store refuses (while it answers) is quarantined, counted, logged."""
    from flywheel import FlywheelError

    wal = tmp_path / "wal"
    real_insert = store._insert_arrow
    poisoned: set[str] = set()

    def picky_insert(table, data, token):
        names = data.column("SpanName").to_pylist()
        if "poison" in names:
            poisoned.add(token)
            raise FlywheelError("ClickHouse error: Code: 53. DB::Exception: Type mismatch")
        real_insert(table, data, token)

    monkeypatch.setattr(store, "_insert_arrow", picky_insert)
    with running_server(store, wal, wal_min_free_bytes=0, flush_interval_s=0.3) as (url, app):
        client = _Client(url)
        for _ in range(3):
            assert client.send() == 200
        bad = ExportTraceServiceRequest()
        sp = bad.resource_spans.add().scope_spans.add().spans.add()
        sp.trace_id, sp.span_id, sp.name = b"\x09" * 16, b"\x09" * 8, "poison"
        assert httpx.post(f"{url}/v1/traces", content=bad.SerializeToString(),
                          headers=_PB).status_code == 200
        for _ in range(3):
            assert client.send() == 200
        assert app.state.writer.flush(30)
        stats = app.state.writer.stats
        assert (stats.quarantined_batches, stats.quarantined_spans) == (1, 1)
        kept = list((wal / "quarantine").glob("*.json"))
        assert len(kept) == 1 and "Type mismatch" in kept[0].read_text()
    _check_stored(store, wal, client)  # the good frames batched with the bad one are all in
