"""A segmented, fsync'ed write-ahead log with group commit and batch intents.

Acknowledged means durable: ``append`` returns only after the record is on
disk (one ``fsync`` covers every record written while the previous one ran).
The writer that drains the log records the exact record range of a batch
(its *intent*) before inserting it with a token derived from that range, and
marks it *done* after; a crash between the two replays the same range with the
same token, which ClickHouse deduplicates. So a replay never duplicates spans.

Record framing: ``<u32 length><u32 crc32><payload>``. A torn tail (short or
bad-CRC record at the end of the newest segment) was never acknowledged and
is truncated at start.
"""

from __future__ import annotations

import json
import os
import struct
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

_HEADER = struct.Struct("<II")
_SEGMENT = "{:012d}.wal"


@dataclass(frozen=True)
class Position:
    """A place in the log: segment number and byte offset in it."""

    segment: int
    offset: int


@dataclass(frozen=True)
class Record:
    """One appended payload and where it ends (the next record's start)."""

    segment: int
    start: int
    end: int
    payload: bytes


class WriteAheadLog:
    """Append-only segments in a directory plus a checkpoint file."""

    def __init__(self, directory: str | os.PathLike[str], *, segment_bytes: int = 64 << 20) -> None:
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.segment_bytes = segment_bytes
        self._lock = threading.Lock()
        self._sync_lock = threading.Lock()
        self._written = 0  # records written (sequence)
        self._synced = 0
        self._checkpoint = self.dir / "checkpoint.json"
        self.done, self.intent = self._read_checkpoint()
        segments = self.segments()
        self._segment = segments[-1] if segments else max(self.done.segment, 0)
        self._repair_tail(self._segment)
        path = self._path(self._segment)
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._size = os.fstat(self._fd).st_size
        self._fsync_dir()

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

    def _repair_tail(self, segment: int) -> None:
        path = self._path(segment)
        if not path.exists():
            return
        good = 0
        for rec in self._scan(segment, 0):
            good = rec.end
        if path.stat().st_size != good:
            with open(path, "r+b") as f:
                f.truncate(good)
                f.flush()
                os.fsync(f.fileno())

    # -- append -----------------------------------------------------------
    def append(self, payload: bytes, on_written: Callable[[Record], None] | None = None) -> Record:
        """Write ``payload`` and return once it is fsync'ed (group commit).

        ``on_written`` runs under the log's lock right after the write, so
        consumers see records in log order.
        """
        frame = _HEADER.pack(len(payload), zlib.crc32(payload)) + payload
        with self._lock:
            if self._size and self._size + len(frame) > self.segment_bytes:
                self._rotate()
            start = self._size
            os.write(self._fd, frame)
            self._size += len(frame)
            self._written += 1
            seq = self._written
            rec = Record(self._segment, start, self._size, payload)
            if on_written is not None:
                on_written(rec)
        with self._sync_lock:
            if self._synced < seq:
                with self._lock:
                    target = self._written
                    fd = self._fd
                os.fsync(fd)
                self._synced = target
        return rec

    def _rotate(self) -> None:
        os.fsync(self._fd)
        os.close(self._fd)
        self._segment += 1
        self._fd = os.open(self._path(self._segment), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self._size = 0
        self._fsync_dir()

    # -- read -------------------------------------------------------------
    def _scan(self, segment: int, offset: int, end: int | None = None) -> Iterator[Record]:
        path = self._path(segment)
        if not path.exists():
            return
        with open(path, "rb") as f:
            f.seek(offset)
            pos = offset
            while end is None or pos < end:
                head = f.read(_HEADER.size)
                if len(head) < _HEADER.size:
                    return
                length, crc = _HEADER.unpack(head)
                payload = f.read(length)
                if len(payload) < length or zlib.crc32(payload) != crc:
                    return
                nxt = pos + _HEADER.size + length
                yield Record(segment, pos, nxt, payload)
                pos = nxt

    def read_range(self, segment: int, start: int, end: int) -> list[Record]:
        """The records of one segment between two offsets (a batch intent)."""
        return list(self._scan(segment, start, end))

    def unfinished(self) -> Iterator[Record]:
        """Every record after the last *done* position, in order."""
        for seg in self.segments():
            if seg < self.done.segment:
                continue
            yield from self._scan(seg, self.done.offset if seg == self.done.segment else 0)

    # -- checkpoint -------------------------------------------------------
    def _read_checkpoint(self) -> tuple[Position, tuple[int, int, int] | None]:
        if not self._checkpoint.exists():
            return Position(0, 0), None
        doc = json.loads(self._checkpoint.read_text())
        intent = tuple(doc["intent"]) if doc.get("intent") else None
        return Position(*doc["done"]), intent  # type: ignore[return-value]

    def _write_checkpoint(self) -> None:
        tmp = self._checkpoint.with_suffix(".tmp")
        doc = {"done": [self.done.segment, self.done.offset], "intent": self.intent}
        with open(tmp, "w") as f:
            f.write(json.dumps(doc))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self._checkpoint)
        self._fsync_dir()

    def begin(self, segment: int, start: int, end: int) -> str:
        """Record the intent to insert a record range; return its insert token."""
        self.intent = (segment, start, end)
        self._write_checkpoint()
        return token_for(segment, start, end)

    def commit(self, segment: int, end: int) -> None:
        """The intent is in the store: advance *done*, drop finished segments."""
        self.done = Position(segment, end)
        self.intent = None
        self._write_checkpoint()
        with self._lock:
            current = self._segment
        for seg in self.segments():
            if seg < segment and seg < current:
                self._path(seg).unlink(missing_ok=True)

    def lag_bytes(self) -> int:
        """Bytes appended but not yet committed to the store."""
        with self._lock:
            seg, size = self._segment, self._size
        if seg == self.done.segment:
            return size - self.done.offset
        total = size
        for s in self.segments():
            if self.done.segment <= s < seg:
                p = self._path(s)
                total += (p.stat().st_size if p.exists() else 0) - (
                    self.done.offset if s == self.done.segment else 0
                )
        return total

    def close(self) -> None:
        """Flush and close the open segment."""
        with self._lock:
            try:
                os.fsync(self._fd)
                os.close(self._fd)
            except OSError:
                pass


def token_for(segment: int, start: int, end: int) -> str:
    """The insert-deduplication token of a record range."""
    return f"wal:{segment}:{start}-{end}"
