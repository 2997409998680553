"""Ingest benchmark: concurrent OTLP/protobuf clients against ``flywheel serve``.

Workload: realistic GenAI spans (chat and execute_tool spans with messages,
tool arguments and results, usage; about 1 KB of attributes each) in requests
of --spans-per-request, sent by --clients concurrent connections from a
separate client process over loopback to a server on the embedded chDB store.
Reports spans/s acknowledged, p50/p99 acknowledgement latency, and the span
count verified in the store after the run (every acknowledged span exactly
once). Machine: 2 cores, 24 GiB (client and server share them).

    python bench/ingest.py [--clients 8] [--seconds 20] [--spans-per-request 500]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def make_body(seed: int, n: int) -> bytes:
    """One request of ``n`` GenAI spans (unique ids from ``seed``)."""
    rnd = random.Random(seed)
    req = ExportTraceServiceRequest()
    rs = req.resource_spans.add()
    for k, v in (("service.name", "support-agent"), ("deployment.environment", "prod")):
        a = rs.resource.attributes.add()
        a.key, a.value.string_value = k, v
    ss = rs.scope_spans.add()
    ss.scope.name = "opentelemetry.instrumentation.genai"
    trace_id = seed.to_bytes(16, "big")
    base = 1_764_000_000_000_000_000 + seed * 1_000_000
    for i in range(n):
        sp = ss.spans.add()
        sp.trace_id = trace_id
        sp.span_id = (seed * 10_000 + i + 1).to_bytes(8, "big")
        if i:
            sp.parent_span_id = (seed * 10_000 + 1).to_bytes(8, "big")
        sp.start_time_unix_nano = base + i * 1000
        sp.end_time_unix_nano = base + i * 1000 + rnd.randint(10**5, 10**9)
        sp.kind = 1
        if i % 2:
            sp.name = "execute_tool send_money"
            attrs = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "send_money",
                "gen_ai.tool.call.id": f"call_{seed}_{i}",
                "gen_ai.tool.call.arguments": json.dumps({
                    "recipient": f"GB{rnd.randint(10**19, 10**20)}", "amount": rnd.randint(1, 5000),
                    "subject": "Rent for " + rnd.choice(["March", "April", "May"]),
                    "date": "2026-11-30"}),
                "gen_ai.tool.call.result": json.dumps({
                    "status": "ok", "transaction_id": rnd.randint(1, 10**9),
                    "message": "Transfer scheduled. " + "x" * rnd.randint(400, 600)}),
            }
        else:
            sp.name = "chat gpt-4o"
            attrs = {
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                "gen_ai.response.model": "gpt-4o-2024-08-06",
                "gen_ai.usage.input_tokens": str(rnd.randint(100, 4000)),
                "gen_ai.usage.output_tokens": str(rnd.randint(10, 500)),
                "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{
                    "type": "text", "content": "Please pay my rent to the landlord. " + "y" * 500}]}]),
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{
                    "type": "tool_call", "name": "send_money", "arguments": {"amount": 1100}}]}]),
            }
        for k, v in attrs.items():
            a = sp.attributes.add()
            a.key, a.value.string_value = k, v
    return req.SerializeToString()


def client_proc(port: int, clients: int, seconds: float, spans: int, first_seed: int, out: mp.Queue) -> None:
    """Send pre-built bodies from ``clients`` threads for ``seconds``; report latencies."""
    pool = [make_body(first_seed + i, spans) for i in range(clients * 4)]
    results: list[tuple[float, int, int]] = []  # (latency, status, spans)
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds
    counter = [first_seed + len(pool)]

    def worker(k: int) -> None:
        with httpx.Client(timeout=30) as c:
            j = 0
            while time.perf_counter() < deadline:
                with lock:
                    seed = counter[0]
                    counter[0] += 1
                body = pool[(k * 4 + j) % len(pool)]
                j += 1
                # fresh ids: patch the trace id bytes by re-encoding only the seed part
                body = _reseed(body, seed)
                t0 = time.perf_counter()
                try:
                    r = c.post(f"http://127.0.0.1:{port}/v1/traces", content=body,
                               headers={"content-type": "application/x-protobuf"})
                    status = r.status_code
                except httpx.HTTPError:
                    status = 0
                with lock:
                    results.append((time.perf_counter() - t0, status, spans))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.put((time.perf_counter() - t0, results))


_RESEED_CACHE: dict[int, ExportTraceServiceRequest] = {}


def _reseed(body: bytes, seed: int) -> bytes:
    req = ExportTraceServiceRequest()
    req.ParseFromString(body)
    for rs in req.resource_spans:
        for ss in rs.scope_spans:
            for i, sp in enumerate(ss.spans):
                sp.trace_id = seed.to_bytes(16, "big")
                sp.span_id = (seed * 10_000 + i + 1).to_bytes(8, "big")
                if sp.parent_span_id:
                    sp.parent_span_id = (seed * 10_000 + 1).to_bytes(8, "big")
    return req.SerializeToString()


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
        q: mp.Queue = mp.Queue()
        p = mp.Process(target=client_proc, args=(port, args.clients, args.seconds,
                                                 args.spans_per_request, 10, q))
        p.start()
        elapsed, results = q.get()
        p.join()
        ok = [r for r in results if r[1] == 200]
        lat = sorted(r[0] for r in ok)
        acked = sum(r[2] for r in ok)
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
        "requests": len(results), "acked_requests": len(ok),
        "non_200": len(results) - len(ok),
        "spans_per_s": round(acked / elapsed),
        "p50_ms": round(lat[len(lat) // 2] * 1000, 1) if lat else None,
        "p99_ms": round(lat[int(len(lat) * 0.99) - 1] * 1000, 1) if lat else None,
        "acked_spans": acked, "stored_spans": stored, "duplicate_spans": dupes,
        "verified": stored == acked and dupes == 0,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        for k, v in figures.items():
            print(f"{k:>16}: {v}")


if __name__ == "__main__":
    main()
