"""Decoding OTLP bodies in worker processes, off the receiver's GIL.

On a small machine the receiver process spends most of its CPU turning
protobuf into Arrow columns, while ClickHouse inserts and HTTP handling need
the same interpreter. A worker process returns the batch already serialised
for the write-ahead log (Arrow IPC), so the receiver only appends it.
Workers start with ``spawn``: the receiver holds chDB and threads, which a
``fork`` must not copy. A worker exits by itself when the receiver dies (even
by SIGKILL): it watches its parent process id (a parent-death signal would
fire when the *thread* that started the worker ends, which in a thread pool
is any time).
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing as mp
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor

from flywheel import UserError

from ._limits import Limits, Truncations
from ._decode import decode_body

log = logging.getLogger("flywheel.ingest")


Decoded = tuple[bytes, int, int, list[str], Truncations, str]


def decode_to_ipc(body: bytes, ctype: str, project: str, limits: Limits) -> Decoded:
    """(Arrow IPC payload, accepted, rejected, reasons, truncations, error) for one body."""
    from ._writer import to_ipc

    try:
        batch = decode_body(body, ctype, project=project, limits=limits)
    except UserError as exc:
        return b"", 0, 0, [], Truncations(), exc.message
    except Exception as exc:  # noqa: BLE001 - a decoder bug is a 400, reported, never a 5xx
        log.exception("undecodable OTLP body")
        return b"", 0, 0, [], Truncations(), f"undecodable OTLP body ({type(exc).__name__})"
    payload = to_ipc(batch.table) if batch.accepted else b""
    return payload, batch.accepted, batch.rejected, batch.reasons, batch.truncated, ""


def _warm() -> int:
    return 0


def watch_parent(parent: int, interval_s: float = 0.5) -> None:
    """Worker initializer: exit as soon as ``parent`` is no longer this process's parent."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(interval_s)
        os._exit(0)  # the receiver is gone: nobody reads this worker's answers

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class DecodePool:
    """A small process pool for ``decode_to_ipc``."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("spawn"),
                                         initializer=watch_parent, initargs=(os.getpid(),))
        for f in [self._pool.submit(_warm) for _ in range(workers)]:
            f.result(timeout=120)  # start the workers now, not on the first request

    async def decode(self, body: bytes, ctype: str, project: str, limits: Limits) -> Decoded:
        """Decode in a worker; the event loop stays free meanwhile."""
        fut = self._pool.submit(decode_to_ipc, body, ctype, project, limits)
        return await asyncio.wrap_future(fut)

    def close(self) -> None:
        """Stop the workers."""
        self._pool.shutdown(wait=True, cancel_futures=True)
