"""Fuzz run: N generated OTLP bodies against a live ``flywheel serve``.

Bodies come from the hypothesis strategies of tests/ingest/otlp_strategies.py
(valid, bit-flipped, truncated and garbage protobuf and JSON, gzip or not,
wrong content types, deep nesting). The server starts as production does:
``flywheel serve`` with its decode pool (``--decode-workers``, default 1), so
bodies are decoded in spawned worker processes; the run checks the workers
exist and that the same worker processes are still there at the end (a body
that kills a worker would break the pool). Reports the status histogram; the
run fails if any answer is a 5xx or the server is not alive at the end.
Machine: 2 cores, 24 GiB, loopback.

    python bench/fuzz_otlp.py [--bodies 100000]
"""

from __future__ import annotations

import argparse
import collections
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from hypothesis import HealthCheck, Phase, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.ingest._server import free_port  # noqa: E402
from tests.ingest.otlp_strategies import otlp_bodies  # noqa: E402


def _children(pid: int) -> set[int]:
    """Child processes of ``pid``: the decode workers (the spawn resource tracker excluded)."""
    out: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            try:
                cmd = Path(f"/proc/{child}/cmdline").read_bytes()
            except OSError:
                continue
            if b"resource_tracker" not in cmd:
                out.add(int(child))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bodies", type=int, default=100_000)
    ap.add_argument("--decode-workers", type=int, default=1,
                    help="decode pool size, as `flywheel serve --decode-workers` "
                         "(0 = in the receiver)")
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLYWHEEL_")}
    tmp = Path(tempfile.mkdtemp(prefix="flywheel-fuzz-"))
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "flywheel", "--store", f"chdb://{tmp}/store", "serve",
         "--port", str(port), "--decode-workers", str(args.decode_workers)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
    workers_before = _children(server.pid)
    print(f"server pid {server.pid}, decode workers (child processes): {sorted(workers_before)}",
          flush=True)
    if args.decode_workers > 0 and len(workers_before) < args.decode_workers:
        server.send_signal(signal.SIGTERM)
        sys.exit(f"expected {args.decode_workers} decode workers under the server, "
                 f"found {workers_before}")
    counts: collections.Counter[int] = collections.Counter()
    fivexx: list[bytes] = []
    transport_retries = [0]
    client = httpx.Client(timeout=30)
    t0 = time.perf_counter()

    @settings(max_examples=args.bodies, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(otlp_bodies())
    def send(item: tuple[str, str, bytes]) -> None:
        ctype, encoding, body = item
        headers = {"content-type": ctype} if ctype else {}
        if encoding:
            headers["content-encoding"] = encoding
        try:
            r = client.post(f"{url}/v1/traces", content=body, headers=headers)
        except (httpx.ReadError, httpx.RemoteProtocolError, httpx.ConnectError):
            # a keep-alive connection the server closed while idle: resend once
            transport_retries[0] += 1
            r = client.post(f"{url}/v1/traces", content=body, headers=headers)
        counts[r.status_code] += 1
        if r.status_code >= 500:
            fivexx.append(body[:300])

    try:
        send()
        elapsed = time.perf_counter() - t0
        alive = server.poll() is None and httpx.get(f"{url}/healthz").status_code == 200
        workers_after = _children(server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
    print(f"workload: {sum(counts.values())} generated OTLP bodies, one client, loopback; "
          f"machine: 2 cores, 24 GiB")
    print(f"elapsed_s: {elapsed:.1f}")
    print(f"statuses: {dict(sorted(counts.items()))}")
    print(f"5xx: {len(fivexx)}  server_alive_at_end: {alive}  "
          f"resent_after_idle_connection_close: {transport_retries[0]}")
    print(f"decode workers: {args.decode_workers}  before: {sorted(workers_before)}  "
          f"after: {sorted(workers_after)}  same_workers: {workers_before == workers_after}")
    if fivexx or not alive:
        for b in fivexx[:5]:
            print("5xx body:", b)
        sys.exit(1)


if __name__ == "__main__":
    main()
