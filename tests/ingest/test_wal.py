"""The write-ahead log under faults: what ``append`` returned is exactly what replay finds.

Faults come from ``tests/ingest/_faults.FaultyDisk`` (short writes, ENOSPC,
EIO on fsync, failing truncates, on the log's files only) and from bytes
edited on disk (torn tails, rotten frames, torn checkpoint slots).
"""

from __future__ import annotations

import errno
import random
import threading

import pytest

from flywheel import ConflictError, OverloadedError, UserError
from flywheel.ingest import WriteAheadLog
from tests.ingest._faults import FaultyDisk


def _replayed(directory) -> tuple[list[bytes], list]:
    wal = WriteAheadLog(directory, identity="s")
    try:
        return [r.payload for r in wal.unfinished()], list(wal.skipped)
    finally:
        wal.close()


def test_frames_roundtrip_in_order_across_segments(tmp_path):
    wal = WriteAheadLog(tmp_path, identity="s", segment_bytes=1 << 20)
    got = []
    payloads = [bytes([i % 251]) * (100_000 + i) for i in range(25)]
    for p in payloads:
        wal.append(p, got.append)
    assert [r.payload for r in got] == payloads
    assert [r.seq for r in got] == sorted(r.seq for r in got)
    assert len({r.segment for r in got}) > 1
    wal.close()
    replayed, skipped = _replayed(tmp_path)
    assert replayed == payloads and skipped == []


def test_short_writes_are_completed_not_acknowledged_torn(tmp_path, monkeypatch):
    disk = FaultyDisk(monkeypatch, tmp_path)
    disk.short_write = 7  # every os.write takes at most 7 bytes
    wal = WriteAheadLog(tmp_path, identity="s")
    payloads = [f"span batch {i}".encode() * 50 for i in range(20)]
    for p in payloads:
        wal.append(p)
    wal.close()
    disk.clear()
    assert _replayed(tmp_path) == (payloads, [])


def test_enospc_mid_frame_is_refused_and_cut_back(tmp_path, monkeypatch):
    disk = FaultyDisk(monkeypatch, tmp_path)
    wal = WriteAheadLog(tmp_path, identity="s")
    wal.append(b"first")
    disk.budget = 10  # the disk takes 10 more bytes, then ENOSPC
    with pytest.raises(OverloadedError) as err:
        wal.append(b"x" * 1000)
    assert "is full" in err.value.message and str(tmp_path) in err.value.message
    assert err.value.retry_after > 0
    disk.clear()
    wal.append(b"third")  # writes again by itself, no reopen
    wal.close()
    assert _replayed(tmp_path) == ([b"first", b"third"], [])


def test_failed_write_and_failed_truncate_retire_the_segment(tmp_path, monkeypatch):
    disk = FaultyDisk(monkeypatch, tmp_path)
    wal = WriteAheadLog(tmp_path, identity="s")
    wal.append(b"first")
    disk.budget, disk.truncate_errno = 30, errno.EIO  # a torn frame that cannot be cut off
    with pytest.raises(OverloadedError):
        wal.append(b"y" * 1000)
    disk.clear()
    wal.append(b"third")
    wal.close()
    replayed, skipped = _replayed(tmp_path)
    assert replayed == [b"first", b"third"]
    assert [(s.kind, s.acknowledged) for s in skipped] == [("torn tail", False)]


def test_eio_on_fsync_voids_unsynced_frames_and_recovers(tmp_path, monkeypatch):
    disk = FaultyDisk(monkeypatch, tmp_path)
    wal = WriteAheadLog(tmp_path, identity="s")
    wal.append(b"first")
    disk.fsync_errno = errno.EIO
    with pytest.raises(OverloadedError) as err:
        wal.append(b"lost")
    assert "I/O error" in err.value.message
    assert not wal.writable()
    disk.clear()
    wal.append(b"third")  # cuts the voided frame off, continues in a new segment
    assert wal.writable()
    wal.close()
    assert _replayed(tmp_path) == ([b"first", b"third"], [])


def test_concurrent_appends_under_random_faults_ack_exactly_what_replays(tmp_path, monkeypatch):
    """Eight threads append while fsync and write fail at random: acked == replayed."""
    disk = FaultyDisk(monkeypatch, tmp_path)
    wal = WriteAheadLog(tmp_path, identity="s", segment_bytes=1 << 20)
    rng = random.Random(19)
    acked: list[bytes] = []
    refused = 0
    why: dict[bytes, str] = {}
    lock = threading.Lock()

    running = threading.Event()
    running.set()

    def chaos() -> None:
        while running.is_set():
            r = rng.random()
            disk.fsync_errno = errno.EIO if r < 0.15 else None
            disk.write_errno = errno.ENOSPC if 0.15 <= r < 0.25 else None
            disk.short_write = rng.choice([None, 3, 100])
            threading.Event().wait(0.002)
        disk.clear()

    def client(k: int) -> None:
        nonlocal refused
        for i in range(40):
            p = f"client {k} batch {i} ".encode() * rng.randint(1, 400)
            try:
                wal.append(p)
            except OverloadedError as exc:
                with lock:
                    refused += 1
                    why[p[:20]] = exc.message
                continue
            with lock:
                acked.append(p)

    monkey = threading.Thread(target=chaos)
    monkey.start()
    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    running.clear()
    monkey.join()
    disk.clear()
    wal.close()
    replayed, skipped = _replayed(tmp_path)
    assert refused > 0, "no fault hit an append: not a fault test"
    extra = [p[:20] for p in replayed if p not in acked]
    lost = [p[:20] for p in acked if p not in replayed]
    assert not extra and not lost and len(replayed) == len(acked), (
        extra, [why.get(e) for e in extra], lost, skipped)
    assert all(not s.acknowledged for s in skipped)


