"""``flywheel serve`` with a SIGKILL at a chosen point (a test stand-in, never shipped).

``python -m tests.ingest._faulty_serve FLYWHEEL ARGS...`` runs the real CLI
after patching, from ``FLYWHEEL_TEST_FAULT`` (comma-separated):

- ``slow_insert:S``: every store insert sleeps S seconds first (the log lags);
- ``checkpoint:N``: the N-th checkpoint write stores half its slot, then the
  process kills itself with SIGKILL (a torn checkpoint);
- ``replay:N``: during replay, the N-th batch is inserted into the store and
  the process is killed before the batch is marked done.
"""

from __future__ import annotations

import os
import signal
import sys
import time


def _kill() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def install(spec: str) -> None:
    """Patch the writer and its log as ``spec`` says."""
    from flywheel import Store
    from flywheel.ingest import SpanWriter, WriteAheadLog

    faults = dict(part.split(":", 1) for part in spec.split(",") if part)
    if "slow_insert" in faults:
        delay = float(faults["slow_insert"])
        real_insert = Store.insert

        def slow(self, *a, **k):  # noqa: ANN001, ANN002, ANN003, ANN202
            time.sleep(delay)
            return real_insert(self, *a, **k)

        Store.insert = slow  # type: ignore[method-assign]
    if "checkpoint" in faults:
        target, seen = int(faults["checkpoint"]), [0]
        real_ckpt = WriteAheadLog._write_checkpoint

        def torn(self, *a):  # noqa: ANN001, ANN002, ANN202
            seen[0] += 1
            if seen[0] == target:
                real_pwrite = os.pwrite

                def half(fd: int, data: bytes, offset: int) -> int:
                    real_pwrite(fd, data[: len(data) // 2], offset)
                    _kill()
                    return 0

                os.pwrite = half
            return real_ckpt(self, *a)

        WriteAheadLog._write_checkpoint = torn  # type: ignore[method-assign]
    if "replay" in faults:
        target, seen = int(faults["replay"]), [0]
        real_replay, real_commit = SpanWriter._replay, WriteAheadLog.commit
        replaying = [False]

        def replay(self):  # noqa: ANN001, ANN202
            replaying[0] = True
            try:
                return real_replay(self)
            finally:
                replaying[0] = False

        def commit(self, records):  # noqa: ANN001, ANN202
            if replaying[0]:
                seen[0] += 1
                if seen[0] == target:
                    _kill()  # inserted, not marked done
            return real_commit(self, records)

        SpanWriter._replay = replay  # type: ignore[method-assign]
        WriteAheadLog.commit = commit  # type: ignore[method-assign]


if __name__ == "__main__":
    install(os.environ.get("FLYWHEEL_TEST_FAULT", ""))
    from flywheel.cli import main

    sys.argv = ["flywheel", *sys.argv[1:]]
    main()
