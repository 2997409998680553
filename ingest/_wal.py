"""A segmented, checksummed, fsync'ed write-ahead log with group commit.

Acknowledged means durable: ``append`` returns only after its frame is whole
on disk. One ``fsync`` covers every frame written while the previous one ran
(group commit), and a frame reaches its consumer (``on_durable``) only after
that fsync succeeded, in log order.

On disk (format 1)::

    segment  = header frame*
    header   = "FLYWAL01" wal_id:u64 segment:u64                      (24 bytes)
    frame    = "FWR1" length:u32 seq:u64 crc:u32 payload[length]      (20 + length)

``crc`` is CRC-32 (zlib, C speed; a checksum against torn and rotten bytes,
not a signature) over the log's id, ``length``, ``seq`` and the payload, so a
frame copied from another log, or one forged inside a span attribute, does not
verify. ``seq`` numbers frames across segments without a gap.

Failures never reach a client as an acknowledgement:

- a failed or short ``os.write`` cuts the segment back to the frame's start
  (``ftruncate``); if even that fails the segment is retired with its torn
  tail and the next frame starts a new segment, so no acknowledged frame ever
  follows garbage in a segment;
- a failed ``fsync`` voids every frame written since the last good one (their
  requests get 503), and before the next append the log cuts those frames off
  and continues in a new segment (after an fsync error the page cache is not
  to be trusted);
- free space under ``min_free_bytes`` refuses the append before any byte is
  written. All three raise ``OverloadedError`` (503 + Retry-After) naming the
  disk, and the log writes again by itself once the fault clears.

Replay verifies every frame: a bad frame followed by a good one is corruption
(skipped, reported as such); bad bytes with nothing good after them are a torn
tail. A torn tail was never acknowledged when the frames that follow it (in
the next segment) continue its sequence without a gap; ``skipped`` reports
each region and says which it was.

The writer that drains the log records the exact frame range of a batch (its
*intent*) before inserting it under a token derived from the log id and that
range, and marks it *done* after; a crash between the two replays the same
range with the same token, which ClickHouse deduplicates. The checkpoint is
two fixed 96-byte slots overwritten in place (``pwrite`` + ``fsync``), so
moving it needs no free space and a torn slot leaves the other one valid.

A log belongs to one store (``wal.json`` records its identity) and to one
process at a time (an ``flock`` on ``lock``, released by the kernel when the
process dies, even by SIGKILL).
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import secrets
import shutil
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any
from dataclasses import dataclass, field, replace
from pathlib import Path

from flywheel import ConflictError, OverloadedError, UserError

log = logging.getLogger("flywheel.ingest")

FORMAT = 1
_SEG_MAGIC = b"FLYWAL01"
_SEG_HEADER = struct.Struct("<8sQQ")
_FRAME_MAGIC = b"FWR1"
_FRAME = struct.Struct("<4sIQI")
_CRC_FIELDS = struct.Struct("<IQ")
_SLOT = struct.Struct("<4sQQQQBQQQ")
_SLOT_MAGIC = b"FWCP"
_SLOT_SIZE = 96
_SEGMENT = "{:012d}.wal"
#: Seconds a client is told to wait while the log's disk is full or failing.
DISK_RETRY_AFTER_S = 2.0


@dataclass(frozen=True, order=True)
class Position:
    """A place in the log: segment number and byte offset in it."""

    segment: int
    offset: int


@dataclass(frozen=True)
class Record:
    """One appended payload: where its frame starts and ends, and its sequence number."""

    segment: int
    start: int
    end: int
    seq: int
    payload: bytes = field(repr=False)
    written_at: float = 0.0

    @property
    def frame_bytes(self) -> int:
        """Bytes the frame takes in the log."""
        return self.end - self.start


@dataclass(frozen=True)
class Skipped:
    """A region of a segment replay did not read, and why."""

    segment: int
    start: int
    end: int
    kind: str  # "torn tail" | "corrupt"
    acknowledged: bool  # False when provably never acknowledged

    def describe(self, directory: Path) -> str:
        """One line for the log and ``/readyz``."""
        what = (
            "a torn tail, never acknowledged" if self.kind == "torn tail" and not self.acknowledged
            else "a torn tail that may have held acknowledged frames" if self.kind == "torn tail"
            else "corrupt frames (checksum mismatch) followed by good ones"
        )
        return (f"write-ahead log {directory}: skipped {self.end - self.start} bytes of segment "
                f"{self.segment} at offset {self.start}: {what}")


def token_for(wal_id: str, segment: int, start: int, end: int) -> str:
    """The insert-deduplication token of a frame range of one log."""
    return f"wal:{wal_id}:{segment}:{start}-{end}"


class WriteAheadLog:
    """Append-only segments in a directory plus a checkpoint (see the module docstring)."""

    def __init__(
        self,
        directory: str | os.PathLike[str],
        *,
        identity: str = "",
        segment_bytes: int = 64 << 20,
        min_free_bytes: int = 0,
    ) -> None:
        self.dir = Path(directory)
        self.identity = identity
        self.min_free_bytes = min_free_bytes
        self._lock = threading.Lock()  # file writes and state
        self._sync_lock = threading.Lock()  # one fsync leader at a time
        self._lock_fd = self._ckpt_fd = self._fd = -1
        try:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._lock_fd = _claim(self.dir)
            self.wal_id, self._nonce = self._identity_file(identity)
            self._ckpt_fd = self._open_checkpoint()
            self._open_state(segment_bytes)
        except OSError as exc:
            self._release()
            raise UserError(f"cannot open the write-ahead log in {self.dir}: "
                            f"{exc.strerror or exc}; give ingest a writable --wal-dir") from exc
        except Exception:
            self._release()
            raise

    def _open_state(self, segment_bytes: int) -> None:
        """Read the checkpoint, index what is unfinished, open this process's segment."""
        total = shutil.disk_usage(self.dir).total
        # a segment never takes more than a quarter of a small disk, so a
        # drained segment can always be dropped to make room
        self.segment_bytes = max(1 << 20, min(segment_bytes, total // 4))
        self._generation, self.done, self.done_seq, self.intent = self._read_checkpoint()
        #: Regions replay could not read (see ``Skipped``), found when the log opened.
        self.skipped: list[Skipped] = []
        index = self._scan_all()
        last_seq = max([self.done_seq, *(q for _g, _s, _e, q in index)])
        self._written_seq = self._synced_seq = last_seq
        self._voided: list[tuple[int, int]] = []  # (after, through] seq ranges cut after a bad fsync
        self._lag = sum(e - s for _g, s, e, _q in index)
        for sk in self.skipped:
            (log.error if sk.acknowledged else log.warning)("%s", sk.describe(self.dir))
        self._segment = max([*self.segments(), self.done.segment])
        self._own: list[int] = []  # segments this process created (the only ones it cuts)
        self._size = 0
        self._retired: list[int] = []
        self._pending: list[tuple[Record, Callable[[Record], None] | None]] = []
        self._dir_dirty = False
        self._need_segment = True  # every process appends to a segment of its own
        self._repair = False
        self._synced_pos: Position | None = None  # the end of this process's last good fsync
        #: The last write fault, '' once the log writes again.
        self.fault = ""
        self.fault_at = 0.0
        self.write_errors = 0
        with self._lock:
            try:
                self._ensure_writable(0)
            except OverloadedError as exc:  # a full disk at start: the server still replays
                log.warning("%s", exc.message)

    # -- files ------------------------------------------------------------
    def _path(self, segment: int) -> Path:
        return self.dir / _SEGMENT.format(segment)

    def segments(self) -> list[int]:
        """Segment numbers present on disk, ascending."""
        return sorted(int(p.stem) for p in self.dir.glob("*.wal") if p.stem.isdigit())

    def _fsync_dir(self) -> None:
        fd = os.open(self.dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def _identity_file(self, identity: str) -> tuple[str, int]:
        """(log id, checksum seed) from ``wal.json``, created with a fresh id if absent."""
        path = self.dir / "wal.json"
        legacy = [p.name for p in (self.dir / "checkpoint.json",) if p.exists()]
        if not path.exists():
            if legacy or self.segments():
                raise UserError(
                    f"the write-ahead log in {self.dir} was written by an earlier version "
                    f"(found {', '.join(legacy) or 'segments without wal.json'}); drain it with "
                    "that version, or move the directory away")
            doc = {"format": FORMAT, "wal_id": secrets.token_hex(8), "store": identity,
                   "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
            tmp = path.with_suffix(".tmp")
            _write_file(tmp, json.dumps(doc, indent=1).encode())
            os.replace(tmp, path)
            self._fsync_dir()
        else:
            try:
                doc = json.loads(path.read_text())
                wal_id = str(doc["wal_id"])
                int(wal_id, 16)
            except (ValueError, KeyError, TypeError) as exc:
                raise UserError(f"{path} is not a write-ahead log description ({exc}); "
                                "move the directory away") from exc
            if doc.get("format") != FORMAT:
                raise UserError(f"the write-ahead log in {self.dir} has format "
                                f"{doc.get('format')!r}; this version reads format {FORMAT}")
            if identity and doc.get("store") and doc["store"] != identity:
                raise UserError(
                    f"the write-ahead log in {self.dir} belongs to the store {doc['store']}, "
                    f"not {identity}; give each store its own --wal-dir (or leave it unset: "
                    "the default log lives with its store)")
        return doc["wal_id"], zlib.crc32(bytes.fromhex(doc["wal_id"]))

    def _header(self, payload: bytes | memoryview, seq: int) -> bytes:
        """The frame header of ``payload`` (any buffer) as frame ``seq``."""
        size = memoryview(payload).nbytes
        crc = zlib.crc32(payload, zlib.crc32(_CRC_FIELDS.pack(size, seq), self._nonce))
        return _FRAME.pack(_FRAME_MAGIC, size, seq, crc)

    def _frame(self, payload: bytes, seq: int) -> bytes:
        return self._header(payload, seq) + bytes(payload)

    def _verify(self, buf: bytes | memoryview, pos: int) -> tuple[int, int] | None:
        """(end, seq) of a valid frame at ``pos`` of ``buf``, else None."""
        if pos + _FRAME.size > len(buf):
            return None
        magic, length, seq, crc = _FRAME.unpack_from(buf, pos)
        end = pos + _FRAME.size + length
        if magic != _FRAME_MAGIC or end > len(buf):
            return None
        body = buf[pos + _FRAME.size:end]
        if zlib.crc32(body, zlib.crc32(_CRC_FIELDS.pack(length, seq), self._nonce)) != crc:
            return None
        return end, seq

    # -- scanning ---------------------------------------------------------
    def _read_segment(self, segment: int) -> bytes:
        path = self._path(segment)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return b""
        if len(data) < _SEG_HEADER.size:
            return data  # a segment whose header never made it: nothing in it was acknowledged
        magic, wal_id, number = _SEG_HEADER.unpack_from(data)
        if magic != _SEG_MAGIC or wal_id != int(self.wal_id, 16) or number != segment:
            raise UserError(f"{path} is not segment {segment} of the write-ahead log "
                            f"{self.wal_id} in {self.dir}; move it away")
        return data

    def _frames(self, segment: int, data: bytes, start: int,
                skipped: list[Skipped] | None) -> Iterator[tuple[int, int, int]]:
        """(start, end, seq) of each valid frame from ``start``; bad regions go to ``skipped``."""
        pos = max(start, _SEG_HEADER.size)
        view = memoryview(data)
        while pos < len(data):
            ok = self._verify(view, pos)
            if ok is not None:
                yield pos, ok[0], ok[1]
                pos = ok[0]
                continue
            nxt = data.find(_FRAME_MAGIC, pos + 1)
            while nxt != -1 and self._verify(view, nxt) is None:
                nxt = data.find(_FRAME_MAGIC, nxt + 1)
            end = len(data) if nxt == -1 else nxt
            if skipped is not None:
                skipped.append(Skipped(segment, pos, end, "torn tail" if nxt == -1 else "corrupt",
                                       acknowledged=nxt != -1))
            pos = end

    def _scan_all(self) -> list[tuple[int, int, int, int]]:
        """Index of every valid frame after *done*: (segment, start, end, seq).

        A skipped region is provably never acknowledged when the frame after
        it continues the sequence of the frame before it (or of *done*), or
        when nothing follows it (a crash mid-write: acknowledged frames are
        whole and fsync'ed before it).
        """
        index: list[tuple[int, int, int, int]] = []
        found: list[tuple[Skipped, int]] = []  # region, frames indexed before it
        for seg in self.segments():
            if seg < self.done.segment:
                continue
            data = self._read_segment(seg)
            start = self.done.offset if seg == self.done.segment else 0
            regions: list[Skipped] = []
            for s, e, q in self._frames(seg, data, start, regions):
                while regions:
                    found.append((regions.pop(0), len(index)))
                index.append((seg, s, e, q))
            found.extend((r, len(index)) for r in regions)
        for region, at in found:
            prev = index[at - 1][3] if at else self.done_seq
            gap = at < len(index) and index[at][3] != prev + 1
            self.skipped.append(Skipped(region.segment, region.start, region.end, region.kind,
                                        acknowledged=gap))
        return index

    def read_range(self, segment: int, start: int, end: int) -> list[Record]:
        """The valid frames of one segment between two offsets (a batch intent)."""
        data = self._read_segment(segment)[:end]
        return [Record(segment, s, e, q, bytes(data[s + _FRAME.size:e]))
                for s, e, q in self._frames(segment, data, start, None)]

    def read_frames(self, records: list[Record], alloc: Callable[[int], Any]) -> list[Record]:
        """``records`` (frames of one segment) with their payloads read back from disk.

        The frames were just written, so the page cache answers; each payload
        is read into a buffer from ``alloc(size)`` (aligned, for Arrow) and
        verified again. Raises ``OSError`` when a frame cannot be read or no
        longer verifies: the caller's replay from the checkpoint then reads
        the segment as after a crash.
        """
        out = []
        with open(self._path(records[0].segment), "rb", buffering=0) as f:
            for rec in records:
                header = bytearray(_FRAME.size)
                payload = alloc(rec.end - rec.start - _FRAME.size)
                n = os.preadv(f.fileno(), [header, payload], rec.start)
                magic, length, seq, crc = _FRAME.unpack(header)
                if n != rec.end - rec.start or magic != _FRAME_MAGIC or seq != rec.seq or \
                        zlib.crc32(payload, zlib.crc32(_CRC_FIELDS.pack(length, seq),
                                                       self._nonce)) != crc:
                    raise OSError(errno.EIO, f"frame {rec.seq} of segment {rec.segment} at "
                                  f"{rec.start} does not read back as written")
                out.append(replace(rec, payload=payload))
        return out

    def unfinished(self, through_seq: int | None = None) -> Iterator[Record]:
        """Every durable frame after the last *done* position, in order.

        ``through_seq`` stops at that sequence number (the durable end when
        the caller read ``synced_seq``); frames appended by this process are
        read too.
        """
        limit = self.synced_seq if through_seq is None else through_seq
        for seg in self.segments():
            if seg < self.done.segment:
                continue
            data = self._read_segment(seg)
            start = self.done.offset if seg == self.done.segment else 0
            for s, e, q in self._frames(seg, data, start, None):
                if q > limit:
                    return
                yield Record(seg, s, e, q, bytes(data[s + _FRAME.size:e]))

    # -- append -----------------------------------------------------------
    @property
    def synced_seq(self) -> int:
        """Sequence number of the last frame known durable."""
        return self._synced_seq

    def append(self, payload: bytes, on_durable: Callable[[Record], None] | None = None) -> Record:
        """Write ``payload`` (bytes or another buffer, kept as the record's payload) and
        return once its frame is whole and fsync'ed.

        ``on_durable`` runs right after the fsync that covers the frame, in
        log order. Raises ``OverloadedError`` (nothing acknowledged) when the
        disk is full, read-only or failing.
        """
        with self._lock:
            self._ensure_writable(memoryview(payload).nbytes + _FRAME.size)
            rec = self._write_frame(payload)
            self._pending.append((rec, on_durable))
        self._sync(rec)
        return rec

    def _ensure_writable(self, nbytes: int) -> None:
        """Repair after a fault, open a segment if needed, check free space (under ``_lock``)."""
        if self._repair:
            try:
                self._cut_voided()
            except OSError as exc:
                raise self._unavailable(exc, "cutting off frames whose fsync failed") from exc
            self._repair = False
        self.check_space(nbytes)
        if self._size + nbytes > self.segment_bytes and self._size > _SEG_HEADER.size:
            self._need_segment = True
        if self._need_segment:
            self._open_segment()
            self._need_segment = False

    def _open_segment(self) -> None:
        """Start a segment numbered after every segment there is (under ``_lock``)."""
        number = max([self._segment, *self.segments(), self.done.segment]) + 1
        path = self._path(number)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND | os.O_CLOEXEC,
                         0o644)
        except OSError as exc:
            raise self._unavailable(exc, f"creating segment {path.name}") from exc
        try:
            _write_all(fd, _SEG_HEADER.pack(_SEG_MAGIC, int(self.wal_id, 16), number))
        except OSError as exc:
            os.close(fd)
            path.unlink(missing_ok=True)
            raise self._unavailable(exc, f"writing the header of segment {path.name}") from exc
        if self._fd >= 0:
            self._retired.append(self._fd)
        self._fd, self._segment, self._size = fd, number, _SEG_HEADER.size
        self._own.append(number)
        self._dir_dirty = True

    def _write_frame(self, payload: bytes) -> Record:
        seq = self._written_seq + 1
        header = self._header(payload, seq)
        start = self._size
        size = len(header) + memoryview(payload).nbytes
        try:
            _write_all(self._fd, header)  # header and payload apart: no copy of the payload
            _write_all(self._fd, payload)
            if os.fstat(self._fd).st_size != start + size:
                raise OSError(errno.EIO, "the segment's size does not match what was written")
        except OSError as exc:
            try:
                os.ftruncate(self._fd, start)
            except OSError:
                self._need_segment = True  # retire the segment with its torn tail
            raise self._unavailable(exc, "writing a frame") from exc
        self._size += size
        self._written_seq = seq
        return Record(self._segment, start, self._size, seq, payload, time.time())

    def _sync(self, rec: Record) -> None:
        with self._sync_lock:
            if any(lo < rec.seq <= hi for lo, hi in self._voided):
                raise OverloadedError(self._fault_message(), retry_after=DISK_RETRY_AFTER_S)
            if self._synced_seq >= rec.seq:
                return
            with self._lock:
                target, target_pos = self._written_seq, Position(self._segment, self._size)
                fds, self._retired = self._retired, []
                dir_dirty, self._dir_dirty = self._dir_dirty, False
                pending, self._pending = self._pending, []
                current = self._fd
            try:
                for fd in [*fds, current]:
                    os.fsync(fd)
                if dir_dirty:
                    self._fsync_dir()
            except Exception as exc:  # noqa: BLE001 - any failure voids the frames (answered 503), never half-acknowledges
                if not isinstance(exc, OSError):
                    exc = OSError(errno.EIO, f"{type(exc).__name__}: {exc}")
                with self._lock:
                    # nothing after the last good fsync is trusted: void it, cut it off
                    self._voided.append((self._synced_seq, self._written_seq))
                    self._pending = []
                    self._need_segment = True
                    self._dir_dirty = True
                    err = self._unavailable(exc, "fsync")
                    try:
                        self._cut_voided()  # now, so a quiet log never keeps them
                    except OSError:
                        self._repair = True  # the next append tries again first
                raise err from exc
            finally:
                for fd in fds:
                    _close(fd)
            with self._lock:
                self._synced_seq, self._synced_pos = target, target_pos
                self.fault = ""
                self._lag += sum(r.frame_bytes for r, _cb in pending)
            for r, cb in pending:
                if cb is not None:
                    cb(r)

    def _cut_voided(self) -> None:
        """Remove every frame after this process's last good fsync (under ``_lock``).

        Only segments this process created are touched: frames of earlier
        processes were durable before it started.
        """
        if self._fd >= 0:
            _close(self._fd)
            self._fd = -1
        pos = self._synced_pos
        for seg in list(self._own):
            path = self._path(seg)
            if pos is None or seg > pos.segment:
                path.unlink(missing_ok=True)
                self._own.remove(seg)
            elif seg == pos.segment and path.exists():
                fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
                try:
                    os.ftruncate(fd, pos.offset)
                    os.fsync(fd)
                finally:
                    os.close(fd)
        self._fsync_dir()

    def check_space(self, nbytes: int = 0) -> None:
        """Raise ``OverloadedError`` naming the disk when it lacks room for ``nbytes``."""
        if not self.min_free_bytes and not nbytes:
            return
        try:
            free = shutil.disk_usage(self.dir).free
        except OSError as exc:
            raise self._unavailable(exc, "reading free space") from exc
        if free < self.min_free_bytes + nbytes:
            raise OverloadedError(
                f"the write-ahead log disk {_disk_name(self.dir)} has {_mb(free)} free, under the "
                f"{_mb(self.min_free_bytes)} floor (ingest.wal_min_free_bytes) plus this request; "
                "ingest resumes by itself when space returns; retry later",
                retry_after=DISK_RETRY_AFTER_S)

    def _unavailable(self, exc: OSError, doing: str) -> OverloadedError:
        self.write_errors += 1
        reason = {errno.ENOSPC: "is full", errno.EDQUOT: "is over its quota",
                  errno.EROFS: "is read-only", errno.EIO: "reported an I/O error",
                  errno.EACCES: "refused the write", errno.EPERM: "refused the write"}.get(
            exc.errno or 0, f"failed ({exc.strerror or exc})")
        self.fault = f"the write-ahead log disk {_disk_name(self.dir)} {reason} ({doing})"
        self.fault_at = time.time()
        return OverloadedError(self._fault_message(), retry_after=DISK_RETRY_AFTER_S)

    def _fault_message(self) -> str:
        return (f"{self.fault or 'the write-ahead log could not make this request durable'}; "
                "nothing of this request was stored; ingest resumes by itself when the disk "
                "recovers; retry later")

    def rotate_if_drained(self, min_bytes: int) -> bool:
        """Start a new segment when everything logged is done and the current one is big.

        Frees the disk: a drained segment is deleted before its successor is
        created (nothing in it is needed), so this works on a full disk too.
        """
        with self._lock:
            if self._lag or self._pending or self._size < min_bytes or self._repair \
                    or self._written_seq != self._synced_seq or self.intent is not None:
                return False
            old = [s for s in self.segments() if s <= self._segment]
            if self._fd >= 0:
                _close(self._fd)
                self._fd = -1
            for seg in old:
                self._path(seg).unlink(missing_ok=True)
            self._own = [s for s in self._own if s not in old]
            self._need_segment = True
            self._size = 0
            try:
                self._ensure_writable(0)
            except OverloadedError:
                pass  # the next append opens it
            return True

    # -- checkpoint -------------------------------------------------------
    def _open_checkpoint(self) -> int:
        path = self.dir / "checkpoint"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        if os.fstat(fd).st_size < 2 * _SLOT_SIZE:
            os.ftruncate(fd, 2 * _SLOT_SIZE)  # preallocated: moving it later needs no space
            buf = b"\0" * (2 * _SLOT_SIZE)
            os.pwrite(fd, buf, 0)
            os.fsync(fd)
            self._fsync_dir()
        return fd

    def _read_checkpoint(self) -> tuple[int, Position, int, tuple[int, int, int] | None]:
        """(generation, done position, done sequence number, intent) of the newest valid slot."""
        best: tuple[int, Position, int, tuple[int, int, int] | None] = (0, Position(0, 0), 0, None)
        data = os.pread(self._ckpt_fd, 2 * _SLOT_SIZE, 0)
        for i in range(2):
            slot = data[i * _SLOT_SIZE:(i + 1) * _SLOT_SIZE]
            if len(slot) < _SLOT_SIZE:
                continue
            body, crc = slot[:_SLOT.size], struct.unpack_from("<I", slot, _SLOT.size)[0]
            magic, gen, dseg, doff, dseq, has, iseg, istart, iend = _SLOT.unpack(body)
            if magic != _SLOT_MAGIC or zlib.crc32(body, self._nonce) != crc:
                continue
            if gen >= best[0]:
                best = (gen, Position(dseg, doff), dseq, (iseg, istart, iend) if has else None)
        return best

    def _write_checkpoint(self, done: Position, done_seq: int,
                          intent: tuple[int, int, int] | None) -> None:
        gen = self._generation + 1
        body = _SLOT.pack(_SLOT_MAGIC, gen, done.segment, done.offset, done_seq,
                          intent is not None, *(intent or (0, 0, 0)))
        slot = body + struct.pack("<I", zlib.crc32(body, self._nonce))
        slot += b"\0" * (_SLOT_SIZE - len(slot))
        try:
            n = os.pwrite(self._ckpt_fd, slot, (gen % 2) * _SLOT_SIZE)
            if n != len(slot):
                raise OSError(errno.EIO, f"short checkpoint write ({n} of {len(slot)} bytes)")
            os.fsync(self._ckpt_fd)
        except OSError as exc:
            raise self._unavailable(exc, "writing the checkpoint") from exc
        self._generation, self.done, self.done_seq, self.intent = gen, done, done_seq, intent

    def begin(self, segment: int, start: int, end: int) -> str:
        """Record the intent to insert a frame range; return its insert token.

        Raises ``OverloadedError`` when the checkpoint cannot be written.
        """
        self._write_checkpoint(self.done, self.done_seq, (segment, start, end))
        return token_for(self.wal_id, segment, start, end)

    def commit(self, records: list[Record]) -> None:
        """The intent (these frames) is in the store: advance *done*, drop finished segments."""
        last = records[-1]
        self._write_checkpoint(Position(last.segment, last.end), last.seq, None)
        with self._lock:
            self._lag = max(0, self._lag - sum(r.frame_bytes for r in records))
            current = self._segment
        segment = last.segment
        for seg in self.segments():
            if seg < segment and seg < current:
                self._path(seg).unlink(missing_ok=True)

    def clear_intent(self, segment: int, end: int) -> None:
        """An intent whose frames are gone (nothing to insert): move *done* past it."""
        self._write_checkpoint(Position(segment, end), self.done_seq, None)

    def token(self, segment: int, start: int, end: int) -> str:
        """The token of a frame range of this log."""
        return token_for(self.wal_id, segment, start, end)

    # -- state ------------------------------------------------------------
    def lag_bytes(self) -> int:
        """Bytes of durable frames not yet committed to the store."""
        return self._lag

    def disk(self) -> dict[str, int | str]:
        """The log's disk: name, free and total bytes."""
        try:
            usage = shutil.disk_usage(self.dir)
            return {"disk": _disk_name(self.dir), "free_bytes": usage.free,
                    "total_bytes": usage.total}
        except OSError:
            return {"disk": _disk_name(self.dir), "free_bytes": 0, "total_bytes": 0}

    def writable(self) -> bool:
        """False while a write fault is not repaired or free space is under the floor."""
        if self.fault:
            return False
        try:
            self.check_space(0)
        except OverloadedError:
            return False
        return True

    def close(self) -> None:
        """Sync and close the files and release the lock (the log stays on disk)."""
        with self._lock:
            if self._repair:
                try:
                    self._cut_voided()
                except OSError as exc:
                    log.error("write-ahead log %s: could not cut off frames whose fsync failed "
                              "(%s); a restart may replay them (they were answered 503)",
                              self.dir, exc)
            for fd in [*self._retired, self._fd]:
                if fd >= 0:
                    try:
                        os.fsync(fd)
                    except OSError:
                        pass  # frames after the last good fsync were never acknowledged
                    _close(fd)
            self._retired, self._fd = [], -1
        self._release()

    def _release(self) -> None:
        _close(self._ckpt_fd)
        _close(self._lock_fd)
        self._ckpt_fd = self._lock_fd = -1


def _claim(directory: Path) -> int:
    """Take the log's lock file, or raise ``ConflictError`` naming its holder."""
    path = directory / "lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 512, 0).decode(errors="replace").strip() or "another process"
        os.close(fd)
        raise ConflictError(
            f"the write-ahead log in {directory} is in use by {holder}; one process writes a "
            "store's log: stop that server first, or serve another store") from None
    info = f"pid {os.getpid()} on {os.uname().nodename}".encode()
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, info, 0)
    except OSError:
        pass  # the lock holds without its description (a full disk)
    return fd


def _write_all(fd: int, data: bytes) -> None:
    """``os.write`` until every byte (of any buffer) is written; a write of 0 bytes is ENOSPC."""
    view = memoryview(data).cast("B")
    done = 0
    while done < len(view):
        n = os.write(fd, view[done:])
        if n <= 0:
            raise OSError(errno.ENOSPC, "short write: the disk took no more bytes")
        done += n


def _write_file(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o644)
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _close(fd: int) -> None:
    if fd >= 0:
        try:
            os.close(fd)
        except OSError:
            pass  # already closed


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB"


def _disk_name(path: Path) -> str:
    """``PATH (mount point M, DEVICE)`` for messages: which disk to free or fix."""
    try:
        p = path.resolve()
        dev = p.stat().st_dev
        mount = p
        while mount.parent != mount and mount.parent.stat().st_dev == dev:
            mount = mount.parent
        device = ""
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                if len(parts) > 1 and parts[1] == str(mount):
                    device = parts[0]
        return f"{path} (mount {mount}{', ' + device if device else ''})"
    except OSError:
        return str(path)
