"""Redact many traces, optionally across worker processes.

Why: Presidio is pure Python, so one process uses one core. Traces are
independent (pseudonyms restart per trace), so a batch splits cleanly across
processes; each worker builds its own analyzer once and keeps its own
detection cache. Pools are kept per (policy, workers) and reused by later
calls, because starting one (a forkserver that imports Presidio, then the
workers) costs seconds; ``shutdown_pools`` (also run at exit) ends them.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import threading
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor

from flywheel.promote._redact import Redactor
from flywheel.promote._redact_types import RedactedTrace, RedactionPolicy, TraceStep

_WORKER: Redactor | None = None
_POOLS: dict[tuple[str, int], ProcessPoolExecutor] = {}
_POOLS_LOCK = threading.Lock()


def _init(policy_json: str) -> None:
    global _WORKER
    _WORKER = Redactor(RedactionPolicy.model_validate_json(policy_json))


def _run(chunk: list[Sequence[TraceStep]]) -> list[RedactedTrace]:
    assert _WORKER is not None
    return _WORKER.redact_many(chunk)


def _pool(policy_json: str, workers: int) -> ProcessPoolExecutor:
    with _POOLS_LOCK:
        pool = _POOLS.get((policy_json, workers))
        if pool is None:
            # forkserver, not fork: the caller may hold chDB's threads, and forking
            # a threaded process can deadlock the child; the server imports Presidio once.
            ctx = multiprocessing.get_context("forkserver")
            ctx.set_forkserver_preload(["flywheel.promote._redact"])
            pool = ProcessPoolExecutor(
                max_workers=workers, mp_context=ctx, initializer=_init, initargs=(policy_json,)
            )
            _POOLS[(policy_json, workers)] = pool
        return pool


def shutdown_pools() -> None:
    """Stop every worker pool started by ``redact_traces``."""
    with _POOLS_LOCK:
        pools = list(_POOLS.values())
        _POOLS.clear()
    for pool in pools:
        pool.shutdown(wait=True, cancel_futures=True)


atexit.register(shutdown_pools)


#: Chunks per worker when ``redact_traces`` sizes them: enough that one slow trace
#: leaves the other workers busy, few enough that sending them costs little.
CHUNKS_PER_WORKER = 8
#: The largest chunk ``redact_traces`` picks itself.
MAX_CHUNK = 16


def worker_count(workers: int) -> int:
    """``workers`` with 0 read as one per CPU."""
    return workers if workers > 0 else (os.cpu_count() or 1)


def redact_traces(
    traces: Sequence[Sequence[TraceStep]],
    policy: RedactionPolicy | None = None,
    workers: int = 1,
    chunk_size: int | None = None,
) -> list[RedactedTrace]:
    """Redact ``traces`` in order, in ``workers`` processes (1 = this process).

    Args:
        traces: Each trace is a sequence of ``TraceStep``.
        policy: Redaction policy; default policy if omitted.
        workers: Processes to use; 0 means one per CPU. A batch of fewer
            than two chunks runs in this process.
        chunk_size: Traces sent to a worker at a time; by default the batch
            is cut into ``CHUNKS_PER_WORKER`` chunks per worker (at most
            ``MAX_CHUNK`` traces each), so a batch of 64 traces on 2 workers
            goes in 16 chunks of 4.

    Returns:
        One ``RedactedTrace`` per input trace, same order.
    """
    policy = policy or RedactionPolicy()
    workers = worker_count(workers)
    if chunk_size is None:
        chunk_size = min(MAX_CHUNK, -(-len(traces) // (workers * CHUNKS_PER_WORKER)))
    chunk_size = max(1, chunk_size)
    if workers <= 1 or len(traces) < 2 * chunk_size:
        return Redactor(policy).redact_many(traces)
    chunks = [list(traces[i : i + chunk_size]) for i in range(0, len(traces), chunk_size)]
    out: list[RedactedTrace] = []
    for part in _pool(policy.model_dump_json(), workers).map(_run, chunks):
        out.extend(part)
    return out
