"""Fuzz run: N generated OTLP bodies against a live ``flywheel serve``.

Bodies come from the hypothesis strategies of tests/ingest/otlp_strategies.py
(valid, bit-flipped, truncated and garbage protobuf and JSON, gzip or not,
wrong content types, deep nesting). Reports the status histogram; the run
fails if any answer is a 5xx or the server is not alive at the end.
Machine: 2 cores, 24 GiB, loopback.

    python bench/fuzz_otlp.py [--bodies 100000]
"""

from __future__ import annotations

import argparse
import collections
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


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bodies", type=int, default=100_000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="flywheel-fuzz-"))
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "flywheel", "--store", f"chdb://{tmp}/store", "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.1)
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
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
    print(f"workload: {sum(counts.values())} generated OTLP bodies, one client, loopback; "
          f"machine: 2 cores, 24 GiB")
    print(f"elapsed_s: {elapsed:.1f}")
    print(f"statuses: {dict(sorted(counts.items()))}")
    print(f"5xx: {len(fivexx)}  server_alive_at_end: {alive}  "
          f"resent_after_idle_connection_close: {transport_retries[0]}")
    if fivexx or not alive:
        for b in fivexx[:5]:
            print("5xx body:", b)
        sys.exit(1)


if __name__ == "__main__":
    main()
