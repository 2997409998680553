"""The durable span writer: log first, then large batched inserts.

Requests hand decoded spans to ``SpanWriter.submit``, which returns once they
are in the fsync'ed log. One thread drains the log into the store in batches
of ``batch_spans`` (or every ``flush_interval_s``), each batch an exact record
range inserted under that range's token (see ``_wal``). On start the writer
first replays what the log holds beyond the last committed batch.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

from flywheel import FlywheelError, IngestSettings, OverloadedError, Store

from ._wal import Record, WriteAheadLog

log = logging.getLogger("flywheel.ingest")


def to_ipc(table: pa.Table) -> bytes:
    """Serialise a span batch for the log (Arrow IPC stream)."""
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def from_ipc(payload: bytes) -> pa.Table:
    """Read a span batch back from the log."""
    return ipc.open_stream(pa.py_buffer(payload)).read_all()


@dataclass
class WriterStats:
    """Counters exposed on ``/metrics`` and in benchmarks."""

    accepted_spans: int = 0
    rejected_spans: int = 0
    throttled_requests: int = 0
    inserted_spans: int = 0
    insert_batches: int = 0
    insert_failures: int = 0
    replayed_spans: int = 0
    last_error: str = ""
    started_at: float = field(default_factory=time.time)


class SpanWriter:
    """Owns the log and the thread that moves it into the store."""

    def __init__(self, store: Store, wal_dir: str | Path, settings: IngestSettings) -> None:
        self.store = store
        self.settings = settings
        self.wal = WriteAheadLog(wal_dir)
        self.stats = WriterStats()
        self._queue: queue.SimpleQueue[tuple[Record, pa.Table] | None] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._healthy = threading.Event()
        self._healthy.set()

    # -- lifecycle --------------------------------------------------------
    def start(self) -> None:
        """Replay the log's unfinished tail, then start draining."""
        self._replay()
        self._thread = threading.Thread(target=self._run, name="span-writer", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Flush what is queued and stop (what is not flushed stays in the log)."""
        self._stop.set()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)
        self.wal.close()

    def _replay(self) -> None:
        if self.wal.intent is not None:
            seg, start, end = self.wal.intent
            records = self.wal.read_range(seg, start, end)
            if records:
                self._insert(records, [from_ipc(r.payload) for r in records], replay=True)
            else:
                self.wal.commit(seg, end)
        pending: list[Record] = []
        for rec in self.wal.unfinished():
            if pending and (rec.segment != pending[0].segment or len(pending) >= 256):
                self._insert(pending, [from_ipc(r.payload) for r in pending], replay=True)
                pending = []
            pending.append(rec)
        if pending:
            self._insert(pending, [from_ipc(r.payload) for r in pending], replay=True)

    # -- request side -----------------------------------------------------
    def check_capacity(self) -> None:
        """Raise ``OverloadedError`` (503 + Retry-After) past the log-lag bound."""
        if self._stop.is_set():
            raise OverloadedError("ingest is shutting down; retry later", retry_after=1.0)
        lag = self.wal.lag_bytes()
        if lag > self.settings.max_wal_lag_bytes or not self._healthy.is_set():
            self.stats.throttled_requests += 1
            raise OverloadedError(
                f"ingest is {lag} bytes behind the store (limit "
                f"{self.settings.max_wal_lag_bytes}); retry later",
                retry_after=1.0,
            )

    def submit(self, table: pa.Table) -> None:
        """Make ``table`` durable (returns after fsync); the store follows shortly."""
        if table.num_rows == 0:
            return
        payload = to_ipc(table)
        self.wal.append(payload, on_written=lambda rec: self._queue.put((rec, table)))
        self.stats.accepted_spans += table.num_rows

    def submit_ipc(self, payload: bytes, accepted: int, rejected: int, reasons: list[str]) -> Any:
        """``submit`` for a batch a decode worker already serialised for the log."""
        from ._otlp import SPAN_SCHEMA, DecodedBatch

        table = from_ipc(payload) if accepted else SPAN_SCHEMA.empty_table()
        if accepted:
            self.wal.append(payload, on_written=lambda rec: self._queue.put((rec, table)))
            self.stats.accepted_spans += accepted
        return DecodedBatch(table, rejected, reasons)

    # -- drain ------------------------------------------------------------
    def _run(self) -> None:
        batch: list[Record] = []
        tables: list[pa.Table] = []
        rows = 0
        first_at = 0.0
        while True:
            timeout = None
            if batch:
                timeout = max(0.0, first_at + self.settings.flush_interval_s - time.monotonic())
            try:
                item = self._queue.get(timeout=timeout) if timeout != 0.0 else None
            except queue.Empty:
                item = None
            if item is not None:
                rec, table = item
                if batch and rec.segment != batch[0].segment:
                    self._insert(batch, tables)
                    batch, tables, rows = [], [], 0
                if not batch:
                    first_at = time.monotonic()
                batch.append(rec)
                tables.append(table)
                rows += table.num_rows
                if rows < self.settings.batch_spans:
                    continue
            if batch:
                self._insert(batch, tables)
                batch, tables, rows = [], [], 0
            if self._stop.is_set() and self._queue.empty():
                return

    def _insert(self, records: list[Record], tables: list[pa.Table], *, replay: bool = False) -> None:
        seg, start, end = records[0].segment, records[0].start, records[-1].end
        token = self.wal.begin(seg, start, end)
        data = pa.concat_tables(tables) if len(tables) > 1 else tables[0]
        delay = 0.2
        while True:
            try:
                self.store.insert(self.store.otel_table, data, dedup_token=token)
                break
            except FlywheelError as exc:
                self.stats.insert_failures += 1
                self.stats.last_error = str(exc)
                self._healthy.clear()
                log.warning("insert of %s failed, retrying: %s", token, exc)
                if self._stop.is_set() and not replay:
                    return  # stays in the log; replayed at next start
                time.sleep(delay)
                delay = min(delay * 2, 5.0)
        self._healthy.set()
        self.wal.commit(seg, end)
        self.stats.inserted_spans += data.num_rows
        self.stats.insert_batches += 1
        if replay:
            self.stats.replayed_spans += data.num_rows

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything accepted so far is in the store (tests, CLI)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.wal.lag_bytes() == 0:
                return True
            time.sleep(0.01)
        return False
