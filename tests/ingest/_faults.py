"""Fault injection for the write-ahead log: a tiny real disk, and a failing one.

``tiny_disk`` mounts a tmpfs of a few MB (the machine runs tests as root).
Where mounting is not permitted it falls back to ``FaultyDisk`` with a byte
budget, a stand-in that makes ``os.write`` on files under the directory
return short and then raise ENOSPC once the budget is spent; the test then
says so in its output. ``FaultyDisk`` also injects short writes, EIO on
fsync, EROFS and failing truncates, only for file descriptors under its
directory. A read-only disk under a running server is EROFS from this
stand-in: Linux refuses to remount a filesystem read-only while the log holds
a segment open for writing; a log started on a really read-only mount is
tested with ``TinyDisk.remount``.
"""

from __future__ import annotations

import errno
import os
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


class FaultyDisk:
    """A stand-in for a failing disk: faults on ``os`` calls for files under ``directory``."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, directory: Path) -> None:
        self.dir = str(directory.resolve())
        self.short_write: int | None = None  # at most this many bytes per os.write
        self.write_errno: int | None = None  # os.write raises this
        self.fsync_errno: int | None = None  # os.fsync raises this
        self.truncate_errno: int | None = None  # os.ftruncate raises this
        self.budget: int | None = None  # bytes left before ENOSPC (a small disk)
        self.fsync_failures = 0
        self._lock = threading.Lock()
        real_write, real_fsync, real_truncate = os.write, os.fsync, os.ftruncate
        real_unlink, real_pwrite = os.unlink, os.pwrite

        def write(fd: int, data: bytes) -> int:
            if not self._ours(fd):
                return real_write(fd, data)
            code = self.write_errno  # read once: another thread may clear it
            if code:
                raise OSError(code, os.strerror(code))
            view = memoryview(data)
            with self._lock:
                short = self.short_write
                if short is not None:
                    view = view[:short]
                if self.budget is not None:
                    if self.budget <= 0:
                        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
                    view = view[: self.budget]
                    self.budget -= len(view)
            return real_write(fd, view)

        def pwrite(fd: int, data: bytes, offset: int) -> int:
            code = self.write_errno
            if code and self._ours(fd):
                raise OSError(code, os.strerror(code))
            return real_pwrite(fd, data, offset)

        def fsync(fd: int) -> None:
            code = self.fsync_errno
            if code and self._ours(fd):
                self.fsync_failures += 1
                raise OSError(code, os.strerror(code))
            real_fsync(fd)

        def ftruncate(fd: int, length: int) -> None:
            code = self.truncate_errno
            if code and self._ours(fd):
                raise OSError(code, os.strerror(code))
            size = os.fstat(fd).st_size
            real_truncate(fd, length)
            if self.budget is not None and self._ours(fd):
                self.budget += max(0, size - length)  # a smaller file frees its bytes

        def unlink(path: str | os.PathLike[str], *, dir_fd: int | None = None) -> None:
            p = os.path.abspath(os.fspath(path))
            size = os.path.getsize(p) if os.path.exists(p) else 0
            real_unlink(path, dir_fd=dir_fd)
            if self.budget is not None and p.startswith(self.dir):
                self.budget += size

        monkeypatch.setattr(os, "write", write)
        monkeypatch.setattr(os, "fsync", fsync)
        monkeypatch.setattr(os, "ftruncate", ftruncate)
        monkeypatch.setattr(os, "unlink", unlink)
        monkeypatch.setattr(os, "pwrite", pwrite)

    def _ours(self, fd: int) -> bool:
        try:
            return os.readlink(f"/proc/self/fd/{fd}").startswith(self.dir)
        except OSError:
            return False

    def clear(self) -> None:
        """The fault is over."""
        self.short_write = self.write_errno = self.fsync_errno = self.truncate_errno = None
        self.budget = None


class TinyDisk:
    """A small disk at ``path``: a real tmpfs, or the ``FaultyDisk`` budget stand-in."""

    def __init__(self, path: Path, size: int, real: bool, faulty: FaultyDisk | None) -> None:
        self.path, self.size, self.real, self.faulty = path, size, real, faulty

    def remount(self, mode: str) -> None:
        """``ro`` or ``rw`` (a real tmpfs only; Linux refuses ``ro`` while files are open for writing)."""
        subprocess.run(["mount", "-o", f"remount,{mode}", str(self.path)], check=True)



@contextmanager
def tiny_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
              size: int = 3 << 20) -> Iterator[TinyDisk]:
    """A ``size``-byte disk at ``tmp_path/disk``: tmpfs when mountable, else a stand-in."""
    path = tmp_path / "disk"
    path.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path)],
                          capture_output=True)
    if done.returncode == 0:
        try:
            yield TinyDisk(path, size, True, None)
        finally:
            subprocess.run(["umount", "-l", str(path)], check=False)
        return
    print(f"tmpfs not mountable ({done.stderr.decode().strip()}): emulating a {size}-byte disk "
          "with a write budget (FaultyDisk)")
    faulty = FaultyDisk(monkeypatch, path)
    faulty.budget = size
    yield TinyDisk(path, size, False, faulty)
