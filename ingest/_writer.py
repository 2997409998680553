"""The durable span writer: log first, then large batched inserts, supervised.

Requests hand decoded spans to ``SpanWriter.submit``, which returns once they
are in the fsync'ed log. One thread drains the log into the store in batches
of ``batch_spans`` (or every ``flush_interval_s``), each batch an exact frame
range inserted under that range's token (see ``_wal``). The thread first
replays what the log holds beyond the last committed batch; a thread that
dies is restarted (by the next request or by a watchdog) and replays the same
way, so nothing it held in memory is lost or inserted twice.

Insert failures are classified (``classify_insert_error``):

- *store*: the store is down, full, read-only or overloaded -> retried with
  backoff (0.2 s doubling to 5 s) for as long as it takes; requests get 503
  naming the cause meanwhile;
- *data*: the batch itself is refused -> a batch of several frames is retried
  frame by frame; a single frame the store refuses three times while it
  answers other queries is *quarantined*: its payload is kept under
  ``<wal>/quarantine/`` with the error, counted, and logged naming the frame
  range, and the log moves past it.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.ipc as ipc

from flywheel import FlywheelError, IngestSettings, OverloadedError, Store, StoreUnavailable

from ._duplicates import mark_duplicates
from ._wal import DISK_RETRY_AFTER_S, Record, WriteAheadLog

log = logging.getLogger("flywheel.ingest")

#: ClickHouse error codes that mean the store, not the batch, is the problem.
STORE_CODES = frozenset({
    3, 32, 60, 81, 159, 164, 202, 209, 210, 236, 241, 242, 243, 252, 319, 394, 425, 999, 1000,
})
#: ClickHouse error codes that mean the rows themselves are refused.
DATA_CODES = frozenset({6, 27, 36, 38, 41, 43, 44, 53, 69, 70, 72, 117, 128, 131, 190, 321, 395})
_CODE = re.compile(r"Code:\s*(\d+)")
#: Attempts at one frame the store refuses (while it answers) before quarantine.
QUARANTINE_AFTER = 3
#: Seconds without a frame after an insert before the writer gives memory back.
IDLE_RELEASE_S = 1.0
#: The longest Retry-After an overloaded receiver asks for. A stock OTLP exporter
#: gives up when the hint exceeds what is left of its own timeout (10 s by
#: default), so the hint stays well under it.
RETRY_AFTER_MAX_S = 8.0


def to_ipc(table: pa.Table) -> pa.Buffer:
    """Serialise a span batch for the log (Arrow IPC stream; a buffer, not copied to bytes).

    The stream is measured first and written once into a buffer of its exact
    size: a growing ``BufferOutputStream`` reallocates (and faults in fresh
    pages) as it doubles, which cost 15 times the copy itself (3.6 against
    0.24 us a span on the agents workload).
    """
    mock = pa.MockOutputStream()
    with ipc.new_stream(mock, table.schema) as w:
        w.write_table(table)
    buf = pa.allocate_buffer(mock.size())
    with ipc.new_stream(pa.FixedSizeBufferWriter(buf), table.schema) as w:
        w.write_table(table)
    return buf


def from_ipc(payload: bytes | pa.Buffer) -> pa.Table:
    """Read a span batch back from the log (its columns point into ``payload``: no copy)."""
    return ipc.open_stream(pa.py_buffer(payload)).read_all()


def classify_insert_error(exc: FlywheelError) -> Literal["store", "data", "unknown"]:
    """Whether a failed insert is the store's problem, the batch's, or unknown."""
    if isinstance(exc, StoreUnavailable):
        return "store"
    m = _CODE.search(exc.message)
    if m:
        code = int(m.group(1))
        if code in STORE_CODES:
            return "store"
        if code in DATA_CODES:
            return "data"
    return "unknown"


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
    quarantined_batches: int = 0
    quarantined_spans: int = 0
    writer_restarts: int = 0
    #: Cuts by the input limits, by kind (``_limits``).
    truncated: collections.Counter[str] = field(default_factory=collections.Counter)
    last_error: str = ""
    last_error_at: float = 0.0
    started_at: float = field(default_factory=time.time)


class DrainRate:
    """Log bytes the store took per second over the last few seconds.

    Turns "the log is too far behind" into a Retry-After that says how long the
    store needs to take the excess at its recent pace, so retrying clients come
    back when there is room instead of every second (HTTP's Retry-After is a
    hint in whole seconds; RFC 9110 section 10.2.3).
    """

    WINDOW_S = 5.0

    def __init__(self) -> None:
        self._samples: collections.deque[tuple[float, int]] = collections.deque()
        self._lock = threading.Lock()

    def add(self, nbytes: int, now: float | None = None) -> None:
        """The store took ``nbytes`` of the log at ``now`` (monotonic seconds)."""
        with self._lock:
            self._samples.append((time.monotonic() if now is None else now, nbytes))
            self._trim(self._samples[-1][0])

    def per_second(self, now: float | None = None) -> float:
        """Bytes per second over the window (0 when the store took nothing in it)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._trim(now)
            return sum(n for _t, n in self._samples) / self.WINDOW_S

    def retry_after(self, excess_bytes: int, now: float | None = None) -> float:
        """Seconds (1 to ``RETRY_AFTER_MAX_S``) for the store to take ``excess_bytes``."""
        rate = self.per_second(now)
        if rate <= 0:
            return RETRY_AFTER_MAX_S
        return min(RETRY_AFTER_MAX_S, max(1.0, excess_bytes / rate))

    def _trim(self, now: float) -> None:
        while self._samples and self._samples[0][0] < now - self.WINDOW_S:
            self._samples.popleft()


