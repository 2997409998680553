"""Test-only stand-ins: ``clickhouse_http`` is ClickHouse's HTTP interface over chDB.

It is a stand-in for tests, not a ClickHouse server.

``start_standin(path)`` runs it as a subprocess on a free loopback port;
``running_standin(tmp_path)`` wraps that as a context manager yielding a
store URL for the server backend (``clickhouse://default:@127.0.0.1:PORT/flywheel``).
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["running_standin", "start_standin"]

_REPO = Path(__file__).resolve().parents[2]


def start_standin(
    path: str | os.PathLike[str], *, timeout: float = 60.0
) -> tuple[str, int, Callable[[], None]]:
    """Start the stand-in over a chDB directory ``path``; return ``(host, port, stop)``.

    The server picks its own free port (``--port 0``) and reports it on its ready
    line, so there is no race for the port. It logs to ``<path>.log`` and exits
    by itself if this process dies (its stdin closes). ``stop()`` is idempotent.
    """
    from .clickhouse_http import READY

    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    log = open(f"{path}.log", "ab")  # noqa: SIM115 - handed to the child, closed by stop()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(_REPO), os.environ.get("PYTHONPATH")])),
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests._standin.clickhouse_http",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--path",
            str(path),
            "--exit-on-stdin-eof",
        ],
        cwd=_REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
    )

    def stop() -> None:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)
        for stream in (proc.stdin, proc.stdout):
            if stream:
                stream.close()
        log.close()

    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    line = b""
    while not line.endswith(b"\n"):
        left = deadline - time.monotonic()
        if (
            left <= 0
            or proc.poll() is not None
            or not select.select([proc.stdout], [], [], left)[0]
        ):
            stop()
            tail = Path(f"{path}.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(
                f"ClickHouse HTTP stand-in did not start (exit {proc.returncode}): {tail}"
            )
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            continue
        line += chunk
    text = line.decode().strip()
    if not text.startswith(READY):
        stop()
        raise RuntimeError(f"unexpected first line from the stand-in: {text!r}")
    host, port = text.rsplit("//", 1)[1].rsplit(":", 1)
    return host, int(port), stop


@contextmanager
def running_standin(tmp_path: str | os.PathLike[str], database: str = "flywheel") -> Iterator[str]:
    """A running stand-in for the duration of the block; yields its store URL."""
    host, port, stop = start_standin(Path(tmp_path) / "chdb")
    try:
        yield f"clickhouse://default:@{host}:{port}/{database}"
    finally:
        stop()