def test_replay_skips_a_rotten_frame_reports_it_and_reads_on(tmp_path):
    wal = WriteAheadLog(tmp_path, identity="s")
    recs = [wal.append(f"frame {i}".encode() * 20) for i in range(5)]
    wal.close()
    path = tmp_path / f"{recs[2].segment:012d}.wal"
    data = bytearray(path.read_bytes())
    data[recs[2].start + 30] ^= 0xFF  # one flipped bit inside an acknowledged frame
    path.write_bytes(bytes(data))
    replayed, skipped = _replayed(tmp_path)
    assert replayed == [r.payload for i, r in enumerate(recs) if i != 2]
    assert [(s.kind, s.acknowledged) for s in skipped] == [("corrupt", True)]
    assert "corrupt" in skipped[0].describe(tmp_path)


def test_torn_tail_after_a_crash_is_reported_never_acknowledged(tmp_path):
    wal = WriteAheadLog(tmp_path, identity="s")
    recs = [wal.append(b"a" * 100) for _ in range(3)]
    wal.close()
    path = tmp_path / f"{recs[-1].segment:012d}.wal"
    with open(path, "ab") as f:  # a crash in the middle of a frame
        f.write(b"FWR1\x00\x10\x00\x00" + b"partial")
    replayed, skipped = _replayed(tmp_path)
    assert replayed == [b"a" * 100] * 3
    assert [(s.kind, s.acknowledged) for s in skipped] == [("torn tail", False)]
    assert "never acknowledged" in skipped[0].describe(tmp_path)


def test_forged_frame_inside_a_payload_does_not_verify(tmp_path):
    """A span attribute holding bytes shaped like a frame is not replayed as one."""
    wal = WriteAheadLog(tmp_path, identity="s")
    inner = wal._frame(b"forged", 99)
    wal.close()
    other = tmp_path / "other"
    wal = WriteAheadLog(other, identity="s")  # another log: another checksum seed
    rec = wal.append(b"head" + inner + b"tail")
    wal.close()
    path = other / f"{rec.segment:012d}.wal"
    data = bytearray(path.read_bytes())
    data[rec.start + 21] ^= 0xFF  # break the outer frame: resync must not find the inner one
    path.write_bytes(bytes(data))
    replayed, skipped = _replayed(other)
    assert replayed == [] and [s.kind for s in skipped] == ["torn tail"]


def test_checkpoint_survives_a_torn_slot(tmp_path):
    wal = WriteAheadLog(tmp_path, identity="s")
    recs = [wal.append(f"{i}".encode()) for i in range(4)]
    wal.begin(recs[0].segment, recs[0].start, recs[1].end)
    wal.commit(recs[:2])
    wal.begin(recs[2].segment, recs[2].start, recs[2].end)
    wal.close()
    # tear the newest slot (the intent): the older one (done after 2 frames) stays valid
    ckpt = tmp_path / "checkpoint"
    data = bytearray(ckpt.read_bytes())
    newest = 0 if data[4:12] > data[96 + 4:96 + 12] else 96
    data[newest + 20] ^= 0xFF
    ckpt.write_bytes(bytes(data))
    wal = WriteAheadLog(tmp_path, identity="s")
    assert wal.intent is None and wal.done_seq == recs[1].seq
    assert [r.payload for r in wal.unfinished()] == [b"2", b"3"]
    wal.close()


def test_one_process_per_log_and_one_store_per_log(tmp_path):
    wal = WriteAheadLog(tmp_path, identity="chdb:///a")
    with pytest.raises(ConflictError, match="in use by pid"):
        WriteAheadLog(tmp_path, identity="chdb:///a")
    wal.close()
    with pytest.raises(UserError, match="belongs to the store chdb:///a"):
        WriteAheadLog(tmp_path, identity="chdb:///b")
    WriteAheadLog(tmp_path, identity="chdb:///a").close()


def test_log_on_a_read_only_directory_is_a_one_line_error(tmp_path, monkeypatch):
    disk = FaultyDisk(monkeypatch, tmp_path)
    real_open = __import__("os").open

    def ro_open(path, flags, *a, **k):
        if str(path).startswith(disk.dir) and flags & (0o1 | 0o2 | 0o100):
            raise OSError(errno.EROFS, "Read-only file system")
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr("os.open", ro_open)
    with pytest.raises(UserError, match="Read-only file system"):
        WriteAheadLog(tmp_path / "wal", identity="s")
