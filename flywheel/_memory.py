"""Giving memory back to the system while a long-running process idles.

Two kinds of resident memory outlive the work that needed them:

- freed heap the C allocator keeps (glibc keeps what its arenas freed: Python,
  Arrow's system pool): ``trim_heap`` asks glibc to return it
  (``malloc_trim``); chDB allocates through its own jemalloc, which the store
  purges itself (``ChdbStore.release_memory``);
- pages of a large shared library that ran once (chDB's 555 MB library:
  loading it runs every static initialiser and faults in about 230 MB of
  code that a server never runs again): ``drop_library_pages`` unmaps that
  library's read-only pages (``madvise(MADV_DONTNEED)``). They stay in the
  page cache, a later call faults the few it needs back in (a minor fault
  each), and the process's resident set no longer holds the rest. Only
  read-only private file mappings without a single private (copied) page
  are dropped: their content is the file's, so nothing can be lost.

Both are no-ops where the system does not offer them (not Linux, not glibc).
"""

from __future__ import annotations

import ctypes
import logging
import re
import sys

log = logging.getLogger("flywheel")

_MADV_DONTNEED = 4
_MAPPING = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S{4}) \S+ \S+ \S+\s*(.*)$")
_libc: ctypes.CDLL | None = None


def _c() -> ctypes.CDLL | None:
    global _libc
    if _libc is None and sys.platform == "linux":
        try:
            _libc = ctypes.CDLL("libc.so.6", use_errno=True)
            _libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
            _libc.malloc_trim.argtypes = [ctypes.c_size_t]
        except (OSError, AttributeError):  # not glibc
            _libc = None
    return _libc


def trim_heap() -> int:
    """Return freed C heap to the system; 1 when glibc released some, else 0."""
    libc = _c()
    return int(libc.malloc_trim(0)) if libc is not None else 0


def drop_library_pages(name: str) -> int:
    """Unmap the resident read-only pages of the shared library whose path holds ``name``.

    Returns the bytes of the mappings advised. Mappings that hold a private
    page (relocated data, a written page) are left alone.
    """
    libc = _c()
    if libc is None:
        return 0
    try:
        with open("/proc/self/smaps") as f:
            text = f.read()
    except OSError:
        return 0
    dropped = 0
    for start, end in _clean_readonly(text, name):
        if libc.madvise(start, end - start, _MADV_DONTNEED) == 0:
            dropped += end - start
        else:
            log.debug("madvise on %s failed: errno %d", name, ctypes.get_errno())
    return dropped


def _clean_readonly(smaps: str, name: str) -> list[tuple[int, int]]:
    """(start, end) of read-only private mappings of ``name`` with no anonymous page."""
    out: list[tuple[int, int]] = []
    current: tuple[int, int] | None = None
    for line in smaps.splitlines():
        m = _MAPPING.match(line)
        if m:
            start, end, perms, path = m.groups()
            readonly_private = perms[1] == "-" and perms[3] == "p"
            current = (int(start, 16), int(end, 16)) if readonly_private and name in path else None
        elif current is not None and line.startswith("Anonymous:"):
            if int(line.split()[1]) == 0:
                out.append(current)
            current = None
    return out