class SpanWriter:
    """Owns the log and the supervised thread that moves it into the store."""

    def __init__(self, store: Store, wal_dir: str | Path, settings: IngestSettings,
                 *, identity: str = "") -> None:
        self.store = store
        self.settings = settings
        self.wal = WriteAheadLog(wal_dir, identity=identity,
                                 segment_bytes=settings.wal_segment_bytes,
                                 min_free_bytes=settings.wal_min_free_bytes)
        self.stats = WriterStats()
        #: How fast the store has been taking the log (for Retry-After).
        self.drain_rate = DrainRate()
        #: ``starting``, ``replaying``, ``running``, ``store_down``, ``stopped``.
        self.state = "starting"
        #: Durable frames (where they are, and their span count) for the drain thread.
        self._queue: queue.SimpleQueue[tuple[Record, int] | None] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._watchdog: threading.Thread | None = None
        self._supervise = threading.Lock()
        self._taken_seq = 0  # frames up to here are handled by the live thread
        self._inflight: collections.deque[tuple[int, float]] = collections.deque()
        self._opened_at = time.time()
        self._boot_seq = self.wal.synced_seq  # frames logged before this process started
        self._release_due = False  # an insert ran since memory was last given back
        #: Requests being received now (``receiving_request``).
        self.receiving = 0
        self._receiving_lock = threading.Lock()
        #: Why the store refuses inserts (while ``state`` is ``store_down``).
        self.store_cause = ""

    # -- lifecycle --------------------------------------------------------
    def start(self) -> None:
        """Start the drain thread (it replays the log first) and its watchdog."""
        self.state = "replaying"
        self._start_thread()
        self._watchdog = threading.Thread(target=self._watch, name="span-writer-watchdog",
                                          daemon=True)
        self._watchdog.start()

    def _start_thread(self) -> None:
        self._thread = threading.Thread(target=self._run, name="span-writer", daemon=True)
        self._thread.start()

    def ensure_running(self) -> None:
        """Restart the drain thread if it died (it replays from the last committed batch)."""
        with self._supervise:
            if self._stop.is_set() or self._thread is None or self._thread.is_alive():
                return
            self.stats.writer_restarts += 1
            log.error("the span writer thread had died (%s); restarting it", self.stats.last_error)
            self._start_thread()

    def _watch(self) -> None:
        while not self._stop.wait(0.5):
            self.ensure_running()

    def alive(self) -> bool:
        """True while the drain thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 30.0) -> None:
        """Flush what is queued and stop (what is not flushed stays in the log)."""
        self._stop.set()
        self._queue.put(None)
        if self._thread is not None:
            self._thread.join(timeout)
        if self._watchdog is not None:
            self._watchdog.join(timeout)
        self.state = "stopped"
        self.wal.close()

    def _run(self) -> None:
        try:
            self._replay()
            self._drain()
        except _Stopped:
            # a batch that could not be finished while stopping ends the thread: inserting a
            # later batch would move *done* past it; all of it stays in the log for the next start
            return
        except Exception as exc:  # noqa: BLE001 - the supervisor restarts it; nothing is lost (the log holds it)
            self._error(f"writer thread died: {type(exc).__name__}: {exc}")
            log.exception("the span writer thread died; the watchdog restarts it")

    def _error(self, message: str) -> None:
        self.stats.last_error = message
        self.stats.last_error_at = time.time()

    def _replay(self) -> None:
        """Insert what the log holds beyond the last committed batch (start and restart)."""
        self.state = "replaying"
        through = self.wal.synced_seq
        if self.wal.intent is not None:
            seg, start, end = self.wal.intent
            records = self.wal.read_range(seg, start, end)
            if records:
                self._insert(records, [_table(r) for r in records], replay=True)
            else:
                self.wal.clear_intent(seg, end)
        pending: list[Record] = []
        tables: list[pa.Table | None] = []
        rows = 0
        for rec in self.wal.unfinished(through):
            table = _table(rec)
            if pending and (rec.segment != pending[0].segment or len(pending) >= 256
                            or rows >= self.settings.batch_spans):
                self._insert(pending, tables, replay=True)
                pending, tables, rows = [], [], 0
            pending.append(rec)
            tables.append(table)
            rows += table.num_rows if table is not None else 0
        if pending:
            self._insert(pending, tables, replay=True)
        self._taken_seq = max(self._taken_seq, through)
        self._release_memory()  # startup (migrations, replay) is over: the server idles
        self.state = "running"

    # -- request side -----------------------------------------------------
    @contextlib.contextmanager
    def receiving_request(self) -> Iterator[None]:
        """Mark a request being received (read, decoded, logged): the batch waits for it."""
        with self._receiving_lock:
            self.receiving += 1
        try:
            yield
        finally:
            with self._receiving_lock:
                self.receiving -= 1

    def check_capacity(self, nbytes: int = 0) -> None:
        """Raise ``OverloadedError`` (503 + Retry-After) when a request cannot be taken now.

        Stopping, the log's disk under its floor, the store refusing inserts,
        or the log too far behind the store.
        """
        if self._stop.is_set():
            raise OverloadedError("ingest is shutting down; retry later", retry_after=1.0)
        self.ensure_running()
        try:
            self.wal.check_space(nbytes)
        except OverloadedError:
            self.stats.throttled_requests += 1
            raise
        lag = self.wal.lag_bytes()
        if self.state == "store_down":
            self.stats.throttled_requests += 1
            raise OverloadedError(
                f"{self.store_cause}; {lag} bytes wait in the log; retry later",
                retry_after=DISK_RETRY_AFTER_S)
        if lag > self.settings.max_wal_lag_bytes:
            self.stats.throttled_requests += 1
            raise OverloadedError(
                f"ingest is {lag} bytes behind the store (limit "
                f"{self.settings.max_wal_lag_bytes}); retry later",
                retry_after=self.drain_rate.retry_after(lag - self.settings.max_wal_lag_bytes),
            )

    def _handoff(self, spans: int) -> Callable[[Record], None]:
        def handoff(rec: Record) -> None:
            self._inflight.append((rec.seq, rec.written_at))
            # where the frame is, not its payload: the drain thread reads the batch back
            # from the log, so memory holds one batch however far the store is behind
            self._queue.put((dataclasses.replace(rec, payload=b""), spans))
        return handoff

    def submit(self, table: pa.Table) -> None:
        """Make ``table`` durable (returns after fsync); the store follows shortly."""
        if table.num_rows == 0:
            return
        self.wal.append(to_ipc(table), on_durable=self._handoff(table.num_rows))
        self.stats.accepted_spans += table.num_rows

    def submit_ipc(self, payload: bytes, accepted: int, rejected: int, reasons: list[str],
                   truncated: Any = None) -> Any:
        """``submit`` for a batch a decode worker already serialised for the log."""
        from ._limits import Truncations
        from ._otlp import SPAN_SCHEMA, DecodedBatch

        table = from_ipc(payload) if accepted else SPAN_SCHEMA.empty_table()
        if accepted:
            self.wal.append(payload, on_durable=self._handoff(accepted))
            self.stats.accepted_spans += accepted
        return DecodedBatch(table, rejected, reasons, truncated or Truncations())

    # -- drain ------------------------------------------------------------
    def _drain(self) -> None:
        """Collect durable frames into batches and insert them.

        A batch is inserted once it holds ``batch_spans`` spans, once its first
        frame waited ``flush_interval_s``, or once no frame arrived for
        ``flush_quiet_s`` while no request is being received (a quiet log is
        not kept waiting; under load the batches grow large: every insert
        costs the store a part per table, whatever its size). Once no frame
        came for ``IDLE_RELEASE_S`` after an insert, memory is given back.
        """
        batch: list[Record] = []
        rows = 0
        first_at = 0.0
        while True:
            timeout = IDLE_RELEASE_S if self._release_due else None
            if batch:
                timeout = min(self.settings.flush_quiet_s, max(
                    0.0, first_at + self.settings.flush_interval_s - time.monotonic()))
            try:
                item = self._queue.get(timeout=timeout) if timeout != 0.0 else None
            except queue.Empty:
                if not batch:
                    self._release_memory()
                    continue
                if self.receiving and time.monotonic() < first_at + self.settings.flush_interval_s:
                    continue  # requests on their way: the batch grows
                item = None
            if item is not None:
                rec, spans = item
                if rec.seq <= self._taken_seq:
                    continue  # replayed from the log already
                self._taken_seq = rec.seq
                if batch and rec.segment != batch[0].segment:
                    self._insert_logged(batch)
                    batch, rows = [], 0
                if not batch:
                    first_at = time.monotonic()
                batch.append(rec)
                rows += spans
                if rows < self.settings.batch_spans:
                    continue
            if batch:
                self._insert_logged(batch)
                batch, rows = [], 0
            if self._stop.is_set() and self._queue.empty():
                return
            if not batch:
                self.wal.rotate_if_drained(self.wal.segment_bytes // 16)

    def _insert_logged(self, batch: list[Record]) -> None:
        """Insert frames the queue named, their payloads read back from the log."""
        try:
            records = self.wal.read_frames(batch, pa.allocate_buffer)
        except OSError as exc:  # the restarted thread replays them from the checkpoint
            raise RuntimeError(f"reading back log frames {batch[0].seq}-{batch[-1].seq}: {exc}") \
                from exc
        self._insert(records, [_table(r) for r in records])

    def _insert(self, records: list[Record], tables: list[pa.Table | None], *,
                replay: bool = False) -> None:
        seg, start, end = records[0].segment, records[0].start, records[-1].end
        self._disk_retry(lambda: self.wal.begin(seg, start, end))
        token = self.wal.token(seg, start, end)
        if any(t is None for t in tables):
            outcome: tuple[str, str] = ("data", "the frame does not hold an Arrow span batch")
        else:
            data = pa.concat_tables(tables) if len(tables) > 1 else tables[0]  # type: ignore[arg-type]
            outcome = self._store_insert(data, token, single=len(records) == 1)
        if outcome[0] == "data":
            if len(records) > 1:
                for rec, table in zip(records, tables, strict=True):
                    self._insert([rec], [table], replay=replay)
                return
            self._disk_retry(lambda: self._quarantine(records[0], tables[0], token, outcome[1]))
        self._disk_retry(lambda: self.wal.commit(records))
        self.drain_rate.add(sum(r.frame_bytes for r in records))
        while self._inflight and self._inflight[0][0] <= records[-1].seq:
            self._inflight.popleft()
        self._release_due = True
        if outcome[0] == "ok":
            n = sum(t.num_rows for t in tables if t is not None)
            self.stats.inserted_spans += n
            self.stats.insert_batches += 1
            if replay:
                self.stats.replayed_spans += n

    def _store_insert(self, data: pa.Table, token: str, *, single: bool) -> tuple[str, str]:
        """('ok' | 'data', error): insert, backing off while the store is the problem.

        A batch of several frames the store refuses comes back at once (to be
        split); a single frame is tried ``QUARANTINE_AFTER`` times.
        """
        delay, refused = 0.2, 0
        while True:
            try:
                mark_duplicates(self.store, data)  # before the spans, so no repeat goes unmarked
                self.store.insert(self.store.otel_table, data, dedup_token=token)
            except FlywheelError as exc:
                self.stats.insert_failures += 1
                self._error(f"insert {token}: {exc.message}")
                kind = classify_insert_error(exc)
                if kind == "unknown":
                    kind = "data" if self.store.ping() else "store"
                if kind == "data":
                    refused += 1
                    if refused >= QUARANTINE_AFTER or not single:
                        return "data", exc.message
                else:
                    self.state = "store_down"
                    self.store_cause = _store_cause(self.store.url, exc)
                log.warning("insert of %s failed (%s), retrying in %.1f s: %s",
                            token, kind, delay, exc.message)
                if self._stop.wait(delay):
                    raise _Stopped  # stays in the log; replayed at next start
                delay = min(delay * 2, 5.0)
                continue
            self.state = "running"
            return "ok", ""

    def _release_memory(self) -> None:
        """Give back what inserts left behind (Arrow's pool, the store's heap and code pages)."""
        self._release_due = False
        pa.default_memory_pool().release_unused()
        try:
            released = self.store.release_memory()
        except FlywheelError as exc:  # nothing is lost: memory stays held, that is all
            log.warning("giving memory back failed: %s", exc.message)
            return
        log.debug("idle: memory given back %s", released)

    def _disk_retry(self, step: Callable[[], object]) -> None:
        """Run a log step (checkpoint, quarantine), backing off while its disk fails."""
        delay = 0.2
        while True:
            try:
                step()
                return
            except OverloadedError as exc:
                self._error(exc.message)
                log.warning("%s", exc.message)
            except OSError as exc:
                self._error(f"write-ahead log step failed: {exc}")
                log.warning("write-ahead log step failed: %s", exc)
            if self._stop.wait(delay):
                raise _Stopped
            delay = min(delay * 2, 5.0)

    def _quarantine(self, rec: Record, table: pa.Table | None, token: str, error: str) -> None:
        """Keep a refused frame beside the log, count it, say so; the log moves past it."""
        qdir = self.wal.dir / "quarantine"
        qdir.mkdir(exist_ok=True)
        name = token.replace(":", "_")
        (qdir / f"{name}.arrows").write_bytes(rec.payload)
        spans = table.num_rows if table is not None else 0
        projects = sorted(set(table.column("ProjectId").to_pylist())) if (
            table is not None and "ProjectId" in table.column_names) else []
        (qdir / f"{name}.json").write_text(json.dumps({
            "token": token, "segment": rec.segment, "start": rec.start, "end": rec.end,
            "seq": rec.seq, "spans": spans, "projects": projects, "error": error,
            "quarantined_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}, indent=1))
        self.stats.quarantined_batches += 1
        self.stats.quarantined_spans += spans
        log.error("quarantined write-ahead log frames %s (%d spans, projects %s): the store "
                  "refused them: %s; kept in %s", token, spans, ",".join(projects) or "?",
                  error, qdir / f"{name}.arrows")

    # -- state ------------------------------------------------------------
    def lag_seconds(self) -> float:
        """Age of the oldest acknowledged frame not yet in the store.

        Frames logged before this process started count from its start.
        """
        if not self.wal.lag_bytes():
            return 0.0
        if self.wal.done_seq < self._boot_seq or not self._inflight:
            oldest = self._opened_at
        else:
            oldest = self._inflight[0][1]
        return max(0.0, time.time() - oldest)

    def health(self) -> dict[str, Any]:
        """What ``/readyz`` and ``/metrics`` report about the writer and its log."""
        disk = self.wal.disk()
        return {
            "writer": {"alive": self.alive(), "state": self.state,
                       "restarts": self.stats.writer_restarts},
            "wal": {"dir": str(self.wal.dir), "lag_bytes": self.wal.lag_bytes(),
                    "lag_seconds": round(self.lag_seconds(), 3), "writable": self.wal.writable(),
                    "fault": self.wal.fault, "write_errors": self.wal.write_errors,
                    "disk": disk["disk"], "disk_free_bytes": disk["free_bytes"],
                    "disk_min_free_bytes": self.wal.min_free_bytes,
                    "skipped": [s.describe(self.wal.dir) for s in self.wal.skipped]},
            "quarantined": {"batches": self.stats.quarantined_batches,
                            "spans": self.stats.quarantined_spans},
            "last_error": self.stats.last_error,
            "last_error_at": self.stats.last_error_at,
        }

    def flush(self, timeout: float = 10.0) -> bool:
        """Wait until everything accepted so far is in the store (tests, CLI)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.wal.lag_bytes() == 0 and self.state == "running":
                return True
            time.sleep(0.01)
        return False


class _Stopped(Exception):  # noqa: N818 - a signal, not an error
    """The writer is stopping in the middle of a batch."""


def _store_cause(url: str, exc: FlywheelError) -> str:
    """Why the store refuses inserts, naming its disk when that is full."""
    m = _CODE.search(exc.message)
    if m and int(m.group(1)) == 243:
        return f"the store's disk is full ({url}: {exc.message})"
    return f"the store {url} is not taking inserts ({exc.message})"


def _table(rec: Record) -> pa.Table | None:
    """A frame's span batch, or None when the payload is not one (quarantined)."""
    try:
        return from_ipc(rec.payload)
    except (pa.ArrowInvalid, OSError):
        return None
