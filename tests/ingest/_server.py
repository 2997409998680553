"""Run the real app under uvicorn in a thread, for tests whose clients need a wire."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn

from flywheel import Settings, Store, create_app


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def running_server(store: Store, wal_dir: Path, **ingest: object) -> Iterator[tuple[str, object]]:
    """Yield (base URL, app) of a live server over ``store``; stops it after."""
    settings = Settings(store="chdb:///unused", ingest={"wal_dir": wal_dir, **ingest})
    app = create_app(settings, store)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started:
        if time.time() > deadline or not thread.is_alive():
            raise RuntimeError("test server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(20)
