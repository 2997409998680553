"""Ingest benchmark: concurrent OTLP/protobuf clients against ``flywheel serve``.

Workload: realistic GenAI spans (chat and execute_tool spans with messages,
tool arguments and results, usage; about 1 KB of attributes each) in requests
of --spans-per-request, sent by --clients concurrent connections from a
separate client process over loopback to a server on the embedded chDB store.
Reports spans/s acknowledged, p50/p99 acknowledgement latency, and the span
count verified in the store after the run (every acknowledged span exactly
once). Machine: 2 cores, 24 GiB (client and server share them).

    python bench/ingest_throughput.py [--clients 8] [--seconds 20] [--spans-per-request 500]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _otlp_load import _free_port, make_body, run_load  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--spans-per-request", type=int, default=500)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="flywheel-bench-"))
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "flywheel", "--store", f"chdb://{tmp}/store", "serve",
         "--port", str(port), "--wal-dir", str(tmp / "wal")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        sample = make_body(1, args.spans_per_request)
        load = run_load(f"http://127.0.0.1:{port}/v1/traces", args.clients, args.seconds,
                        args.spans_per_request)
        acked = load["acked_spans"]
        metrics = httpx.get(f"http://127.0.0.1:{port}/metrics").text
        t_flush = time.perf_counter()
        while "flywheel_ingest_wal_lag_bytes 0" not in metrics and time.perf_counter() - t_flush < 120:
            time.sleep(0.2)
            metrics = httpx.get(f"http://127.0.0.1:{port}/metrics").text
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(60)
    code = ("import sys; from flywheel import open_store; s=open_store(sys.argv[1]);"
            "print(s.scalar('SELECT count() FROM otel_traces'),"
            " s.scalar('SELECT count() - uniqExact(SpanId) FROM otel_traces'))")
    out = subprocess.run([sys.executable, "-c", code, f"chdb://{tmp}/store"], capture_output=True,
                         text=True, check=True).stdout.split()
    stored, dupes = int(out[0]), int(out[1])
    figures = {
        "workload": f"{args.clients} clients x {args.spans_per_request} GenAI spans/request "
                    f"(~{len(sample) // args.spans_per_request} B/span protobuf), {args.seconds}s",
        "machine": f"{os.cpu_count()} cores, loopback, chDB embedded store",
        **load, "stored_spans": stored, "duplicate_spans": dupes,
        "verified": stored == acked and dupes == 0,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for k, v in figures.items():
            print(f"{k:>16}: {v}")


if __name__ == "__main__":
    main()
